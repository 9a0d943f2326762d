//! opencode's `permission` configuration value and its translation into a
//! [`Ruleset`] (§3).
//!
//! A config is a bare action (`"allow"`), or a map from permission name to
//! either an action or a map from pattern to action. **Key order is
//! semantic**: rules are produced in the order the keys were written, and
//! later rules win. Like JavaScript objects, keys that look like array
//! indices (`"0"`, `"10"`) come first in ascending numeric order; this
//! reproduces opencode exactly.
//!
//! ```
//! use agentgate_permission::{from_config_with_home, PermissionConfig, evaluate, Action};
//! let config: PermissionConfig = serde_json::from_str(
//!     r#"{"*": "ask", "bash": {"*": "allow", "rm *": "deny"}, "read": {"~/.ssh/*": "deny"}}"#,
//! ).unwrap();
//! let rules = from_config_with_home(&config, "/home/me");
//! assert_eq!(rules[2].pattern, "rm *");
//! assert_eq!(rules[3].pattern, "/home/me/.ssh/*");
//! assert_eq!(evaluate("bash", "rm -rf x", &[&rules]).action, Action::Deny);
//! ```

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::rule::{Action, Rule, Ruleset};

/// The value of a permission key: one action for every pattern, or an
/// ordered map from pattern to action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PermissionValue {
    /// `"bash": "allow"`: the action for every pattern (`*`).
    Action(Action),
    /// `"bash": {"*": "ask", "git *": "allow"}`: per-pattern actions, in order.
    Patterns(IndexMap<String, Action>),
}

/// opencode's `permission` configuration value, order preserved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PermissionConfig {
    /// `"permission": "allow"`: normalised to `{"*": action}`.
    Action(Action),
    /// `"permission": {...}`: per-permission values, in order.
    Map(IndexMap<String, PermissionValue>),
}

impl Default for PermissionConfig {
    fn default() -> Self {
        PermissionConfig::Map(IndexMap::new())
    }
}

/// A configuration value that does not have the shape opencode accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission config at {path}: expected {expected}, found {found}")]
pub struct ConfigError {
    /// Where the bad value sits, e.g. `permission.bash["rm *"]`.
    pub path: String,
    /// The form that was expected there.
    pub expected: String,
    /// A short description of what was found instead.
    pub found: String,
}

const ACTION_FORM: &str = "\"allow\", \"deny\" or \"ask\"";

/// A short description of a JSON value for error messages
/// (`string "nope"`, `number 3`, `an object` ...).
pub fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn key_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{key:?}]")
    }
}

fn action_at(value: &Value, path: &str, expected: &str) -> Result<Action, ConfigError> {
    let error = || ConfigError {
        path: path.to_string(),
        expected: expected.to_string(),
        found: describe_value(value),
    };
    match value {
        Value::String(s) => s.parse().map_err(|_| error()),
        _ => Err(error()),
    }
}

impl PermissionConfig {
    /// Validates a decoded JSON value. `root` names the value in error
    /// paths (usually `"permission"`).
    pub fn from_value(value: &Value, root: &str) -> Result<Self, ConfigError> {
        match value {
            Value::String(_) => Ok(PermissionConfig::Action(action_at(
                value,
                root,
                &format!("{ACTION_FORM} or an object of permissions"),
            )?)),
            Value::Object(map) => {
                let mut out = IndexMap::with_capacity(map.len());
                for (key, inner) in map {
                    let path = key_path(root, key);
                    let parsed = match inner {
                        Value::Object(patterns) => {
                            let mut rules = IndexMap::with_capacity(patterns.len());
                            for (pattern, action) in patterns {
                                let at = key_path(&path, pattern);
                                rules.insert(pattern.clone(), action_at(action, &at, ACTION_FORM)?);
                            }
                            PermissionValue::Patterns(rules)
                        }
                        other => PermissionValue::Action(action_at(
                            other,
                            &path,
                            &format!("{ACTION_FORM} or an object of pattern → action"),
                        )?),
                    };
                    out.insert(key.clone(), parsed);
                }
                Ok(PermissionConfig::Map(out))
            }
            other => Err(ConfigError {
                path: root.to_string(),
                expected: format!("{ACTION_FORM} or an object of permissions"),
                found: describe_value(other),
            }),
        }
    }
}

impl<'de> Deserialize<'de> for PermissionConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // serde_json's `preserve_order` keeps the written key order in `Value`.
        let value = Value::deserialize(deserializer)?;
        PermissionConfig::from_value(&value, "permission").map_err(serde::de::Error::custom)
    }
}

/// Whether a key is a JavaScript array index ("0", "42", not "01" or "-1"),
/// which JavaScript objects iterate first, in ascending order.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|n| *n != u32::MAX)
}

/// Iterates a map in JavaScript own-property order: array-index keys first
/// (ascending), then the other keys in insertion order.
fn js_order<V>(map: &IndexMap<String, V>) -> impl Iterator<Item = (&String, &V)> {
    let mut indexed: Vec<(u32, &String, &V)> = map
        .iter()
        .filter_map(|(k, v)| array_index(k).map(|n| (n, k, v)))
        .collect();
    indexed.sort_by_key(|(n, _, _)| *n);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(map.iter().filter(|(k, _)| array_index(k).is_none()))
}

/// Expands `~`, `~/...`, `$HOME` and `$HOME...` at the start of a pattern (§3.1).
pub fn expand_home(pattern: &str, home: &str) -> String {
    if pattern == "~" {
        home.to_string()
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if let Some(rest) = pattern.strip_prefix("$HOME") {
        format!("{home}{rest}")
    } else {
        pattern.to_string()
    }
}

/// The current user's home directory (`HOME`, or `USERPROFILE` on Windows).
pub fn home_dir() -> Option<String> {
    std::env::var("HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("USERPROFILE").ok().filter(|h| !h.is_empty()))
}

/// [`from_config_with_home`] with the current user's home directory. When no
/// home directory is known, `~` and `$HOME` patterns stay unexpanded.
pub fn from_config(config: &PermissionConfig) -> Ruleset {
    match home_dir() {
        Some(home) => from_config_with_home(config, &home),
        None => build(config, None),
    }
}

/// opencode's `fromConfig` (§3.1) with an explicit home directory: one rule
/// per string value (pattern `*`), one rule per inner entry of an object
/// value (pattern expanded), in key order.
pub fn from_config_with_home(config: &PermissionConfig, home: &str) -> Ruleset {
    build(config, Some(home))
}

fn build(config: &PermissionConfig, home: Option<&str>) -> Ruleset {
    let map = match config {
        PermissionConfig::Action(action) => {
            return Ruleset::from(vec![Rule::new("*", "*", *action)]);
        }
        PermissionConfig::Map(map) => map,
    };
    let mut rules = Ruleset::new();
    for (permission, value) in js_order(map) {
        match value {
            PermissionValue::Action(action) => {
                rules.push(Rule::new(permission.as_str(), "*", *action))
            }
            PermissionValue::Patterns(patterns) => {
                for (pattern, action) in js_order(patterns) {
                    let pattern = match home {
                        Some(home) => expand_home(pattern, home),
                        None => pattern.clone(),
                    };
                    rules.push(Rule::new(permission.as_str(), pattern, *action));
                }
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_path() {
        let value: Value = serde_json::from_str(r#"{"bash": {"rm *": "nope"}}"#).unwrap();
        let err = PermissionConfig::from_value(&value, "permission").unwrap_err();
        assert_eq!(err.path, "permission.bash[\"rm *\"]");
        assert!(err.to_string().contains("\"nope\""), "{err}");
        let value: Value = serde_json::from_str(r#"{"bash": 3}"#).unwrap();
        let err = PermissionConfig::from_value(&value, "permission").unwrap_err();
        assert_eq!(err.path, "permission.bash");
        assert_eq!(err.found, "number 3");
    }

    #[test]
    fn array_index_keys_come_first_like_javascript() {
        let config: PermissionConfig =
            serde_json::from_str(r#"{"b": "allow", "10": "deny", "2": "ask", "01": "allow"}"#)
                .unwrap();
        let rules = from_config_with_home(&config, "/h");
        let names: Vec<_> = rules.iter().map(|r| r.permission.as_str()).collect();
        assert_eq!(names, ["2", "10", "b", "01"]);
    }

    #[test]
    fn home_expansion() {
        assert_eq!(expand_home("~", "/h"), "/h");
        assert_eq!(expand_home("~/x", "/h"), "/h/x");
        assert_eq!(expand_home("$HOMEfoo/*", "/h"), "/hfoo/*");
        assert_eq!(expand_home("~user/x", "/h"), "~user/x");
        assert_eq!(expand_home("${HOME}/x", "/h"), "${HOME}/x");
    }
}
