//! Doom-loop detection: the model calling the same tool with the same
//! arguments over and over (§11.2).
//!
//! Two rules are provided:
//!
//! - [`check_message`] is opencode's, exactly: the last three parts of the
//!   current assistant message are non-pending calls of the same tool whose
//!   inputs serialise to the same JSON text (key order matters).
//! - [`check_turn`] is what the loop uses, a documented improvement: it
//!   looks at the tool calls of the **whole turn** (every step since the
//!   user's message), ignores text, reasoning and step parts in between,
//!   and compares inputs as JSON values (key order does not matter, i.e.
//!   canonical JSON with sorted keys). opencode creates a new assistant
//!   message per step, so a model that repeats one call per step, or
//!   narrates between calls, or reorders keys, was never caught.
//!
//! Both count the current call as the last of the three, and a pending
//! call (arguments still streaming) breaks the streak.

use agentgate_permission::{AskRequest, Ruleset};
use serde_json::Value;

#[cfg(any(test, feature = "test-util"))]
use crate::message::Part;
use crate::message::{ToolPart, ToolState};

/// How many identical calls in a row trigger the `doom_loop` ask.
pub const DOOM_LOOP_THRESHOLD: usize = 3;

/// The permission asked when a doom loop is detected.
pub const DOOM_LOOP_PERMISSION: &str = "doom_loop";

#[cfg(any(test, feature = "test-util"))]
/// opencode's check on the parts of the current assistant message, taken
/// after the current call (`tool`, `input`) was marked running.
pub fn check_message(parts: &[Part], tool: &str, input: &Value) -> bool {
    if parts.len() < DOOM_LOOP_THRESHOLD {
        return false;
    }
    let current = json_text(input);
    parts[parts.len() - DOOM_LOOP_THRESHOLD..]
        .iter()
        .all(|part| match part {
            Part::Tool(call) => {
                call.tool == tool
                    && !matches!(call.state, ToolState::Pending { .. })
                    && json_text(call.state.input()) == current
            }
            _ => false,
        })
}

/// The SDK's check over the tool calls of the whole turn, in order, ending
/// with the current call: the last [`DOOM_LOOP_THRESHOLD`] calls are
/// non-pending calls of `tool` whose inputs equal `input` as JSON values.
pub fn check_turn<'a, I>(calls: I, tool: &str, input: &Value) -> bool
where
    I: IntoIterator<Item = &'a ToolPart>,
    I::IntoIter: DoubleEndedIterator,
{
    let mut seen = 0;
    for call in calls.into_iter().rev().take(DOOM_LOOP_THRESHOLD) {
        if call.tool != tool
            || matches!(call.state, ToolState::Pending { .. })
            || call.state.input() != input
        {
            return false;
        }
        seen += 1;
    }
    seen == DOOM_LOOP_THRESHOLD
}

#[cfg(any(test, feature = "test-util"))]
/// [`check_turn`] over parts: the tool parts among `parts` (other parts
/// are skipped).
pub fn check_turn_parts(parts: &[Part], tool: &str, input: &Value) -> bool {
    check_turn(parts.iter().filter_map(Part::as_tool), tool, input)
}

/// The request the loop makes when a doom loop is detected (§11.2):
/// permission `doom_loop`, patterns and always `[tool]`, metadata
/// `{tool, input}`, evaluated against the **agent's** rules only (session
/// rules are deliberately not merged, as in opencode).
pub fn ask_request(
    session_id: &str,
    tool: &str,
    input: &Value,
    agent_permission: &Ruleset,
) -> AskRequest {
    AskRequest::new(session_id, DOOM_LOOP_PERMISSION, [tool])
        .always([tool])
        .metadata(serde_json::json!({ "tool": tool, "input": input }))
        .ruleset(agent_permission.clone())
}

#[cfg(any(test, feature = "test-util"))]
/// Canonical JSON text: object keys sorted, no whitespace. Two values are
/// equal as JSON values exactly when their canonical texts are equal.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

#[cfg(any(test, feature = "test-util"))]
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_text(&Value::String((*key).clone())));
                out.push(':');
                if let Some(v) = map.get(key.as_str()) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&json_text(other)),
    }
}

#[cfg(any(test, feature = "test-util"))]
fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(input: Value) -> ToolPart {
        ToolPart {
            id: "p".into(),
            call_id: "c".into(),
            tool: "read".into(),
            state: ToolState::Running {
                input,
                title: None,
                metadata: Value::Null,
                time: Default::default(),
            },
            provider_metadata: None,
        }
    }

    #[test]
    fn value_equality_is_canonical_equality() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": 2, "p": 3}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"p": 3, "q": 2}]}, "b": 1});
        assert_eq!(a, b);
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#
        );
    }

    #[test]
    fn turn_check_ignores_key_order_and_text() {
        let calls = [
            call(json!({"filePath": "/a", "limit": 5})),
            call(json!({"limit": 5, "filePath": "/a"})),
            call(json!({"filePath": "/a", "limit": 5})),
        ];
        assert!(check_turn(
            &calls,
            "read",
            &json!({"limit": 5, "filePath": "/a"})
        ));
        assert!(!check_turn(
            &calls[1..],
            "read",
            &json!({"filePath": "/a", "limit": 5})
        ));
    }
}
