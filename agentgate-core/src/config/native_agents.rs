//! opencode's newer (V2) spellings in an `opencode.json`, lowered to the
//! keys this loader reads, per file, as opencode 1.18 does before it
//! validates a file:
//!
//! - `agents.<name>` (the V2 agent map) becomes `agent.<name>`: `system` is
//!   the `prompt`, `disabled` is `disable`, `model` may carry a variant
//!   (`provider/model#variant`, or `{providerID, model, variant}`),
//!   `request.body` is the `options`; `description`, `mode`, `hidden`,
//!   `color` and `steps` keep their names. Other keys are dropped. An entry
//!   the same file also names under `agent` keeps the `agent` one; an entry
//!   with a wrong field is skipped. Both are warnings, as in opencode.
//! - V2 `permissions` rule lists (top level, or in an `agent`, `mode` or
//!   `agents` entry) are errors: opencode's V1 engine rejects them, and
//!   ignoring a rule list would run without the rules the user wrote.

use serde_json::{Map, Value};

use super::error::{ConfigError, ConfigWarning};

/// Lowers `layer` (one file's top-level object) in place; `file` names it
/// in warnings and errors.
pub(super) fn lower_native_agents(
    layer: &mut Map<String, Value>,
    file: &str,
    warnings: &mut Vec<ConfigWarning>,
    errors: &mut Vec<ConfigError>,
) {
    reject_v2_permissions(layer, file, errors);
    let Some(native) = layer.remove("agents") else {
        return;
    };
    let warn = |warnings: &mut Vec<ConfigWarning>, path: String, message: String| {
        warnings.push(ConfigWarning {
            file: file.to_string(),
            path,
            message,
        });
    };
    let Value::Object(native) = native else {
        warn(
            warnings,
            "agents".into(),
            "expected an object of agent name → agent settings; ignored".into(),
        );
        return;
    };
    let mut agents = match layer.get("agent") {
        Some(Value::Object(agents)) => agents.clone(),
        // A wrong `agent` value is reported by the agent parser; leave it.
        Some(_) => return,
        None => Map::new(),
    };
    for (name, entry) in native {
        let path = format!("agents.{name}");
        if let Some(legacy) = agents.get(&name) {
            if *legacy != entry {
                warn(
                    warnings,
                    path,
                    format!(
                        "this file also sets agent.{name}: that entry is kept and this one ignored"
                    ),
                );
            }
            continue;
        }
        match lower_entry(&entry) {
            Ok(lowered) => {
                if entry.pointer("/request/headers").is_some() {
                    warn(
                        warnings,
                        format!("{path}.request.headers"),
                        "request headers of an agent are not supported; ignored".into(),
                    );
                }
                agents.insert(name, Value::Object(lowered));
            }
            Err(field) => warn(
                warnings,
                format!("{path}.{field}"),
                "malformed, so the whole agents entry is ignored (its fields: model, system, description, mode, hidden, color, steps, disabled, request)".into(),
            ),
        }
    }
    if !agents.is_empty() || layer.contains_key("agent") {
        layer.insert("agent".into(), Value::Object(agents));
    }
}

/// Every `permissions` rule list of the V2 format in `layer`.
fn reject_v2_permissions(layer: &Map<String, Value>, file: &str, errors: &mut Vec<ConfigError>) {
    let message = "V2 \"permissions\" rule lists are not supported (opencode's V1 engine rejects them too): write the rules as a \"permission\" map";
    if layer.contains_key("permissions") {
        errors.push(ConfigError::new(file, "permissions", message));
    }
    for key in ["agents", "agent", "mode"] {
        let Some(Value::Object(entries)) = layer.get(key) else {
            continue;
        };
        for (name, entry) in entries {
            if entry.get("permissions").is_some() {
                errors.push(ConfigError::new(
                    file,
                    format!("{key}.{name}.permissions"),
                    message,
                ));
            }
        }
    }
}

/// One V2 agent entry as an `agent` entry, or the field that is malformed.
fn lower_entry(entry: &Value) -> Result<Map<String, Value>, &'static str> {
    let Value::Object(entry) = entry else {
        return Err("(entry)");
    };
    let mut out = Map::new();
    let string = |key: &'static str| -> Result<Option<&String>, &'static str> {
        match entry.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(key),
        }
    };
    let boolean = |key: &'static str| -> Result<Option<bool>, &'static str> {
        match entry.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(key),
        }
    };
    if let Some(description) = string("description")? {
        out.insert("description".into(), description.clone().into());
    }
    if let Some(mode) = string("mode")? {
        if !matches!(mode.as_str(), "subagent" | "primary" | "all") {
            return Err("mode");
        }
        out.insert("mode".into(), mode.clone().into());
    }
    if let Some(hidden) = boolean("hidden")? {
        out.insert("hidden".into(), hidden.into());
    }
    if let Some(color) = string("color")? {
        let hex = color.strip_prefix('#').unwrap_or("");
        if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err("color");
        }
        out.insert("color".into(), color.clone().into());
    }
    if let Some(steps) = entry.get("steps") {
        match steps.as_u64() {
            Some(n) if n > 0 => {
                out.insert("steps".into(), n.into());
            }
            _ => return Err("steps"),
        }
    }
    if let Some(system) = string("system")? {
        out.insert("prompt".into(), system.clone().into());
    }
    if let Some(disabled) = boolean("disabled")? {
        out.insert("disable".into(), disabled.into());
    }
    if let Some(model) = entry.get("model") {
        let (model, variant) = lower_model(model).ok_or("model")?;
        out.insert("model".into(), model.into());
        if let Some(variant) = variant {
            out.insert("variant".into(), variant.into());
        }
    }
    if let Some(request) = entry.get("request") {
        let Value::Object(request) = request else {
            return Err("request");
        };
        match request.get("headers") {
            None => {}
            Some(Value::Object(headers)) if headers.values().all(Value::is_string) => {}
            Some(_) => return Err("request"),
        }
        match request.get("body") {
            None => {}
            Some(Value::Object(body)) => {
                out.insert("options".into(), Value::Object(body.clone()));
            }
            Some(_) => return Err("request"),
        }
    }
    Ok(out)
}

/// `provider/model#variant` or `{providerID, model, variant}` as the model
/// name and its variant; `None` when malformed.
fn lower_model(model: &Value) -> Option<(String, Option<String>)> {
    let plain = |s: &str, forbidden: &[char]| !s.is_empty() && !s.contains(forbidden);
    match model {
        Value::String(name) => {
            let (model, variant) = match name.split_once('#') {
                Some((model, variant)) => (model, Some(variant)),
                None => (name.as_str(), None),
            };
            let (provider, id) = model.split_once('/')?;
            let valid = plain(provider, &['#'])
                && plain(id, &['#'])
                && variant.is_none_or(|v| plain(v, &['#']));
            valid.then(|| (model.to_string(), variant.map(str::to_string)))
        }
        Value::Object(parts) => {
            let provider = parts.get("providerID")?.as_str()?;
            let id = parts.get("model")?.as_str()?;
            let variant = match parts.get("variant") {
                None => None,
                Some(v) => Some(v.as_str()?),
            };
            let valid = plain(provider, &['/', '#'])
                && plain(id, &['#'])
                && variant.is_none_or(|v| plain(v, &['#']));
            valid.then(|| (format!("{provider}/{id}"), variant.map(str::to_string)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn models_follow_opencodes_pattern() {
        let name = |v: Value| lower_model(&v);
        assert_eq!(name(json!("a/b/c")), Some(("a/b/c".into(), None)));
        assert_eq!(
            name(json!("a/b#hi")),
            Some(("a/b".into(), Some("hi".into())))
        );
        for bad in ["a", "/b", "a/", "a/b#", "a/b#x#y", "#a/b"] {
            assert_eq!(name(json!(bad)), None, "{bad}");
        }
        assert_eq!(
            name(json!({"providerID": "p", "model": "x/y"})),
            Some(("p/x/y".into(), None))
        );
        assert_eq!(name(json!({"providerID": "p/q", "model": "m"})), None);
        assert_eq!(name(json!({"model": "m"})), None);
    }
}
