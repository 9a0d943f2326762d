//! [`AgentConfig`]: one agent's configuration (`agent.<name>` in
//! opencode.json, or a markdown agent's front-matter), its normalisation
//! (§3.3) and how configuration layers merge.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value};

use agentgate_permission::{Action, ConfigError, PermissionConfig, PermissionValue};

use super::agent::AgentMode;

/// Per-agent configuration (`agent.<name>` in opencode.json, or a markdown
/// agent's front-matter), after normalisation of legacy fields (§3.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentConfig {
    /// `model` as `provider/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// System prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Top-p.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// UI color.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Hidden flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Display name override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Step limit (`maxSteps` is accepted as an alias; `steps` wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// `disable: true` removes the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// Permission rules appended to the agent's ruleset (legacy `tools`
    /// entries folded in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionConfig>,
    /// Options, including every unknown key.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

fn err(path: &str, expected: &str, found: &Value) -> ConfigError {
    ConfigError {
        path: path.to_string(),
        expected: expected.to_string(),
        found: agentgate_permission::describe_value(found),
    }
}

impl AgentConfig {
    /// Parses and normalises one agent's config object: legacy `tools`
    /// (`true` → allow, `false` → deny; `write`/`edit`/`patch` → `edit`)
    /// become permissions under the explicit `permission` object (explicit
    /// values win, a key first seen in `tools` keeps its position);
    /// `maxSteps` is an alias for `steps`; unknown keys move to `options`.
    /// `path` names the object in error messages (e.g. `agent.review`).
    pub fn from_value(value: &Value, path: &str) -> Result<Self, ConfigError> {
        let Value::Object(map) = value else {
            return Err(err(path, "an object", value));
        };
        let mut config = AgentConfig::default();
        let string = |key: &str, v: &Value| -> Result<String, ConfigError> {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| err(&format!("{path}.{key}"), "a string", v))
        };
        let number = |key: &str, v: &Value| -> Result<f64, ConfigError> {
            v.as_f64()
                .ok_or_else(|| err(&format!("{path}.{key}"), "a number", v))
        };
        let count = |key: &str, v: &Value| -> Result<u32, ConfigError> {
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| err(&format!("{path}.{key}"), "a positive whole number", v))
        };
        let flag = |key: &str, v: &Value| -> Result<bool, ConfigError> {
            v.as_bool()
                .ok_or_else(|| err(&format!("{path}.{key}"), "true or false", v))
        };
        let mut max_steps = None;
        let mut tools: IndexMap<String, PermissionValue> = IndexMap::new();
        let mut explicit = None;
        for (key, v) in map {
            match key.as_str() {
                "model" => config.model = Some(string(key, v)?),
                "variant" => config.variant = Some(string(key, v)?),
                "prompt" => config.prompt = Some(string(key, v)?),
                "description" => config.description = Some(string(key, v)?),
                "color" => config.color = Some(string(key, v)?),
                "name" => config.name = Some(string(key, v)?),
                "temperature" => config.temperature = Some(number(key, v)?),
                "top_p" => config.top_p = Some(number(key, v)?),
                "steps" => config.steps = Some(count(key, v)?),
                "maxSteps" => max_steps = Some(count(key, v)?),
                "hidden" => config.hidden = Some(flag(key, v)?),
                "disable" => config.disable = Some(flag(key, v)?),
                "mode" => {
                    config.mode = Some(serde_json::from_value(v.clone()).map_err(|_| {
                        err(
                            &format!("{path}.mode"),
                            "\"primary\", \"subagent\" or \"all\"",
                            v,
                        )
                    })?)
                }
                "options" => match v {
                    Value::Object(o) => config.options.extend(o.clone()),
                    other => return Err(err(&format!("{path}.options"), "an object", other)),
                },
                "tools" => legacy_tools(v, path, &mut tools)?,
                "permission" => {
                    explicit = Some(PermissionConfig::from_value(
                        v,
                        &format!("{path}.permission"),
                    )?)
                }
                _ => {
                    config.options.insert(key.clone(), v.clone());
                }
            }
        }
        if config.steps.is_none() {
            config.steps = max_steps;
        }
        config.permission = merged_permission(tools, explicit);
        Ok(config)
    }
}

/// Reads an agent's legacy `tools` object (`path.tools`) into `tools`:
/// `true` → allow, `false` → deny; `write`/`edit`/`patch` → `edit`.
fn legacy_tools(
    value: &Value,
    path: &str,
    tools: &mut IndexMap<String, PermissionValue>,
) -> Result<(), ConfigError> {
    let Value::Object(t) = value else {
        return Err(err(
            &format!("{path}.tools"),
            "an object of tool → true/false",
            value,
        ));
    };
    for (tool, enabled) in t {
        let enabled = enabled
            .as_bool()
            .ok_or_else(|| err(&format!("{path}.tools.{tool}"), "true or false", enabled))?;
        let permission = match tool.as_str() {
            "write" | "edit" | "patch" => "edit",
            other => other,
        };
        let action = if enabled { Action::Allow } else { Action::Deny };
        tools.insert(permission.to_string(), PermissionValue::Action(action));
    }
    Ok(())
}

/// The permissions of the legacy `tools` under the explicit `permission`
/// object: explicit values win, a key first seen in `tools` keeps its
/// position.
fn merged_permission(
    mut tools: IndexMap<String, PermissionValue>,
    explicit: Option<PermissionConfig>,
) -> Option<PermissionConfig> {
    match (tools.is_empty(), explicit) {
        (true, explicit) => explicit,
        (false, None) => Some(PermissionConfig::Map(tools)),
        (false, Some(PermissionConfig::Map(explicit))) => {
            for (k, v) in explicit {
                tools.insert(k, v);
            }
            Some(PermissionConfig::Map(tools))
        }
        (false, Some(PermissionConfig::Action(action))) => {
            tools.insert("*".to_string(), PermissionValue::Action(action));
            Some(PermissionConfig::Map(tools))
        }
    }
}

/// Deep-merges `over` into `base` as opencode's config layers merge
/// (remeda `mergeDeep`): fields set in `over` replace those of `base`;
/// `options` merge recursively; `permission` merges per permission, and per
/// pattern where both sides are pattern maps (a key already in `base` keeps
/// its position, which matters because the last matching rule wins).
pub fn merge_agent_config(base: &mut AgentConfig, over: &AgentConfig) {
    // Destructured so that a new field cannot be forgotten here.
    let AgentConfig {
        model,
        variant,
        prompt,
        description,
        temperature,
        top_p,
        mode,
        color,
        hidden,
        name,
        steps,
        disable,
        permission,
        options,
    } = over;
    macro_rules! replace {
        ($($field:ident),*) => {$(
            if let Some(v) = $field { base.$field = Some(v.clone()); }
        )*};
    }
    replace!(
        model,
        variant,
        prompt,
        description,
        temperature,
        top_p,
        mode,
        color,
        hidden,
        name,
        steps,
        disable
    );
    merge_options(&mut base.options, options);
    match (&mut base.permission, permission) {
        (_, None) => {}
        (Some(PermissionConfig::Map(base_map)), Some(PermissionConfig::Map(over_map))) => {
            for (key, value) in over_map {
                match (base_map.get_mut(key), value) {
                    (Some(PermissionValue::Patterns(b)), PermissionValue::Patterns(o)) => {
                        for (pattern, action) in o {
                            b.insert(pattern.clone(), *action);
                        }
                    }
                    (Some(slot), value) => *slot = value.clone(),
                    (None, value) => {
                        base_map.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (slot, Some(over)) => *slot = Some(over.clone()),
    }
}

/// `mergeDeep` on JSON values (remeda, as opencode merges its config
/// layers): objects key by key (a key already in `base` keeps its
/// position), anything else replaces. The one deep merge of configuration
/// values.
pub fn merge_value(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(key) {
                    Some(existing) => merge_value(existing, value),
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

/// Deep-merges `over` into the option map `base` (per key, with
/// [`merge_value`]).
pub(super) fn merge_options(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (key, value) in over {
        match base.get_mut(key) {
            Some(existing) => merge_value(existing, value),
            None => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_normalisation() {
        let v: Value = serde_json::from_str(
            r#"{"tools": {"patch": true, "edit": false}, "maxSteps": 9, "x": 1}"#,
        )
        .unwrap();
        let c = AgentConfig::from_value(&v, "agent.a").unwrap();
        assert_eq!(c.steps, Some(9));
        assert_eq!(c.options["x"], 1);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["permission"], serde_json::json!({"edit": "deny"}));
        let bad: Value = serde_json::from_str(r#"{"steps": "ten"}"#).unwrap();
        let e = AgentConfig::from_value(&bad, "agent.a").unwrap_err();
        assert_eq!(e.path, "agent.a.steps");
    }
}
