//! The Responses stream → [`StreamEvent`]s: [`ResponsesDecoder`].
//!
//! The stream ends with `response.completed`, `response.incomplete` or
//! `response.failed`; a body that ends before one of them is an error.

use std::collections::HashMap;

use agent_core::{FinishReason, ModelError, ProviderMetadata, StreamEvent, ToolCall, Usage};

use super::PROVIDER;
use super::wire::{self, OutputItem, Response, ResponseUsage};
use crate::error_body::{is_overflow, stream_api_error};
use crate::http::{self, Decoder};
use crate::metadata::provider_metadata;
use crate::sse::SseEvent;

/// An output item that has been announced and not yet finished.
#[derive(Debug)]
enum Item {
    Message,
    Reasoning { summary_index: Option<u64> },
    Call { call_id: String, name: String },
}

/// The Responses stream state machine.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    items: HashMap<String, Item>,
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
    fn item_added(&mut self, item: OutputItem, out: &mut Vec<StreamEvent>) {
        match item {
            OutputItem::Message { id } => {
                out.push(StreamEvent::TextStart { id: id.clone() });
                self.items.insert(id, Item::Message);
            }
            OutputItem::Reasoning { id, .. } => {
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: Some(meta(&[("itemId", &id)])),
                });
                self.items.insert(
                    id,
                    Item::Reasoning {
                        summary_index: None,
                    },
                );
            }
            OutputItem::FunctionCall {
                id, call_id, name, ..
            } => {
                out.push(StreamEvent::ToolInputStart {
                    id: call_id.clone(),
                    name: name.clone(),
                });
                self.items.insert(id, Item::Call { call_id, name });
            }
            OutputItem::Other => {}
        }
    }

    fn item_done(&mut self, item: OutputItem, out: &mut Vec<StreamEvent>) {
        let (id, encrypted, arguments) = match item {
            OutputItem::Message { id } => (id, None, String::new()),
            OutputItem::Reasoning {
                id,
                encrypted_content,
            } => (id, encrypted_content, String::new()),
            OutputItem::FunctionCall { id, arguments, .. } => (id, None, arguments),
            OutputItem::Other => return,
        };
        match self.items.remove(&id) {
            Some(Item::Message) => out.push(StreamEvent::TextEnd {
                id,
                provider_metadata: None,
            }),
            Some(Item::Reasoning { .. }) => {
                let mut pairs = vec![("itemId", id.as_str())];
                if let Some(encrypted) = encrypted.as_deref() {
                    pairs.push(("encryptedContent", encrypted));
                }
                let provider_metadata = Some(meta(&pairs));
                out.push(StreamEvent::ReasoningEnd {
                    id,
                    provider_metadata,
                })
            }
            Some(Item::Call { call_id, name }) => {
                self.calls += 1;
                out.push(StreamEvent::ToolCall(ToolCall {
                    id: call_id,
                    name,
                    input: http::parse_arguments(&arguments),
                    provider_metadata: Some(meta(&[("itemId", &id)])),
                }))
            }
            None => {}
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
            wire::StreamEvent::ItemAdded { item, .. } => self.item_added(item, out),
            wire::StreamEvent::ItemDone { item, .. } => self.item_done(item, out),
            wire::StreamEvent::TextDelta { item_id, delta, .. } => {
                if !delta.is_empty() {
                    out.push(StreamEvent::TextDelta { id: item_id, delta });
                }
            }
            wire::StreamEvent::ReasoningSummaryDelta {
                item_id,
                summary_index: index,
                delta,
                ..
            } => {
                if let Some(Item::Reasoning { summary_index }) = self.items.get_mut(&item_id) {
                    // Summary parts of one item are separated by a blank line.
                    if summary_index.is_some() && *summary_index != index {
                        out.push(StreamEvent::ReasoningDelta {
                            id: item_id.clone(),
                            delta: "\n\n".into(),
                        });
                    }
                    *summary_index = index;
                }
                if !delta.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { id: item_id, delta });
                }
            }
            wire::StreamEvent::ArgumentsDelta { item_id, delta, .. } => {
                if let Some(Item::Call { call_id, .. }) = self.items.get(&item_id)
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
                return Err(response_error(
                    error.code.as_deref(),
                    error.message.as_deref(),
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
