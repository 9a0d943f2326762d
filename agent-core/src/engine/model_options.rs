//! How an agent's `options` and `variant` reach the model request: keyed by
//! the model's provider (`ModelRequest::options[<provider>]`, merged into the
//! provider's request body), with opencode's option names mapped to the
//! provider's wire names.
//!
//! | agent option / variant | OpenAI and OpenAI-compatible | Anthropic | others |
//! |---|---|---|---|
//! | `reasoningEffort` | `reasoning_effort` | as written | as written |
//! | `textVerbosity` | `verbosity` | as written | as written |
//! | `parallelToolCalls` | `parallel_tool_calls` | as written | as written |
//! | `serviceTier` | `service_tier` | as written | as written |
//! | `thinking: {type, budgetTokens}` | as written | `thinking: {type, budget_tokens}` | as written |
//! | `variant` `minimal`/`low`/`medium`/`high` | `reasoning_effort` (unless set) | — | — |
//! | `variant` `high` / `max` | — | `thinking` with a 16 000 / 31 999 token budget (unless set) | — |
//! | any other key | as written | as written | as written |
//!
//! Temperature and top-p are request fields of their own
//! (`ModelRequest::temperature`, `top_p`).

use serde_json::{Map, Value, json};

use crate::model::ModelInfo;

/// The `ModelRequest::options` for an agent's `options` and `variant` on
/// `model` (see the table in this module's documentation); empty when
/// there is nothing to send.
pub fn provider_options(
    model: &ModelInfo,
    options: &Map<String, Value>,
    variant: Option<&str>,
) -> Map<String, Value> {
    let anthropic = model.provider == "anthropic";
    let openai_like = !anthropic && model.provider != "google";
    let mut mapped = Map::new();
    for (key, value) in options {
        let (name, value) = match key.as_str() {
            "reasoningEffort" if openai_like => ("reasoning_effort", value.clone()),
            "textVerbosity" if openai_like => ("verbosity", value.clone()),
            "parallelToolCalls" if openai_like => ("parallel_tool_calls", value.clone()),
            "serviceTier" if openai_like => ("service_tier", value.clone()),
            "thinking" if anthropic => ("thinking", snake_thinking(value)),
            other => (other, value.clone()),
        };
        mapped.insert(name.to_string(), value);
    }
    match variant {
        Some(effort @ ("minimal" | "low" | "medium" | "high")) if openai_like => {
            mapped
                .entry("reasoning_effort")
                .or_insert_with(|| Value::String(effort.to_string()));
        }
        Some(level @ ("high" | "max")) if anthropic => {
            let budget = if level == "max" { 31_999 } else { 16_000 };
            mapped
                .entry("thinking")
                .or_insert_with(|| json!({"type": "enabled", "budget_tokens": budget}));
        }
        _ => {}
    }
    let mut out = Map::new();
    if !mapped.is_empty() {
        out.insert(model.provider.clone(), Value::Object(mapped));
    }
    out
}

fn snake_thinking(value: &Value) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let key = if key == "budgetTokens" {
            "budget_tokens"
        } else {
            key.as_str()
        };
        out.insert(key.to_string(), value.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn openai_names_and_variant() {
        let info = ModelInfo::new("openai", "o3");
        let got = provider_options(
            &info,
            &options(json!({"reasoningEffort": "high", "store": false})),
            None,
        );
        assert_eq!(
            Value::Object(got),
            json!({"openai": {"reasoning_effort": "high", "store": false}})
        );
        let got = provider_options(&info, &Map::new(), Some("low"));
        assert_eq!(
            Value::Object(got),
            json!({"openai": {"reasoning_effort": "low"}})
        );
        assert!(provider_options(&info, &Map::new(), None).is_empty());
    }

    #[test]
    fn anthropic_thinking() {
        let info = ModelInfo::new("anthropic", "claude-sonnet-4-5");
        let got = provider_options(
            &info,
            &options(json!({"thinking": {"type": "enabled", "budgetTokens": 5000}})),
            Some("max"),
        );
        assert_eq!(
            Value::Object(got),
            json!({"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 5000}}})
        );
        let got = provider_options(&info, &Map::new(), Some("high"));
        assert_eq!(got["anthropic"]["thinking"]["budget_tokens"], 16_000);
    }
}
