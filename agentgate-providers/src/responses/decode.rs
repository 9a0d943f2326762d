//! The Responses stream → [`StreamEvent`]s: [`ResponsesDecoder`].
//!
//! The stream ends with `response.completed`, `response.incomplete` or
//! `response.failed`; a body that ends before one of them is an error.

use std::collections::HashMap;

use agentgate_core::{FinishReason, ModelError, ProviderMetadata, StreamEvent, ToolCall, Usage};

use super::PROVIDER;
use super::wire::{self, OutputItem, Response, ResponseUsage};
use crate::error_body::{is_overflow, stream_api_error};
use crate::http::{self, Decoder};
use crate::metadata::provider_metadata;
use crate::sse::SseEvent;

/// What an output item is.
#[derive(Debug)]
enum Kind {
    Message,
    Reasoning { summary_index: Option<u64> },
    Call { call_id: String, name: String },
}

/// An output item that has been announced and not yet finished, with the
/// id its events are reported under (the one it was announced with).
#[derive(Debug)]
struct Item {
    id: String,
    kind: Kind,
}

/// How events find their item: by `output_index`, which proxies that
/// rotate item ids (GitHub Copilot) keep stable; by item id when a server
/// leaves the index out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Index(u64),
    Id(String),
}

fn key(output_index: Option<u64>, item_id: &str) -> Key {
    match output_index {
        Some(index) => Key::Index(index),
        None => Key::Id(item_id.to_string()),
    }
}

/// The Responses stream state machine.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    items: HashMap<Key, Item>,
    calls: usize,
    done: bool,
}

fn meta(pairs: &[(&str, &str)]) -> ProviderMetadata {
    provider_metadata(PROVIDER, pairs)
}

fn responses_usage(usage: &ResponseUsage) -> Usage {
    let input = usage.input_tokens.unwrap_or(0);
    let cached = usage
        .input_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .unwrap_or(0);
    Usage {
        input: input.saturating_sub(cached),
        output: usage.output_tokens.unwrap_or(0),
        reasoning: usage
            .output_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens)
            .unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        total: usage.total_tokens.unwrap_or(0),
    }
}

/// An `error` event or a failed response's `error` object.
fn response_error(code: Option<&str>, message: Option<&str>, raw: &str) -> ModelError {
    let message = message
        .unwrap_or("the response failed without a message")
        .to_string();
    if is_overflow(code, &message) {
        return ModelError::ContextOverflow { message };
    }
    let retryable = matches!(
        code,
        Some("server_error" | "rate_limit_exceeded" | "server_is_overloaded" | "slow_down")
    );
    stream_api_error(message, retryable, raw)
}

impl ResponsesDecoder {
    fn item_added(&mut self, index: Option<u64>, item: OutputItem, out: &mut Vec<StreamEvent>) {
        let (id, kind) = match item {
            OutputItem::Message { id } => {
                out.push(StreamEvent::TextStart { id: id.clone() });
                (id, Kind::Message)
            }
            OutputItem::Reasoning { id, .. } => {
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: Some(meta(&[("itemId", &id)])),
                });
                (
                    id,
                    Kind::Reasoning {
                        summary_index: None,
                    },
                )
            }
            OutputItem::FunctionCall {
                id, call_id, name, ..
            } => {
                out.push(StreamEvent::ToolInputStart {
                    id: call_id.clone(),
                    name: name.clone(),
                });
                (id, Kind::Call { call_id, name })
            }
            OutputItem::Other => return,
        };
        self.items.insert(key(index, &id), Item { id, kind });
    }

    fn item_done(&mut self, index: Option<u64>, item: OutputItem, out: &mut Vec<StreamEvent>) {
        // The finished item's own id is the one to send back.
        let (item_id, encrypted, arguments) = match item {
            OutputItem::Message { id } => (id, None, String::new()),
            OutputItem::Reasoning {
                id,
                encrypted_content,
            } => (id, encrypted_content, String::new()),
            OutputItem::FunctionCall { id, arguments, .. } => (id, None, arguments),
            OutputItem::Other => return,
        };
        let Some(Item { id, kind }) = self.items.remove(&key(index, &item_id)) else {
            return;
        };
        match kind {
            Kind::Message => out.push(StreamEvent::TextEnd {
                id,
                provider_metadata: None,
            }),
            Kind::Reasoning { .. } => {
                let mut pairs = vec![("itemId", item_id.as_str())];
                if let Some(encrypted) = encrypted.as_deref() {
                    pairs.push(("encryptedContent", encrypted));
                }
                let provider_metadata = Some(meta(&pairs));
                out.push(StreamEvent::ReasoningEnd {
                    id,
                    provider_metadata,
                })
            }
            Kind::Call { call_id, name } => {
                self.calls += 1;
                out.push(StreamEvent::ToolCall(ToolCall {
                    id: call_id,
                    name,
                    input: http::parse_arguments(&arguments),
                    provider_metadata: Some(meta(&[("itemId", &item_id)])),
                }))
            }
        }
    }

    fn finish(&mut self, response: &Response, out: &mut Vec<StreamEvent>) {
        let status = response.status.as_deref().unwrap_or("");
        let incomplete = response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref())
            .unwrap_or("");
        let (reason, raw) = match (status, incomplete) {
            (_, "max_output_tokens") => (FinishReason::Length, None),
            (_, "content_filter") => (FinishReason::ContentFilter, None),
            ("completed", _) if self.calls > 0 => (FinishReason::ToolCalls, None),
            ("completed", _) => (FinishReason::Stop, None),
            (_, "") => (FinishReason::Other, Some(status)),
            (_, other) => (FinishReason::Other, Some(other)),
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: response
                .usage
                .as_ref()
                .map(responses_usage)
                .unwrap_or_default(),
            provider_metadata: raw.map(|raw| meta(&[("finishReason", raw)])),
        });
        self.done = true;
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let parsed: wire::StreamEvent = http::parse_event(PROVIDER, &event.data)?;
        match parsed {
            wire::StreamEvent::Created { response } => {
                if let Some(id) = response.id.filter(|id| !id.is_empty()) {
                    out.push(StreamEvent::ProviderMetadata {
                        metadata: meta(&[("responseId", &id)]),
                    });
                }
            }
            wire::StreamEvent::ItemAdded { output_index, item } => {
                self.item_added(output_index, item, out)
            }
            wire::StreamEvent::ItemDone { output_index, item } => {
                self.item_done(output_index, item, out)
            }
            wire::StreamEvent::TextDelta {
                item_id,
                output_index,
                delta,
            } => {
                if let Some(Item {
                    id,
                    kind: Kind::Message,
                }) = self.items.get(&key(output_index, &item_id))
                    && !delta.is_empty()
                {
                    out.push(StreamEvent::TextDelta {
                        id: id.clone(),
                        delta,
                    });
                }
            }
            wire::StreamEvent::ReasoningSummaryDelta {
                item_id,
                output_index,
                summary_index: index,
                delta,
            } => {
                if let Some(Item {
                    id,
                    kind: Kind::Reasoning { summary_index },
                }) = self.items.get_mut(&key(output_index, &item_id))
                {
                    // Summary parts of one item are separated by a blank line.
                    if summary_index.is_some() && *summary_index != index {
                        out.push(StreamEvent::ReasoningDelta {
                            id: id.clone(),
                            delta: "\n\n".into(),
                        });
                    }
                    *summary_index = index;
                    if !delta.is_empty() {
                        out.push(StreamEvent::ReasoningDelta {
                            id: id.clone(),
                            delta,
                        });
                    }
                }
            }
            wire::StreamEvent::ArgumentsDelta {
                item_id,
                output_index,
                delta,
            } => {
                if let Some(Item {
                    kind: Kind::Call { call_id, .. },
                    ..
                }) = self.items.get(&key(output_index, &item_id))
                    && !delta.is_empty()
                {
                    out.push(StreamEvent::ToolInputDelta {
                        id: call_id.clone(),
                        delta,
                    });
                }
            }
            wire::StreamEvent::Completed { response }
            | wire::StreamEvent::Incomplete { response } => self.finish(&response, out),
            wire::StreamEvent::Failed { response } => {
                let error = response.error.unwrap_or_default();
                return Err(response_error(
                    error.code.as_deref(),
                    error.message.as_deref(),
                    &event.data,
                ));
            }
            wire::StreamEvent::Error(error) => {
                let nested = error.error.unwrap_or_default();
                let code = nested.code.or(nested.kind).or(error.code);
                let message = nested.message.or(error.message);
                return Err(response_error(
                    code.as_deref(),
                    message.as_deref(),
                    &event.data,
                ));
            }
            wire::StreamEvent::Other => {}
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        Err(ModelError::interrupted(
            "openai responses stream ended before response.completed",
        ))
    }
}
