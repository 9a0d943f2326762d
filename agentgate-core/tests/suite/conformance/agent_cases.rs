//! Conformance cases for agents (§9): `agent_defaults`,
//! `agent_config_normalize` and `agent_name_from_path`. Included by
//! `tests/conformance.rs`.

use agentgate_core::permission::{PermissionConfig, Ruleset};
use agentgate_core::{AgentConfig, AgentEnvironment, Agents, agent_files::agent_name_from_path};
use serde_json::Value;

/// The kinds this module answers.
pub const AGENT_KINDS: &[&str] = &[
    "agent_defaults",
    "agent_config_normalize",
    "agent_name_from_path",
];

fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("missing string field {key:?}"))
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether every key of `subset` is in `value` with an equal (recursively
/// subset) value; key order of objects is compared too.
fn is_subset(subset: &Value, value: &Value) -> bool {
    match (subset, value) {
        (Value::Object(s), Value::Object(v)) => s
            .iter()
            .all(|(k, sv)| v.get(k).is_some_and(|vv| is_subset(sv, vv))),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

/// Runs one agent case: `Ok` when it passes, `Err` with the mismatch.
pub fn run_agent_case(case: &Value) -> Result<(), String> {
    match case.get("kind").and_then(Value::as_str).unwrap_or_default() {
        "agent_defaults" => {
            let env_json = case.get("environment").ok_or("missing environment")?;
            let mut env = AgentEnvironment::new(
                text(env_json, "data_dir")?,
                text(env_json, "tmp_dir")?,
                text(env_json, "worktree")?,
            );
            env.skill_dirs = strings(env_json, "skill_dirs");
            env.reference_dirs = strings(env_json, "reference_dirs");
            env.home = Some("/home/u".to_string());
            let user = match case.get("user_config_permission") {
                Some(v) => {
                    PermissionConfig::from_value(v, "permission").map_err(|e| e.to_string())?
                }
                None => PermissionConfig::default(),
            };
            let agents = Agents::builtin(&env, &user);
            let name = text(case, "agent")?;
            let agent = agents
                .get(&name)
                .ok_or_else(|| format!("no agent {name}"))?;
            let expected: Ruleset =
                serde_json::from_value(case["expect"].clone()).map_err(|e| e.to_string())?;
            if agent.permission == expected {
                Ok(())
            } else {
                Err(format!(
                    "agent {name}: got {}, expected {}",
                    serde_json::to_string(&agent.permission).unwrap_or_default(),
                    serde_json::to_string(&expected).unwrap_or_default()
                ))
            }
        }
        "agent_config_normalize" => {
            let config =
                AgentConfig::from_value(case.get("input").ok_or("missing input")?, "agent.test")
                    .map_err(|e| e.to_string())?;
            let got = serde_json::to_value(&config).map_err(|e| e.to_string())?;
            let subset = case.get("expect_subset").ok_or("missing expect_subset")?;
            if is_subset(subset, &got) {
                Ok(())
            } else {
                Err(format!("got {got}, expected a superset of {subset}"))
            }
        }
        "agent_name_from_path" => {
            let prefixes = strings(case, "prefixes");
            let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
            let got = agent_name_from_path(&text(case, "relative_path")?, &prefixes);
            let expected = text(case, "expect")?;
            if got == expected {
                Ok(())
            } else {
                Err(format!("got {got:?}, expected {expected:?}"))
            }
        }
        other => Err(format!("kind {other} is not an agent kind")),
    }
}
