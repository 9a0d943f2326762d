//! The type checks of one config layer, each problem an error naming the
//! file and the key path it is about. Every layer is checked on its own
//! before it is merged, so an error never blames a file that did not write
//! the value, and every wrong value is reported, not only the first.

use agentgate_permission::{PermissionConfig, describe_value};
use serde_json::{Map, Value};

use super::error::{ConfigError, ConfigWarning};
use super::keys::{PROVIDER_KEYS, PROVIDER_OPTION_KEYS, unknown_keys};
use super::provider::ProviderConfig;
use crate::agents::AgentConfig;

/// The type checks of one layer's keys besides `agent`, `mode` and
/// `instructions` (parsed where they are merged): each problem is an error
/// naming the file and the key path.
pub(super) fn check_layer(
    layer: &Map<String, Value>,
    file: &str,
    warnings: &mut Vec<ConfigWarning>,
    errors: &mut Vec<ConfigError>,
) {
    for key in ["model", "small_model", "default_agent"] {
        match layer.get(key) {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(other) => errors.push(ConfigError::new(
                file,
                key,
                format!("expected a string, found {}", describe_value(other)),
            )),
        }
    }
    if let Some(permission) = layer.get("permission") {
        check_permission(permission, file, errors);
    }
    match layer.get("tools") {
        None => {}
        Some(Value::Object(tools)) => {
            for (name, on) in tools {
                if !on.is_boolean() {
                    errors.push(ConfigError::new(
                        file,
                        format!("tools.{name}"),
                        format!("expected true or false, found {}", describe_value(on)),
                    ));
                }
            }
        }
        Some(other) => errors.push(ConfigError::new(
            file,
            "tools",
            format!(
                "expected an object of tool name → true/false, found {}",
                describe_value(other)
            ),
        )),
    }
    match layer.get("provider") {
        None | Some(Value::Null) => {}
        Some(Value::Object(providers)) => {
            for (id, entry) in providers {
                let path = format!("provider.{id}");
                if let Value::Object(entry) = entry {
                    warnings.extend(unknown_keys(entry, PROVIDER_KEYS, file, &path));
                    if let Some(Value::Object(options)) = entry.get("options") {
                        let at = format!("{path}.options");
                        warnings.extend(unknown_keys(options, PROVIDER_OPTION_KEYS, file, &at));
                    }
                }
                if let Err((path, message)) = ProviderConfig::from_value(entry, &path) {
                    errors.push(ConfigError::new(file, path, message));
                }
            }
        }
        Some(other) => errors.push(ConfigError::new(
            file,
            "provider",
            format!(
                "expected an object of provider id → settings, found {}",
                describe_value(other)
            ),
        )),
    }
}

/// Checks a `permission` value, one error per top-level key that is wrong
/// (`source` names the file or the variable).
pub(super) fn check_permission(permission: &Value, source: &str, errors: &mut Vec<ConfigError>) {
    let report = |value: &Value| {
        PermissionConfig::from_value(value, "permission")
            .err()
            .map(|e| {
                ConfigError::new(
                    source,
                    e.path,
                    format!("expected {}, found {}", e.expected, e.found),
                )
            })
    };
    match permission {
        Value::Object(entries) => {
            for (key, value) in entries {
                let one = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
                errors.extend(report(&one));
            }
        }
        other => errors.extend(report(other)),
    }
}

/// Parses one `agent`/`mode` entry; when it is wrong, every wrong field is
/// an error (each field is checked on its own) and `None` is returned.
pub(super) fn parse_agent(
    entry: &Value,
    path: &str,
    file: &str,
    errors: &mut Vec<ConfigError>,
) -> Option<AgentConfig> {
    let whole = match AgentConfig::from_value(entry, path) {
        Ok(parsed) => return Some(parsed),
        Err(e) => e,
    };
    let as_error = |e: agentgate_permission::ConfigError| {
        ConfigError::new(
            file,
            e.path,
            format!("expected {}, found {}", e.expected, e.found),
        )
    };
    let before = errors.len();
    if let Value::Object(fields) = entry {
        for (key, value) in fields {
            let one = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
            if let Err(e) = AgentConfig::from_value(&one, path) {
                errors.push(as_error(e));
            }
        }
    }
    if errors.len() == before {
        errors.push(as_error(whole));
    }
    None
}
