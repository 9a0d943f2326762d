//! The `tracing` spans of a turn, named and filled as the OpenTelemetry
//! GenAI semantic conventions say (semantic-conventions v1.41.0, the
//! `gen_ai.*` registry and the agent and model spans, status
//! "Development"), so an OTLP backend shows a run as the tooling expects:
//!
//! - a turn is an `invoke_agent {agent}` span (`INTERNAL`), with the session
//!   id as `gen_ai.conversation.id`; a sub-agent's turn is one too, a child
//!   of the `task` call that started it;
//! - a model call (one step's stream, its retries included) is a
//!   `chat {model}` span (`CLIENT`) under the turn;
//! - a tool call is an `execute_tool {tool}` span under the turn.
//!
//! The permission gate's ask spans are in `agentgate-permission`.
//!
//! Every span is a plain `tracing` span with target [`TARGET`]: without a
//! subscriber that wants it, creating one costs a callsite check and no
//! field is computed (the values passed to the macros are evaluated only
//! for an enabled span; the later `record`s are no-ops on a disabled one).
//! Prompt and completion contents (`gen_ai.input.messages`,
//! `gen_ai.output.messages`, `gen_ai.system_instructions`) are recorded
//! only when [`LoopSettings::trace_contents`](super::LoopSettings) is on.
//!
//! Span names are set through the `otel.name` field and kinds through
//! `otel.kind`, the fields `tracing-opentelemetry` reads.

use serde_json::{Value, json};
use tracing::Span;
use tracing::field::Empty;

use agentgate_permission::PermissionError;

use crate::error::ModelError;
use crate::message::{Message, MessageError, Part};
use crate::model::{ContentPart, ModelMessage, ModelRequest, ModelRole};
use crate::stream::FinishReason;
use crate::usage::Usage;
use crate::{ToolError, ToolOutput};

/// The target of every GenAI span, for a subscriber's filter.
pub const TARGET: &str = "agentgate::gen_ai";

/// The span of one turn of `agent` in session `session_id`, on `provider`'s
/// `model`.
pub(super) fn invoke_agent(agent: &str, session_id: &str, provider: &str, model: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {agent}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = session_id,
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

/// Records a finished turn's usage, and its error if it failed.
pub(super) fn turn_ended(span: &Span, usage: &Usage, error: Option<&MessageError>) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    if let Some(error) = error {
        span.record("error.type", error.name.as_str());
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of one model call of `request` to `provider`'s `model`;
/// `contents`: the request's messages are recorded (opt-in).
pub(super) fn chat(provider: &str, model: &str, request: &ModelRequest, contents: bool) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.request.max_tokens = request.max_output_tokens,
        gen_ai.request.temperature = request.temperature,
        gen_ai.request.top_p = request.top_p,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
    );
    if contents && !span.is_disabled() {
        let system: Vec<Value> = request.system.iter().map(|text| text_part(text)).collect();
        span.record(
            "gen_ai.system_instructions",
            Value::Array(system).to_string(),
        );
        let messages: Vec<Value> = request.messages.iter().map(|m| input_message(m)).collect();
        span.record("gen_ai.input.messages", Value::Array(messages).to_string());
    }
    span
}

/// Records how a model call ended: the model that answered, why it
/// stopped and its tokens, or its error; `message` holds the parts it
/// produced (recorded only with `contents`).
pub(super) fn chat_ended(
    span: &Span,
    model: &str,
    outcome: Result<(FinishReason, &Usage), &ModelError>,
    message: &Message,
    contents: bool,
) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Ok((reason, usage)) => {
            span.record("gen_ai.response.model", model);
            let reasons = json!([finish_reason(reason)]).to_string();
            span.record("gen_ai.response.finish_reasons", reasons);
            record_usage(span, usage);
            if contents {
                let output = json!([output_message(message, reason)]).to_string();
                span.record("gen_ai.output.messages", output);
            }
        }
        Err(error) => {
            span.record("error.type", model_error_type(error).as_str());
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// The span of the call `call_id` of tool `tool`.
pub(super) fn execute_tool(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {tool}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        error.type = Empty,
    )
}

/// Records a failed tool call on the current span (an `execute_tool`
/// span: tool calls report their result inside theirs).
pub(super) fn tool_ended(result: &Result<ToolOutput, ToolError>) {
    let Err(error) = result else {
        return;
    };
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    let kind = match error {
        ToolError::InvalidArguments { .. } => "invalid_arguments",
        ToolError::Permission(PermissionError::Rejected) => "rejected",
        ToolError::Permission(PermissionError::Corrected { .. }) => "corrected",
        ToolError::Permission(PermissionError::Denied { .. }) => "denied",
        ToolError::Permission(_) => "permission",
        ToolError::Cancelled => "cancelled",
        _ => "failed",
    };
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// `gen_ai.usage.*` of `usage`: input tokens count the cached ones too,
/// as the conventions ask.
fn record_usage(span: &Span, usage: &Usage) {
    let input = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    // As i64: OpenTelemetry's integers are signed (a u64 would be
    // exported as text).
    span.record("gen_ai.usage.input_tokens", signed(input));
    span.record("gen_ai.usage.output_tokens", signed(usage.output));
}

/// `n` as an OpenTelemetry integer (saturating).
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The conventions' name of a finish reason.
fn finish_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_call",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Error => "error",
        _ => "other",
    }
}

/// A low-cardinality `error.type` of a failed model call: the HTTP
/// status of a provider's error, else the kind of failure.
fn model_error_type(error: &ModelError) -> String {
    match error {
        ModelError::Api(api) => api
            .status
            .map_or_else(|| "api_error".to_string(), |status| status.to_string()),
        ModelError::ContextOverflow { .. } => "context_overflow".into(),
        ModelError::Interrupted { .. } => "interrupted".into(),
        ModelError::Cancelled => "cancelled".into(),
        ModelError::TimedOut { .. } => "timeout".into(),
        ModelError::Unreachable { .. } => "unreachable".into(),
        _ => "_OTHER".into(),
    }
}

/// A text part in the conventions' message schema.
fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

/// One request message in the conventions' input-message schema.
fn input_message(message: &ModelMessage) -> Value {
    let role = match message.role {
        ModelRole::User => "user",
        ModelRole::Assistant => "assistant",
        ModelRole::Tool => "tool",
    };
    let parts: Vec<Value> = message
        .content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text, .. } => text_part(text),
            ContentPart::Reasoning { text, .. } => json!({"type": "reasoning", "content": text}),
            ContentPart::File { media_type, .. } => {
                json!({"type": "file", "mime_type": media_type})
            }
            ContentPart::ToolCall {
                id, name, input, ..
            } => json!({"type": "tool_call", "id": id, "name": name, "arguments": input}),
            ContentPart::ToolResult {
                call_id, output, ..
            } => json!({"type": "tool_call_response", "id": call_id, "response": output}),
        })
        .collect();
    json!({"role": role, "parts": parts})
}

/// The assistant message of a model call in the conventions'
/// output-message schema.
fn output_message(message: &Message, reason: FinishReason) -> Value {
    let parts: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text, .. } => Some(text_part(text)),
            Part::Reasoning { text, .. } => Some(json!({"type": "reasoning", "content": text})),
            Part::Tool(call) => Some(json!({
                "type": "tool_call",
                "id": call.call_id,
                "name": call.tool,
                "arguments": call.state.input(),
            })),
            _ => None,
        })
        .collect();
    json!({"role": "assistant", "parts": parts, "finish_reason": finish_reason(reason)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_use_the_conventions_names() {
        assert_eq!(finish_reason(FinishReason::ToolCalls), "tool_call");
        assert_eq!(finish_reason(FinishReason::Stop), "stop");
        assert_eq!(finish_reason(FinishReason::Unknown), "other");
    }

    #[test]
    fn a_tool_result_is_a_tool_call_response() {
        let message = ModelMessage {
            role: ModelRole::Tool,
            content: vec![ContentPart::ToolResult {
                call_id: "c1".into(),
                name: "read".into(),
                output: "ok".into(),
                is_error: false,
            }],
        };
        assert_eq!(
            input_message(&message),
            json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}]})
        );
    }

    #[test]
    fn without_a_subscriber_the_spans_are_disabled() {
        assert!(execute_tool("read", "c1").is_disabled());
    }
}
