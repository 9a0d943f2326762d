//! How an agent's `options` and `variant` reach the model request: keyed by
//! the model's provider (`ModelRequest::options[<provider>]`, merged into the
//! provider's request body), with opencode's option names mapped to the
//! provider's wire names.
//!
//! | agent option / variant | `openai` (Responses API) | OpenAI-compatible (Chat Completions: ollama, vllm, openrouter, ...) | `anthropic` | `google` |
//! |---|---|---|---|---|
//! | `reasoningEffort` | `reasoning: {effort}` | `reasoning_effort` | as written | as written |
//! | `reasoningSummary` | `reasoning: {summary}` | as written | as written | as written |
//! | `textVerbosity` | `text: {verbosity}` | `verbosity` | as written | as written |
//! | `parallelToolCalls` | `parallel_tool_calls` | `parallel_tool_calls` | as written | as written |
//! | `serviceTier` | `service_tier` | `service_tier` | as written | as written |
//! | `thinking: {type, budgetTokens}` | as written | as written | `thinking: {type, budget_tokens}` | as written |
//! | `variant` `minimal`/`low`/`medium`/`high` | reasoning effort (unless set) | reasoning effort (unless set) | — | — |
//! | `variant` `high` / `max` | — | — | `thinking` with a 16 000 / 31 999 token budget (unless set) | — |
//! | any other key | as written | as written | as written | as written |
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
    let responses = model.provider == "openai";
    let chat = !anthropic && !responses && model.provider != "google";
    let mut mapped = Map::new();
    let nested = |mapped: &mut Map<String, Value>, outer: &str, inner: &str, value: &Value| {
        let slot = mapped
            .entry(outer.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(slot) = slot {
            slot.insert(inner.to_string(), value.clone());
        }
    };
    for (key, value) in options {
        match key.as_str() {
            "reasoningEffort" if responses => nested(&mut mapped, "reasoning", "effort", value),
            "reasoningSummary" if responses => nested(&mut mapped, "reasoning", "summary", value),
            "textVerbosity" if responses => nested(&mut mapped, "text", "verbosity", value),
            "reasoningEffort" if chat => {
                mapped.insert("reasoning_effort".into(), value.clone());
            }
            "textVerbosity" if chat => {
                mapped.insert("verbosity".into(), value.clone());
            }
            "parallelToolCalls" if responses || chat => {
                mapped.insert("parallel_tool_calls".into(), value.clone());
            }
            "serviceTier" if responses || chat => {
                mapped.insert("service_tier".into(), value.clone());
            }
            "thinking" if anthropic => {
                mapped.insert("thinking".into(), snake_thinking(value));
            }
            other => {
                mapped.insert(other.to_string(), value.clone());
            }
        }
    }
    match variant {
        Some(effort @ ("minimal" | "low" | "medium" | "high")) if responses => {
            let has_effort = mapped
                .get("reasoning")
                .is_some_and(|r| r.get("effort").is_some());
            if !has_effort {
                nested(
                    &mut mapped,
                    "reasoning",
                    "effort",
                    &Value::String(effort.into()),
                );
            }
        }
        Some(effort @ ("minimal" | "low" | "medium" | "high")) if chat => {
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
            Some("low"),
        );
        assert_eq!(
            Value::Object(got),
            json!({"openai": {"reasoning": {"effort": "high"}, "store": false}})
        );
        let got = provider_options(&info, &Map::new(), Some("low"));
        assert_eq!(
            Value::Object(got),
            json!({"openai": {"reasoning": {"effort": "low"}}})
        );
        assert!(provider_options(&info, &Map::new(), None).is_empty());
        let local = ModelInfo::new("ollama", "qwen3");
        let got = provider_options(&local, &options(json!({"reasoningEffort": "high"})), None);
        assert_eq!(
            Value::Object(got),
            json!({"ollama": {"reasoning_effort": "high"}})
        );
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
