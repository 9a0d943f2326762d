//! The `streamGenerateContent` stream → [`StreamEvent`]s:
//! [`GenerateDecoder`].
//!
//! Gemini sends function calls whole and without ids, so the decoder mints
//! call ids (`call_<responseId>_<n>`) and emits only
//! [`StreamEvent::ToolCall`] for them. The stream has no terminal event: it
//! is complete when a candidate carried a `finishReason` before the body
//! ended.

use agentgate_core::{FinishReason, ModelError, ProviderMetadata, StreamEvent, ToolCall, Usage};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::wire::{Chunk, ResponseFunctionCall, ResponsePart, UsageMetadata};
use crate::error_body::{is_overflow, stream_api_error};
use crate::http::{self, Decoder};
use crate::metadata::provider_metadata;
use crate::sse::SseEvent;

/// A call whose arguments are still streaming.
#[derive(Debug)]
struct PendingCall {
    id: Option<String>,
    name: String,
    args: Value,
    signature: Option<String>,
}

#[derive(Debug, PartialEq)]
enum Open {
    None,
    Text,
    Reasoning,
}

/// The streamGenerateContent state machine.
#[derive(Debug)]
pub(crate) struct GenerateDecoder {
    open: Open,
    block_id: String,
    block_signature: Option<String>,
    blocks: usize,
    calls: usize,
    pending: Option<PendingCall>,
    response_id: String,
    finish: Option<String>,
    blocked: bool,
    usage: Usage,
    done: bool,
}

impl Default for GenerateDecoder {
    fn default() -> Self {
        GenerateDecoder {
            open: Open::None,
            block_id: String::new(),
            block_signature: None,
            blocks: 0,
            calls: 0,
            pending: None,
            response_id: String::new(),
            finish: None,
            blocked: false,
            usage: Usage::default(),
            done: false,
        }
    }
}

fn google_meta(key: &str, value: &str) -> ProviderMetadata {
    provider_metadata(PROVIDER, &[(key, value)])
}

impl GenerateDecoder {
    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        let provider_metadata = self
            .block_signature
            .take()
            .map(|sig| google_meta("thoughtSignature", &sig));
        let id = self.block_id.clone();
        match self.open {
            Open::Text => out.push(StreamEvent::TextEnd {
                id,
                provider_metadata,
            }),
            Open::Reasoning => out.push(StreamEvent::ReasoningEnd {
                id,
                provider_metadata,
            }),
            Open::None => {}
        }
        self.open = Open::None;
    }

    fn open(&mut self, kind: Open, out: &mut Vec<StreamEvent>) {
        if self.open == kind {
            return;
        }
        self.close(out);
        let prefix = if kind == Open::Text {
            "text"
        } else {
            "reasoning"
        };
        self.block_id = format!("{prefix}-{}", self.blocks);
        self.blocks += 1;
        out.push(match kind {
            Open::Text => StreamEvent::TextStart {
                id: self.block_id.clone(),
            },
            _ => StreamEvent::ReasoningStart {
                id: self.block_id.clone(),
                provider_metadata: None,
            },
        });
        self.open = kind;
    }

    fn emit_call(
        &mut self,
        id: Option<String>,
        name: String,
        args: Value,
        signature: Option<String>,
        out: &mut Vec<StreamEvent>,
    ) {
        let id = id.unwrap_or_else(|| {
            if self.response_id.is_empty() {
                format!("call_{}", self.calls)
            } else {
                format!("call_{}_{}", self.response_id, self.calls)
            }
        });
        self.calls += 1;
        out.push(StreamEvent::ToolCall(ToolCall {
            id,
            name,
            input: args,
            provider_metadata: signature.map(|s| google_meta("thoughtSignature", &s)),
        }));
    }

    fn flush_pending(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(call) = self.pending.take() {
            self.emit_call(call.id, call.name, call.args, call.signature, out);
        }
    }

    fn function_call(
        &mut self,
        call: ResponseFunctionCall,
        sig: Option<String>,
        out: &mut Vec<StreamEvent>,
    ) {
        self.close(out);
        let args = call.args.unwrap_or_else(|| Value::Object(Map::new()));
        if let Some(name) = call.name.filter(|n| !n.is_empty()) {
            self.flush_pending(out);
            if call.will_continue == Some(true) {
                self.pending = Some(PendingCall {
                    id: call.id,
                    name,
                    args,
                    signature: sig,
                });
            } else {
                self.emit_call(call.id, name, args, sig, out);
            }
            return;
        }
        // A continuation: argument pieces, or the empty part that closes
        // the call. Without an open call there is nothing to add to.
        let Some(pending) = self.pending.as_mut() else {
            return;
        };
        let partial = call.partial_args.unwrap_or_default();
        let closes = call.will_continue != Some(true) && partial.is_empty();
        for arg in partial {
            if let Some(piece) = arg.string_value {
                set_at_path(&mut pending.args, &arg.json_path, |slot| match slot {
                    Value::String(s) => s.push_str(&piece),
                    other => *other = Value::String(piece.clone()),
                });
            } else {
                let value = match (arg.number_value, arg.bool_value, arg.null_value) {
                    (Some(n), _, _) => Value::Number(n),
                    (_, Some(b), _) => Value::Bool(b),
                    (_, _, Some(_)) => Value::Null,
                    _ => continue,
                };
                set_at_path(&mut pending.args, &arg.json_path, |slot| {
                    *slot = value.clone()
                });
            }
        }
        if closes {
            self.flush_pending(out);
        }
    }

    fn part(&mut self, part: ResponsePart, out: &mut Vec<StreamEvent>) {
        let sig = part.thought_signature;
        if let Some(call) = part.function_call {
            self.function_call(call, sig, out);
            return;
        }
        let Some(text) = part.text else {
            return;
        };
        let thought = part.thought == Some(true);
        self.open(if thought { Open::Reasoning } else { Open::Text }, out);
        if !text.is_empty() {
            let id = self.block_id.clone();
            out.push(if thought {
                StreamEvent::ReasoningDelta { id, delta: text }
            } else {
                StreamEvent::TextDelta { id, delta: text }
            });
        }
        if let Some(sig) = sig {
            self.block_signature = Some(sig);
        }
    }

    fn finish_event(&mut self, out: &mut Vec<StreamEvent>) {
        self.close(out);
        // Some streams end without the part that closes the last call.
        self.flush_pending(out);
        let raw = self.finish.clone().unwrap_or_default();
        let reason = match raw.as_str() {
            _ if self.blocked => FinishReason::ContentFilter,
            // Gemini says STOP for function calls too.
            "STOP" if self.calls > 0 => FinishReason::ToolCalls,
            "STOP" => FinishReason::Stop,
            "MAX_TOKENS" => FinishReason::Length,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "IMAGE_SAFETY" => FinishReason::ContentFilter,
            _ => FinishReason::Other,
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: self.usage,
            provider_metadata: (reason == FinishReason::Other)
                .then(|| google_meta("finishReason", &raw)),
        });
        self.done = true;
    }
}

/// One step of a `$.a.b[0]` path.
enum Step {
    Key(String),
    Index(usize),
}

/// The largest array index a streamed path may create (a bad index must
/// not allocate without bound).
const MAX_INDEX: usize = 4096;

fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            steps.push(Step::Key(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']")?;
            steps.push(Step::Key(after[..end].to_string()));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let index: usize = after[..end].trim().parse().ok()?;
            if index > MAX_INDEX {
                return None;
            }
            steps.push(Step::Index(index));
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// Applies `update` to the value at `path` in `root`, creating objects and
/// arrays on the way. A path that cannot be followed is ignored.
fn set_at_path(root: &mut Value, path: &str, update: impl FnOnce(&mut Value)) {
    let Some(steps) = parse_path(path) else {
        return;
    };
    let mut node = root;
    for step in steps {
        node = match step {
            Step::Key(key) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                match node {
                    Value::Object(map) => map.entry(key).or_insert(Value::Null),
                    _ => return,
                }
            }
            Step::Index(index) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                match node {
                    Value::Array(items) => {
                        if items.len() <= index {
                            items.resize(index + 1, Value::Null);
                        }
                        match items.get_mut(index) {
                            Some(item) => item,
                            None => return,
                        }
                    }
                    _ => return,
                }
            }
        };
    }
    update(node);
}

fn gemini_usage(usage: &UsageMetadata) -> Usage {
    let prompt = usage.prompt_token_count.unwrap_or(0);
    let cached = usage.cached_content_token_count.unwrap_or(0);
    let candidates = usage.candidates_token_count.unwrap_or(0);
    let thoughts = usage.thoughts_token_count.unwrap_or(0);
    Usage {
        input: prompt.saturating_sub(cached),
        // `output` includes reasoning; Gemini counts thoughts apart.
        output: candidates.saturating_add(thoughts),
        reasoning: thoughts,
        cache_read: cached,
        cache_write: 0,
        total: usage.total_token_count.unwrap_or(0),
    }
}

impl Decoder for GenerateDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let chunk: Chunk = http::parse_event(PROVIDER, &event.data)?;
        if let Some(error) = chunk.error {
            let message = error
                .message
                .unwrap_or_else(|| "Gemini reported an error without a message".into());
            if is_overflow(None, &message) {
                return Err(ModelError::ContextOverflow { message });
            }
            let retryable = matches!(error.status.as_deref(), Some("UNAVAILABLE" | "INTERNAL"));
            return Err(stream_api_error(message, retryable, &event.data));
        }
        if let Some(id) = chunk.response_id {
            self.response_id = id;
        }
        if let Some(usage) = &chunk.usage_metadata {
            self.usage = gemini_usage(usage);
        }
        if chunk
            .prompt_feedback
            .is_some_and(|f| f.block_reason.is_some())
        {
            self.blocked = true;
            self.finish = Some("BLOCKED".into());
        }
        if let Some(candidate) = chunk.candidates.and_then(|c| c.into_iter().next()) {
            for part in candidate.content.and_then(|c| c.parts).unwrap_or_default() {
                self.part(part, out);
            }
            if let Some(reason) = candidate.finish_reason {
                self.finish = Some(reason);
            }
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.finish.is_some() {
            self.finish_event(out);
            Ok(())
        } else {
            Err(ModelError::interrupted(
                "gemini stream ended before a finishReason",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_build_nested_arguments() {
        let mut args = json!({});
        set_at_path(&mut args, "$.recipe.ingredients[1].name", |v| {
            *v = json!("beef")
        });
        set_at_path(&mut args, "$['odd key']", |v| *v = json!(1));
        assert_eq!(
            args,
            json!({"recipe": {"ingredients": [null, {"name": "beef"}]}, "odd key": 1})
        );
        // Unfollowable or oversized paths change nothing.
        set_at_path(&mut args, "recipe", |v| *v = json!(2));
        set_at_path(&mut args, "$.a[99999999999]", |v| *v = json!(2));
        assert!(args.get("a").is_none());
    }
}
