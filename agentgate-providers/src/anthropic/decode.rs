//! The Messages stream → [`StreamEvent`]s: [`MessagesDecoder`].

use std::collections::BTreeMap;

use agentgate_core::{FinishReason, ModelError, ProviderMetadata, StreamEvent, ToolCall, Usage};
use serde_json::Value;

use super::PROVIDER;
use super::wire::{self, Delta, StartBlock, WireUsage};
use crate::error_body::{is_overflow, stream_api_error};
use crate::http::{self, Decoder};
use crate::metadata::provider_metadata;
use crate::sse::SseEvent;

/// An open content block, by its `index`.
#[derive(Debug)]
enum Block {
    Text {
        id: String,
    },
    Thinking {
        id: String,
        signature: String,
    },
    Redacted {
        id: String,
    },
    Tool {
        id: String,
        name: String,
        json: String,
        /// The input sent whole with the start, if any.
        input: Option<Value>,
    },
}

/// Block indexes for content that arrives inside `message_start`, far
/// from the stream's own (which count from 0).
const START_CONTENT_INDEX: u64 = 1 << 32;

/// The Messages stream state machine.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    started: bool,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

fn read_usage(usage: &WireUsage, into: &mut Usage) {
    // Counts are cumulative: overwrite what is present, keep the rest.
    if let Some(n) = usage.input_tokens {
        into.input = n;
    }
    if let Some(n) = usage.output_tokens {
        into.output = n;
    }
    if let Some(n) = usage.cache_read_input_tokens {
        into.cache_read = n;
    }
    if let Some(n) = usage.cache_creation_input_tokens {
        into.cache_write = n;
    }
}

fn metadata(key: &str, value: &str) -> ProviderMetadata {
    provider_metadata(PROVIDER, &[(key, value)])
}

/// Retry decisions for Anthropic error types.
fn retryable_type(kind: &str) -> Option<bool> {
    match kind {
        "overloaded_error" | "rate_limit_error" | "api_error" | "timeout_error" => Some(true),
        "billing_error"
        | "authentication_error"
        | "permission_error"
        | "invalid_request_error"
        | "not_found_error"
        | "request_too_large" => Some(false),
        _ => None,
    }
}

/// Maps an `error` event to a [`ModelError`].
fn stream_error(error: Option<wire::StreamError>, raw: &str) -> ModelError {
    let error = error.unwrap_or_default();
    let message = error.message.unwrap_or_else(|| raw.to_string());
    if is_overflow(None, &message) {
        return ModelError::ContextOverflow { message };
    }
    let retryable = error
        .kind
        .as_deref()
        .and_then(retryable_type)
        .unwrap_or(false);
    stream_api_error(message, retryable, raw)
}

/// Parses a payload; when `type` is missing (some proxies move it to the
/// `event:` line only), the event name stands in for it.
fn parse(event: &SseEvent) -> Result<wire::StreamEvent, ModelError> {
    match http::parse_event::<wire::StreamEvent>(PROVIDER, &event.data) {
        Ok(parsed) => Ok(parsed),
        Err(error) => {
            let Some(name) = event.event.as_deref() else {
                return Err(error);
            };
            let Ok(serde_json::Value::Object(mut map)) =
                serde_json::from_str::<serde_json::Value>(&event.data)
            else {
                return Err(error);
            };
            if map.contains_key("type") {
                return Err(error);
            }
            map.insert("type".into(), name.into());
            serde_json::from_value(serde_json::Value::Object(map)).map_err(|_| error)
        }
    }
}

impl MessagesDecoder {
    fn block_start(&mut self, index: u64, block: StartBlock, out: &mut Vec<StreamEvent>) {
        let open = match block {
            StartBlock::Text { text } => {
                let id = format!("text-{index}");
                out.push(StreamEvent::TextStart { id: id.clone() });
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        id: id.clone(),
                        delta: text,
                    });
                }
                Block::Text { id }
            }
            StartBlock::Thinking {
                thinking,
                signature,
            } => {
                let id = format!("reasoning-{index}");
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: None,
                });
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        id: id.clone(),
                        delta: thinking,
                    });
                }
                Block::Thinking { id, signature }
            }
            StartBlock::RedactedThinking { data } => {
                let id = format!("reasoning-{index}");
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: Some(metadata("redactedData", &data)),
                });
                Block::Redacted { id }
            }
            StartBlock::ToolUse { id, name, input } => {
                out.push(StreamEvent::ToolInputStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::Tool {
                    id,
                    name,
                    json: String::new(),
                    input: input.filter(|i| i.as_object().is_some_and(|o| !o.is_empty())),
                }
            }
            StartBlock::Other => return,
        };
        self.blocks.insert(index, open);
    }

    fn block_delta(&mut self, index: u64, delta: Delta, out: &mut Vec<StreamEvent>) {
        let Some(block) = self.blocks.get_mut(&index) else {
            return;
        };
        match (block, delta) {
            (Block::Text { id }, Delta::Text { text }) if !text.is_empty() => {
                out.push(StreamEvent::TextDelta {
                    id: id.clone(),
                    delta: text,
                })
            }
            (Block::Thinking { id, .. }, Delta::Thinking { thinking }) if !thinking.is_empty() => {
                out.push(StreamEvent::ReasoningDelta {
                    id: id.clone(),
                    delta: thinking,
                })
            }
            (Block::Thinking { signature, .. }, Delta::Signature { signature: part }) => {
                signature.push_str(&part)
            }
            (Block::Tool { id, json, .. }, Delta::InputJson { partial_json })
                if !partial_json.is_empty() =>
            {
                json.push_str(&partial_json);
                out.push(StreamEvent::ToolInputDelta {
                    id: id.clone(),
                    delta: partial_json,
                })
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, index: u64, out: &mut Vec<StreamEvent>) {
        match self.blocks.remove(&index) {
            Some(Block::Text { id }) => out.push(StreamEvent::TextEnd {
                id,
                provider_metadata: None,
            }),
            Some(Block::Thinking { id, signature }) => out.push(StreamEvent::ReasoningEnd {
                id,
                provider_metadata: (!signature.is_empty())
                    .then(|| metadata("signature", &signature)),
            }),
            Some(Block::Redacted { id }) => out.push(StreamEvent::ReasoningEnd {
                id,
                provider_metadata: None,
            }),
            Some(Block::Tool {
                id,
                name,
                json,
                input,
            }) => out.push(StreamEvent::ToolCall(ToolCall {
                id,
                name,
                // Streamed input wins; else the input sent with the start.
                input: match input {
                    Some(input) if json.trim().is_empty() => input,
                    _ => http::parse_arguments(&json),
                },
                provider_metadata: None,
            })),
            None => {}
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let raw = self.stop_reason.clone();
        let reason = match raw.as_deref() {
            Some("end_turn" | "stop_sequence") => FinishReason::Stop,
            Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
            // `pause_turn`: a long server-tool turn paused; sending the
            // conversation back continues it, so the loop must go on.
            Some("tool_use" | "pause_turn") => FinishReason::ToolCalls,
            Some("refusal") => FinishReason::ContentFilter,
            Some(_) => FinishReason::Other,
            None => FinishReason::Unknown,
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: self.usage,
            provider_metadata: match (reason, raw) {
                (FinishReason::Other, Some(raw)) => Some(metadata("stopReason", &raw)),
                (_, Some(raw)) if raw == "pause_turn" => Some(metadata("stopReason", &raw)),
                _ => None,
            },
        });
        self.done = true;
    }
}

impl Decoder for MessagesDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        match parse(&event)? {
            wire::StreamEvent::MessageStart { message } => {
                self.started = true;
                if let Some(usage) = &message.usage {
                    read_usage(usage, &mut self.usage);
                }
                if message.stop_reason.is_some() {
                    self.stop_reason = message.stop_reason;
                }
                // Content delivered whole: each block opens and closes at
                // once, after any block indexes the stream may use.
                for (i, block) in message.content.into_iter().enumerate() {
                    let index = START_CONTENT_INDEX + i as u64;
                    self.block_start(index, block, out);
                    self.block_stop(index, out);
                }
            }
            wire::StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.block_start(index, content_block, out),
            wire::StreamEvent::ContentBlockDelta { index, delta } => {
                self.block_delta(index, delta, out)
            }
            wire::StreamEvent::ContentBlockStop { index } => self.block_stop(index, out),
            wire::StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = &usage {
                    read_usage(usage, &mut self.usage);
                }
            }
            wire::StreamEvent::MessageStop => self.finish(out),
            wire::StreamEvent::Error { error } => return Err(stream_error(error, &event.data)),
            wire::StreamEvent::Other => {} // ping and future event types
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        Err(ModelError::interrupted(if self.started {
            "anthropic stream ended before message_stop"
        } else {
            "anthropic stream ended before message_start"
        }))
    }
}
