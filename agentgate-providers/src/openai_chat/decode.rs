//! The Chat Completions stream → [`StreamEvent`]s: [`ChatDecoder`].
//!
//! Tool-call deltas are accumulated by their `index` and parsed when the
//! call is complete; `reasoning_content` (DeepSeek, vLLM) and `reasoning`
//! (OpenRouter, Ollama) deltas become reasoning blocks. A stream that ends
//! without `[DONE]` is an error unless the finish reason and the usage
//! chunk both arrived.

use agentgate_core::{FinishReason, ModelError, StreamEvent, ToolCall, Usage};
use serde_json::Value;

use super::wire::{Chunk, ChunkUsage, ContentChunk, DeltaContent, ToolCallDelta};
use crate::error_body::{Code, ErrorField, Text, is_overflow, stream_api_error};
use crate::http::{self, Decoder};
use crate::metadata::provider_metadata;
use crate::sse::SseEvent;

/// One tool call being accumulated from its deltas.
#[derive(Debug, Default)]
struct PendingCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    started: bool,
}

/// The Chat Completions stream state machine.
#[derive(Debug)]
pub(crate) struct ChatDecoder {
    provider: String,
    text_open: bool,
    reasoning_open: bool,
    blocks: usize,
    text_id: String,
    reasoning_id: String,
    calls: Vec<(u64, PendingCall)>,
    calls_flushed: bool,
    calls_emitted: usize,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl ChatDecoder {
    pub(crate) fn new(provider: String) -> Self {
        ChatDecoder {
            provider,
            text_open: false,
            reasoning_open: false,
            blocks: 0,
            text_id: String::new(),
            reasoning_id: String::new(),
            calls: Vec::new(),
            calls_flushed: false,
            calls_emitted: 0,
            finish: None,
            usage: None,
            done: false,
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<StreamEvent>) {
        if self.reasoning_open {
            self.reasoning_open = false;
            out.push(StreamEvent::ReasoningEnd {
                id: self.reasoning_id.clone(),
                provider_metadata: None,
            });
        }
    }

    fn close_text(&mut self, out: &mut Vec<StreamEvent>) {
        if self.text_open {
            self.text_open = false;
            out.push(StreamEvent::TextEnd {
                id: self.text_id.clone(),
                provider_metadata: None,
            });
        }
    }

    fn reasoning(&mut self, delta: &str, out: &mut Vec<StreamEvent>) {
        if !self.reasoning_open {
            self.close_text(out);
            self.reasoning_open = true;
            self.reasoning_id = format!("reasoning-{}", self.blocks);
            self.blocks += 1;
            out.push(StreamEvent::ReasoningStart {
                id: self.reasoning_id.clone(),
                provider_metadata: None,
            });
        }
        out.push(StreamEvent::ReasoningDelta {
            id: self.reasoning_id.clone(),
            delta: delta.to_string(),
        });
    }

    fn text(&mut self, delta: &str, out: &mut Vec<StreamEvent>) {
        if !self.text_open {
            self.close_reasoning(out);
            self.text_open = true;
            self.text_id = format!("text-{}", self.blocks);
            self.blocks += 1;
            out.push(StreamEvent::TextStart {
                id: self.text_id.clone(),
            });
        }
        out.push(StreamEvent::TextDelta {
            id: self.text_id.clone(),
            delta: delta.to_string(),
        });
    }

    fn tool_delta(&mut self, delta: ToolCallDelta, out: &mut Vec<StreamEvent>) {
        let index = delta.index.unwrap_or(0);
        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(slot) => slot,
            None => {
                self.calls.push((index, PendingCall::default()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot].1;
        // Set, never concatenate: some servers repeat id and name.
        if let Some(id) = delta.id.filter(|s| !s.is_empty())
            && !call.started
        {
            call.id = Some(id);
        }
        let function = delta.function.unwrap_or_default();
        if let Some(name) = function.name.filter(|s| !s.is_empty())
            && !call.started
        {
            call.name = Some(name);
        }
        // A string fragment normally; some servers send the whole
        // arguments as a JSON object instead.
        let fragment = match function.arguments {
            Some(Value::String(text)) => text,
            Some(Value::Null) | None => String::new(),
            Some(object) => object.to_string(),
        };
        call.arguments.push_str(&fragment);
        if !call.started
            && let Some(name) = call.name.clone()
        {
            call.started = true;
            let id = call
                .id
                .get_or_insert_with(|| format!("call-{index}"))
                .clone();
            out.push(StreamEvent::ToolInputStart {
                id: id.clone(),
                name,
            });
            if !call.arguments.is_empty() {
                out.push(StreamEvent::ToolInputDelta {
                    id,
                    delta: call.arguments.clone(),
                });
            }
        } else if call.started && !fragment.is_empty() {
            out.push(StreamEvent::ToolInputDelta {
                id: call.id.clone().unwrap_or_default(),
                delta: fragment,
            });
        }
    }

    /// Closes open blocks and emits the accumulated tool calls.
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_reasoning(out);
        self.close_text(out);
        if self.calls_flushed {
            return;
        }
        self.calls_flushed = true;
        self.calls.sort_by_key(|(i, _)| *i);
        for (index, call) in std::mem::take(&mut self.calls) {
            let id = call.id.unwrap_or_else(|| format!("call-{index}"));
            let Some(name) = call.name else {
                continue;
            };
            out.push(StreamEvent::ToolCall(ToolCall {
                id,
                name,
                input: http::parse_arguments(&call.arguments),
                provider_metadata: None,
            }));
            self.calls_emitted += 1;
        }
    }

    fn finish_event(&mut self, out: &mut Vec<StreamEvent>) {
        self.flush(out);
        let raw = self.finish.clone();
        let mut reason = match raw.as_deref() {
            Some("stop") => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
            Some("content_filter") => FinishReason::ContentFilter,
            Some("error") => FinishReason::Error,
            Some(_) => FinishReason::Other,
            None => FinishReason::Unknown,
        };
        // Some compatible servers say "stop" (or nothing) after tool calls.
        if self.calls_emitted > 0 && matches!(reason, FinishReason::Stop | FinishReason::Unknown) {
            reason = FinishReason::ToolCalls;
        }
        let provider_metadata = match (reason, raw) {
            (FinishReason::Other, Some(raw)) => Some(provider_metadata(
                &self.provider,
                &[("finishReason", raw.as_str())],
            )),
            _ => None,
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: self.usage.unwrap_or_default(),
            provider_metadata,
        });
        self.done = true;
    }

    fn stream_error(&self, error: &ErrorField, chunk: &Chunk, raw: &str) -> ModelError {
        let object = match error {
            ErrorField::Object(object) => Some(object),
            _ => None,
        };
        let message = match error {
            ErrorField::Object(o) => o.message.as_ref().map(Text::render),
            ErrorField::Text(s) => Some(s.clone()),
            ErrorField::Other(_) => None,
        }
        .or_else(|| chunk.message.clone())
        .unwrap_or_else(|| raw.to_string());
        let code = object.and_then(|o| o.code.as_ref());
        let code_str = code.and_then(|c| c.as_str());
        if is_overflow(code_str, &message) {
            return ModelError::ContextOverflow { message };
        }
        let kind = object.and_then(|o| o.kind.as_deref()).unwrap_or("");
        let numeric = code.and_then(|c| match c {
            Code::Number(n) => Some(*n),
            _ => None,
        });
        let retryable = matches!(kind, "server_error" | "rate_limit_exceeded" | "overloaded")
            || matches!(
                code_str,
                Some("rate_limit_exceeded" | "server_error" | "overloaded")
            )
            || numeric.is_some_and(|n| n == 429 || n >= 500);
        stream_api_error(message, retryable, raw)
    }
}

pub(crate) fn chat_usage(usage: &ChunkUsage) -> Usage {
    let prompt = usage.prompt_tokens.unwrap_or(0);
    let cached = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .unwrap_or(0);
    Usage {
        input: prompt.saturating_sub(cached),
        output: usage.completion_tokens.unwrap_or(0),
        reasoning: usage
            .completion_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens)
            .unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        total: usage.total_tokens.unwrap_or(0),
    }
}

impl Decoder for ChatDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish_event(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = http::parse_event(&self.provider, data)?;
        if let Some(error) = &chunk.error {
            return Err(self.stream_error(error, &chunk, data));
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(chat_usage(usage));
        }
        let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta
                .reasoning_content
                .filter(|t| !t.is_empty())
                .or(delta.reasoning.filter(|t| !t.is_empty()))
            {
                self.reasoning(&text, out);
            }
            match delta.content {
                Some(DeltaContent::Text(text)) if !text.is_empty() => self.text(&text, out),
                Some(DeltaContent::Chunks(chunks)) => {
                    for chunk in chunks {
                        match chunk {
                            ContentChunk::Text { text } if !text.is_empty() => {
                                self.text(&text, out)
                            }
                            ContentChunk::Thinking { thinking } => {
                                let text: String = thinking.into_iter().map(|t| t.text).collect();
                                if !text.is_empty() {
                                    self.reasoning(&text, out);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
                self.text(&text, out);
            }
            if let Some(calls) = delta.tool_calls {
                self.close_reasoning(out);
                self.close_text(out);
                for call in calls {
                    self.tool_delta(call, out);
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(reason);
            self.flush(out);
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        // A server that omits `[DONE]` but sent its finish reason and the
        // usage chunk has said everything; anything less is a cut stream.
        if self.finish.is_some() && self.usage.is_some() {
            self.finish_event(out);
            return Ok(());
        }
        Err(ModelError::interrupted(format!(
            "{} stream ended before [DONE]{}",
            self.provider,
            if self.finish.is_some() {
                " (finish reason seen, usage missing)"
            } else {
                ""
            }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_arguments_and_missing_ids() {
        let mut decoder = ChatDecoder::new("test".into());
        let mut out = Vec::new();
        let delta: ToolCallDelta = serde_json::from_value(
            json!({"index": 0, "function": {"name": "grep", "arguments": {"pattern": "x"}}}),
        )
        .unwrap_or_default();
        decoder.tool_delta(delta, &mut out);
        decoder.flush(&mut out);
        assert_eq!(
            out.last(),
            Some(&StreamEvent::ToolCall(ToolCall {
                id: "call-0".into(),
                name: "grep".into(),
                input: json!({"pattern": "x"}),
                provider_metadata: None,
            }))
        );
    }

    #[test]
    fn usage_subtracts_cached_tokens() {
        let usage: ChunkUsage = serde_json::from_value(json!({
            "prompt_tokens": 812, "completion_tokens": 58, "total_tokens": 870,
            "prompt_tokens_details": {"cached_tokens": 768},
            "completion_tokens_details": {"reasoning_tokens": 10},
        }))
        .unwrap_or_default();
        let usage = chat_usage(&usage);
        assert_eq!(usage.input, 44);
        assert_eq!(usage.cache_read, 768);
        assert_eq!(usage.output, 58);
        assert_eq!(usage.reasoning, 10);
        assert_eq!(usage.total, 870);
    }
}
