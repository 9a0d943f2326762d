//! The ceiling on what one model step may stream: a model (or a broken
//! server) whose stream never ends must end the step with a clear error,
//! not grow the message until memory runs out.

use crate::error::ModelError;
use crate::stream::StreamEvent;

/// The default ceiling: far above any real step (a long answer is tens of
/// kilobytes), low enough that a runaway stream is stopped early.
pub const DEFAULT_MAX_STEP_BYTES: usize = 32 * 1024 * 1024;

/// Bytes an event adds to the step: its text, its arguments, and a little
/// for the event itself, so endless empty events are counted too.
pub(super) fn event_bytes(event: &StreamEvent) -> usize {
    const EVENT: usize = 16;
    EVENT
        + match event {
            StreamEvent::TextDelta { id, delta }
            | StreamEvent::ReasoningDelta { id, delta }
            | StreamEvent::ToolInputDelta { id, delta } => id.len() + delta.len(),
            StreamEvent::ToolInputStart { id, name } => id.len() + name.len(),
            StreamEvent::ToolCall(call) => call.id.len() + call.name.len() + json_len(&call.input),
            _ => 0,
        }
}

fn json_len(value: &serde_json::Value) -> usize {
    serde_json::to_string(value)
        .map(|text| text.len())
        .unwrap_or(0)
}

/// The error that ends a step past the ceiling. Never retried: the same
/// request would stream the same way.
pub(super) fn step_too_large(limit: usize) -> ModelError {
    ModelError::other(format!(
        "the model's step exceeded {} MB of streamed output and was stopped; \
         a stream that never ends points at a broken model server; check the provider's \
         `baseURL` and the server's logs (a program embedding the library sets the ceiling \
         with `LoopSettings::max_step_bytes`)",
        limit.div_ceil(1024 * 1024)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_count_their_text_and_every_event_counts() {
        let delta = StreamEvent::TextDelta {
            id: "t".into(),
            delta: "x".repeat(1000),
        };
        assert_eq!(event_bytes(&delta), 16 + 1 + 1000);
        let start = StreamEvent::TextStart { id: "t".into() };
        assert!(event_bytes(&start) > 0);
        assert!(
            step_too_large(DEFAULT_MAX_STEP_BYTES)
                .to_string()
                .starts_with("the model's step exceeded 32 MB")
        );
    }
}
