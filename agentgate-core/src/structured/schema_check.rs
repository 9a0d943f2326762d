//! A JSON Schema checker for the subset of keywords final answers need
//! (see [`SUPPORTED_KEYWORDS`]). A schema using any other keyword is
//! refused when it is loaded, so nothing it says goes unchecked.

use serde_json::{Map, Value};

/// The keywords that are checked.
pub const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
];

/// Keywords that only describe (never constrain), accepted and ignored.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// Every keyword of `schema` (and its sub-schemas) that is neither
/// checked nor an annotation, as `path: keyword`.
pub(crate) fn unsupported(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        let here = format!("{path}/{key}");
        if !SUPPORTED_KEYWORDS.contains(&key.as_str()) && !ANNOTATIONS.contains(&key.as_str()) {
            out.push(format!("{path}: {key}"));
            continue;
        }
        match key.as_str() {
            "pattern" => {
                if let Err(why) = pattern_of(value) {
                    out.push(format!("{path}: pattern {value}: {why}"));
                }
            }
            "properties" | "$defs" | "definitions" => {
                if let Value::Object(children) = value {
                    for (name, child) in children {
                        unsupported(child, &format!("{here}/{name}"), out);
                    }
                }
            }
            "items" | "not" | "additionalProperties" => unsupported(value, &here, out),
            "anyOf" | "oneOf" | "allOf" => {
                if let Value::Array(children) = value {
                    for (i, child) in children.iter().enumerate() {
                        unsupported(child, &format!("{here}/{i}"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// What `value` breaks of `schema` (root `root`, for `$ref`), each as
/// `path: what is wrong`; empty when it is valid.
pub(crate) fn check(
    root: &Value,
    schema: &Value,
    value: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let map = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => {
            out.push(format!("{}: no value is allowed here", shown(path)));
            return;
        }
        Value::Object(map) => map,
        _ => return,
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        match resolve(root, reference) {
            Some(target) => check(root, target, value, path, out),
            None => out.push(format!(
                "{}: the schema's $ref {reference:?} names nothing",
                shown(path)
            )),
        }
    }
    if let Some(expected) = map.get("type")
        && !type_matches(expected, value)
    {
        out.push(format!(
            "{}: expected {}, found {}",
            shown(path),
            describe_type(expected),
            kind(value)
        ));
        return;
    }
    if let Some(Value::Array(options)) = map.get("enum")
        && !options.contains(value)
    {
        out.push(format!(
            "{}: expected one of {}, found {value}",
            shown(path),
            Value::Array(options.clone())
        ));
    }
    if let Some(constant) = map.get("const")
        && constant != value
    {
        out.push(format!(
            "{}: expected {constant}, found {value}",
            shown(path)
        ));
    }
    match value {
        Value::Object(object) => check_object(root, map, object, path, out),
        Value::Array(items) => check_array(root, map, items, path, out),
        Value::String(text) => {
            let length = text.chars().count() as u64;
            bound(map, "minLength", length, path, "characters", out);
            bound(map, "maxLength", length, path, "characters", out);
            if let Some(pattern) = map.get("pattern")
                && let Ok(regex) = pattern_of(pattern)
                && !regex.is_match(text)
            {
                let head: String = text.chars().take(80).collect();
                let cut = if head.len() < text.len() { "…" } else { "" };
                out.push(format!(
                    "{}: {head:?}{cut} does not match the pattern {pattern}",
                    shown(path)
                ));
            }
        }
        Value::Number(number) => check_number(map, number.as_f64().unwrap_or(f64::NAN), path, out),
        _ => {}
    }
    check_combinators(root, map, value, path, out);
}

/// Most compiled-program memory a schema's `pattern` may take (the
/// regex crate's own default is 10 MiB; a pattern for an answer's string
/// needs far less).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// A `pattern` keyword's regular expression. JSON Schema patterns are
/// unanchored (a match anywhere counts), as `Regex::is_match` is; one
/// using what this engine lacks (look-around, back-references) is refused
/// when the schema is loaded, with the reason.
fn pattern_of(value: &Value) -> Result<regex::Regex, String> {
    let Value::String(pattern) = value else {
        return Err("is not a string".into());
    };
    regex::RegexBuilder::new(pattern)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|error| format!("is not a regular expression this checker can run: {error}"))
}

fn check_object(
    root: &Value,
    map: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    if let Some(Value::Array(required)) = map.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                out.push(format!(
                    "{}: the required property {name:?} is missing",
                    shown(path)
                ));
            }
        }
    }
    let properties = map.get("properties").and_then(Value::as_object);
    for (name, child) in object {
        let here = format!("{path}/{name}");
        match properties.and_then(|p| p.get(name)) {
            Some(schema) => check(root, schema, child, &here, out),
            None => match map.get("additionalProperties") {
                None | Some(Value::Bool(true)) => {}
                Some(Value::Bool(false)) => out.push(format!(
                    "{}: the property {name:?} is not allowed",
                    shown(path)
                )),
                Some(schema) => check(root, schema, child, &here, out),
            },
        }
    }
}

fn check_array(
    root: &Value,
    map: &Map<String, Value>,
    items: &[Value],
    path: &str,
    out: &mut Vec<String>,
) {
    let count = items.len() as u64;
    bound(map, "minItems", count, path, "items", out);
    bound(map, "maxItems", count, path, "items", out);
    if let Some(schema) = map.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(root, schema, item, &format!("{path}/{i}"), out);
        }
    }
}

fn check_number(map: &Map<String, Value>, n: f64, path: &str, out: &mut Vec<String>) {
    let limit = |key: &str| map.get(key).and_then(Value::as_f64);
    let broken = [
        ("minimum", limit("minimum").filter(|m| n < *m), "at least"),
        ("maximum", limit("maximum").filter(|m| n > *m), "at most"),
        (
            "exclusiveMinimum",
            limit("exclusiveMinimum").filter(|m| n <= *m),
            "above",
        ),
        (
            "exclusiveMaximum",
            limit("exclusiveMaximum").filter(|m| n >= *m),
            "below",
        ),
    ];
    for (_, limit, words) in broken {
        if let Some(limit) = limit {
            out.push(format!(
                "{}: expected a number {words} {limit}, found {n}",
                shown(path)
            ));
        }
    }
}

fn check_combinators(
    root: &Value,
    map: &Map<String, Value>,
    value: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let passes = |schema: &Value| {
        let mut errors = Vec::new();
        check(root, schema, value, path, &mut errors);
        errors.is_empty()
    };
    if let Some(Value::Array(all)) = map.get("allOf") {
        for schema in all {
            check(root, schema, value, path, out);
        }
    }
    if let Some(Value::Array(any)) = map.get("anyOf")
        && !any.iter().any(passes)
    {
        out.push(format!(
            "{}: matches none of the anyOf schemas",
            shown(path)
        ));
    }
    if let Some(Value::Array(one)) = map.get("oneOf") {
        let matched = one.iter().filter(|s| passes(s)).count();
        if matched != 1 {
            out.push(format!(
                "{}: must match exactly one of the oneOf schemas, matches {matched}",
                shown(path)
            ));
        }
    }
    if let Some(not) = map.get("not")
        && passes(not)
    {
        out.push(format!("{}: matches the schema under `not`", shown(path)));
    }
}

/// `minX`/`maxX` of `map` against `count`.
fn bound(
    map: &Map<String, Value>,
    key: &str,
    count: u64,
    path: &str,
    unit: &str,
    out: &mut Vec<String>,
) {
    let Some(limit) = map.get(key).and_then(Value::as_u64) else {
        return;
    };
    let (broken, words) = if key.starts_with("min") {
        (count < limit, "at least")
    } else {
        (count > limit, "at most")
    };
    if broken {
        out.push(format!(
            "{}: expected {words} {limit} {unit}, found {count}",
            shown(path)
        ));
    }
}

/// The sub-schema a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`,
/// any JSON pointer into the root) names.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(name) => is_type(name, value),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|name| is_type(name, value)),
        _ => true,
    }
}

fn is_type(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => false,
    }
}

fn describe_type(expected: &Value) -> String {
    match expected {
        Value::String(name) => article(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(article)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.to_string(),
    }
}

fn article(name: &str) -> String {
    match name {
        "object" | "array" | "integer" => format!("an {name}"),
        "null" => "null".into(),
        _ => format!("a {name}"),
    }
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "the answer" } else { path }
}
