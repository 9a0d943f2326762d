//! The requests of `agent permission eval` as serde reads them: one variant
//! per `op`, each with its typed arguments. `eval` answers them.
//!
//! A field that has the wrong form is reported by name with the form it
//! must have (`field "rulesets" must be a list of rulesets ...: <why>`), and
//! a missing one with its form too, so a script's author can fix the line
//! without reading this file. When a line has several faults, the answer
//! names the first in the order [`ARGS`] lists the op's arguments (serde
//! alone would name a wrong field before a missing one, in input order).

use agentgate_permission::{PermissionConfig, Ruleset};
use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::{Map, Value};

/// Every op, in the order the help lists them.
pub const OPS: &str = "match, evaluate, compiled_evaluate, from_config, merge, disabled, arity, subagent_permission, explain, lint, bash";

/// One input line. Fields the op does not take (such as `id`) are ignored.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Whether `input` matches the wildcard `pattern`.
    Match {
        #[serde(deserialize_with = "field::input")]
        input: String,
        #[serde(deserialize_with = "field::pattern")]
        pattern: String,
    },
    /// The deciding rule for `permission` on `pattern`.
    Evaluate(Evaluate),
    /// The same, answered by `CompiledRuleset`.
    CompiledEvaluate(Evaluate),
    /// The rules of an opencode `permission` value.
    FromConfig {
        /// Read by `PermissionConfig::from_value`, which names the faulty
        /// key inside it.
        #[serde(deserialize_with = "field::config")]
        config: PermissionConfig,
        /// `~` and `$HOME` in patterns; the process's `$HOME` when absent.
        #[serde(default, deserialize_with = "field::home")]
        home: Option<String>,
    },
    /// The rulesets concatenated, in order.
    Merge {
        #[serde(deserialize_with = "field::rulesets")]
        rulesets: Vec<Ruleset>,
    },
    /// The tools `ruleset` hides from the model.
    Disabled {
        #[serde(deserialize_with = "field::tools")]
        tools: Vec<String>,
        #[serde(deserialize_with = "field::ruleset")]
        ruleset: Ruleset,
    },
    /// The command prefix of `tokens` that names the command.
    Arity {
        #[serde(deserialize_with = "field::tokens")]
        tokens: Vec<String>,
    },
    /// A sub-agent's rules derived from its parent's.
    SubagentPermission {
        #[serde(deserialize_with = "field::parent")]
        parent: Ruleset,
        #[serde(deserialize_with = "field::subagent")]
        subagent: Ruleset,
    },
    /// The decision and the rules behind it.
    Explain {
        #[serde(deserialize_with = "field::permission")]
        permission: String,
        #[serde(deserialize_with = "field::pattern")]
        pattern: String,
        #[serde(deserialize_with = "field::layers")]
        layers: Vec<LayerArg>,
    },
    /// The findings on `layers`; `known` defaults to the built-in names.
    Lint {
        #[serde(deserialize_with = "field::layers")]
        layers: Vec<LayerArg>,
        #[serde(default, deserialize_with = "field::known")]
        known: Option<Vec<String>>,
    },
    /// The requests the bash tool would make for `command`, unrun.
    Bash {
        #[serde(deserialize_with = "field::command")]
        command: String,
        #[serde(deserialize_with = "field::directory")]
        directory: String,
        #[serde(deserialize_with = "field::worktree")]
        worktree: String,
        #[serde(default, deserialize_with = "field::workdir")]
        workdir: Option<String>,
    },
}

/// The arguments of `evaluate` and `compiled_evaluate`.
#[derive(Debug, Deserialize)]
pub struct Evaluate {
    #[serde(deserialize_with = "field::permission")]
    pub permission: String,
    #[serde(deserialize_with = "field::pattern")]
    pub pattern: String,
    #[serde(deserialize_with = "field::rulesets")]
    pub rulesets: Vec<Ruleset>,
}

/// A layer as written in `explain` and `lint` requests.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerArg {
    pub name: String,
    #[serde(default)]
    pub source: Option<String>,
    pub rules: Ruleset,
}

const RULES: &str = "a list of rules {\"permission\", \"pattern\", \"action\"}";
const RULESETS: &str = "a list of rulesets (each a list of rules)";
const STRING: &str = "a string";
const STRINGS: &str = "a list of strings";
const LAYERS: &str = "a list of layers {\"name\", \"source\"?, \"rules\"}";
const CONFIG: &str = "an opencode permission value";

/// Each op's arguments in the order a faulty line is checked: the order of
/// the variant's fields, optional ones included.
pub const ARGS: &[(&str, &[&str])] = &[
    ("match", &["input", "pattern"]),
    ("evaluate", &["permission", "pattern", "rulesets"]),
    ("compiled_evaluate", &["permission", "pattern", "rulesets"]),
    ("from_config", &["config", "home"]),
    ("merge", &["rulesets"]),
    ("disabled", &["tools", "ruleset"]),
    ("arity", &["tokens"]),
    ("subagent_permission", &["parent", "subagent"]),
    ("explain", &["permission", "pattern", "layers"]),
    ("lint", &["layers", "known"]),
    ("bash", &["command", "directory", "worktree", "workdir"]),
];

/// Arguments that may be absent or null.
const OPTIONAL: &[&str] = &["home", "known", "workdir"];

/// Reads the request of a line whose `op` is one of [`OPS`]. The error
/// names the op, and the field when one is at fault.
pub fn parse(op: &str, request: Map<String, Value>) -> Result<Request, String> {
    let request = Value::Object(request);
    Request::deserialize(&request)
        .map_err(|e| first_fault(op, &request).unwrap_or_else(|| format!("{op}: {e}")))
}

/// The first missing or malformed argument of `op`, in [`ARGS`] order.
fn first_fault(op: &str, request: &Value) -> Option<String> {
    let (_, args) = ARGS.iter().find(|(name, _)| *name == op)?;
    args.iter().find_map(|&name| match request.get(name) {
        None if OPTIONAL.contains(&name) => None,
        None => Some(format!(
            "{op}: missing field \"{name}\" ({})",
            field::form(name).unwrap_or("a value")
        )),
        Some(value) => field::check(name, value).map(|e| format!("{op}: {e}")),
    })
}

/// One deserializer per argument name, which puts the name and the form it
/// must have into the error.
mod field {
    use super::*;

    macro_rules! fields {
        ($($name:ident: $ty:ty = $form:expr;)*) => {
            $(
                pub(super) fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                    <$ty>::deserialize(d).map_err(|e| {
                        D::Error::custom(format!(
                            "field \"{}\" must be {}: {e}",
                            stringify!($name),
                            $form
                        ))
                    })
                }
            )*

            /// The form argument `name` must have, for "missing field" errors.
            pub(super) fn form(name: &str) -> Option<&'static str> {
                match name {
                    $(stringify!($name) => Some($form),)*
                    "config" => Some(CONFIG),
                    "home" => Some("a string (a directory)"),
                    _ => None,
                }
            }

            /// Why `value` is not a valid argument `name`, if it is not.
            pub(super) fn check(name: &str, value: &Value) -> Option<String> {
                let error = match name {
                    $(stringify!($name) => $name(value).err(),)*
                    "config" => config(value).err(),
                    "home" => home(value).err(),
                    _ => None,
                };
                error.map(|e| e.to_string())
            }
        };
    }

    fields! {
        input: String = STRING;
        pattern: String = STRING;
        permission: String = STRING;
        command: String = STRING;
        directory: String = STRING;
        worktree: String = STRING;
        workdir: Option<String> = STRING;
        tools: Vec<String> = STRINGS;
        tokens: Vec<String> = STRINGS;
        known: Option<Vec<String>> = STRINGS;
        ruleset: Ruleset = RULES;
        parent: Ruleset = RULES;
        subagent: Ruleset = RULES;
        rulesets: Vec<Ruleset> = RULESETS;
        layers: Vec<LayerArg> = LAYERS;
    }

    /// An opencode `permission` value; its errors are
    /// `PermissionConfig::from_value`'s, which name the faulty key.
    pub(super) fn config<'de, D: Deserializer<'de>>(d: D) -> Result<PermissionConfig, D::Error> {
        let value = Value::deserialize(d)?;
        PermissionConfig::from_value(&value, "config").map_err(D::Error::custom)
    }

    /// A string or null; anything else is shown as it was written.
    pub(super) fn home<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(None),
            Value::String(home) => Ok(Some(home)),
            other => Err(D::Error::custom(format!(
                "field \"home\" must be a string (a directory), found {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A well-formed value for each argument name.
    fn valid(name: &str) -> Value {
        match name {
            "tools" | "tokens" | "known" => json!(["a"]),
            "ruleset" | "parent" | "subagent" | "layers" => json!([]),
            "rulesets" => json!([[]]),
            "config" => json!({"bash": "allow"}),
            _ => json!("x"),
        }
    }

    fn request(op: &str, args: &[&str]) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("op".into(), json!(op));
        for &name in args {
            map.insert(name.into(), valid(name));
        }
        map
    }

    #[test]
    fn args_lists_every_op_and_every_field_of_its_variant() {
        let ops: Vec<&str> = ARGS.iter().map(|(op, _)| *op).collect();
        assert_eq!(ops.join(", "), OPS);
        for (op, args) in ARGS {
            let full = request(op, args);
            assert!(parse(op, full.clone()).is_ok(), "{op}");
            for name in args.iter() {
                let mut without = full.clone();
                without.remove(*name);
                let serde_says = Request::deserialize(&Value::Object(without.clone()));
                if OPTIONAL.contains(name) {
                    assert!(serde_says.is_ok(), "{op}.{name} is optional");
                    continue;
                }
                let Err(e) = serde_says else {
                    panic!("{op} parsed without {name}");
                };
                assert_eq!(e.to_string(), format!("missing field `{name}`"));
                let Err(ours) = parse(op, without) else {
                    panic!("{op} parsed without {name}");
                };
                assert!(
                    ours.starts_with(&format!("{op}: missing field \"{name}\" (")),
                    "{ours}"
                );
            }
        }
    }

    #[test]
    fn the_first_fault_in_argument_order_is_named() {
        // A wrong `rulesets` comes after a missing `permission`.
        let mut map = request("evaluate", &["pattern"]);
        map.insert("rulesets".into(), json!("no"));
        assert_eq!(
            parse("evaluate", map).err().as_deref(),
            Some("evaluate: missing field \"permission\" (a string)")
        );
        // An invalid config comes before a wrong home.
        let mut map = request("from_config", &[]);
        map.insert("config".into(), json!({"bash": 1}));
        map.insert("home".into(), json!(3));
        let error = parse("from_config", map).err().unwrap_or_default();
        assert!(
            error.starts_with("from_config: invalid permission config at config.bash"),
            "{error}"
        );
    }

    #[test]
    fn optional_arguments_may_be_null() {
        for (op, name) in [
            ("from_config", "home"),
            ("lint", "known"),
            ("bash", "workdir"),
        ] {
            let args = ARGS.iter().find(|(o, _)| *o == op).map(|(_, a)| *a);
            let mut map = request(op, args.unwrap_or_default());
            map.insert(name.into(), Value::Null);
            assert!(parse(op, map).is_ok(), "{op}.{name}");
        }
    }
}
