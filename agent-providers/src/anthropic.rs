//! Anthropic Messages streaming client: [`Anthropic`].
//!
//! Request building follows opencode (§15): the system prompt sections go
//! out as text blocks, the first two marked as cache breakpoints, and the
//! last two conversation messages get a breakpoint on their last block.
//! Thinking blocks come back with their signature in
//! [`ProviderMetadata`] (`{"anthropic": {"signature": …}}`, or
//! `{"anthropic": {"redactedData": …}}` for redacted thinking) and are
//! sent back unchanged on the next request.

use std::collections::BTreeMap;

use agent_core::{
    ApiError, ContentPart, EventStream, FinishReason, LanguageModel, ModelError, ModelInfo,
    ModelMessage, ModelRequest, ModelRole, ProviderMetadata, StreamEvent, ToolCall, ToolChoice,
    Usage,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::http::{self, Decoder};
use crate::sse::SseEvent;

/// The Anthropic API base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The output cap used when neither the request nor the model declares
/// one, and the most requested by default (as opencode does).
pub const DEFAULT_MAX_TOKENS: u32 = 32_000;

/// The key of this provider's entries in [`ProviderMetadata`].
const PROVIDER: &str = "anthropic";

/// A streaming Anthropic Messages client (`POST {base_url}/messages`).
///
/// Provider options in `ModelRequest::options["anthropic"]` are merged
/// into the request body, e.g.
/// `{"thinking": {"type": "enabled", "budget_tokens": 8000}}` (with
/// thinking enabled, `temperature` and `top_p` are left out: the API
/// rejects them).
#[derive(Debug, Clone)]
pub struct Anthropic {
    info: ModelInfo,
    base_url: String,
    api_key: String,
    headers: Vec<(String, String)>,
    prompt_caching: bool,
    http: reqwest::Client,
    idle_timeout: Option<std::time::Duration>,
}

crate::http::client_builders!(Anthropic);

impl Anthropic {
    /// A client for `model` with this API key, against [`ANTHROPIC_BASE_URL`].
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        Anthropic {
            info: crate::registry::model_info(PROVIDER, &model.into()),
            base_url: ANTHROPIC_BASE_URL.to_string(),
            api_key: api_key.into(),
            headers: Vec::new(),
            prompt_caching: true,
            http: http::shared_client(),
            idle_timeout: None,
        }
    }

    /// A client with the key from `ANTHROPIC_API_KEY` and the base URL
    /// from `ANTHROPIC_BASE_URL` when set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let key = http::required_env(PROVIDER, "ANTHROPIC_API_KEY")?;
        let client = Anthropic::new(model, key);
        Ok(match http::env_nonempty("ANTHROPIC_BASE_URL") {
            Some(url) => client.with_base_url(url),
            None => client,
        })
    }

    /// Turns the §15 cache breakpoints on (the default) or off.
    pub fn with_prompt_caching(mut self, enabled: bool) -> Self {
        self.prompt_caching = enabled;
        self
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let cache = json!({"type": "ephemeral"});
        let system: Vec<Value> = request
            .system
            .iter()
            .filter(|s| !s.is_empty())
            .enumerate()
            .map(|(i, text)| {
                let mut block = json!({"type": "text", "text": text});
                if self.prompt_caching && i < 2 {
                    set(&mut block, "cache_control", cache.clone());
                }
                block
            })
            .collect();

        let count = request.messages.len();
        let mut messages: Vec<Value> = Vec::new();
        for (i, message) in request.messages.iter().enumerate() {
            let (role, mut blocks) = encode_message(message);
            if blocks.is_empty() {
                continue;
            }
            if self.prompt_caching && i + 2 >= count {
                mark_last_cacheable(&mut blocks, &cache);
            }
            match messages.last_mut() {
                Some(last) if last.get("role").and_then(Value::as_str) == Some(role) => {
                    if let Some(Value::Array(content)) = last.get_mut("content") {
                        content.extend(blocks);
                    }
                }
                _ => messages.push(json!({"role": role, "content": blocks})),
            }
        }

        let max_tokens = request.max_output_tokens.unwrap_or_else(|| {
            match u32::try_from(self.info.limits.output) {
                Ok(0) | Err(_) => DEFAULT_MAX_TOKENS,
                Ok(n) => n.min(DEFAULT_MAX_TOKENS),
            }
        });
        let mut body = json!({
            "model": self.info.id,
            "max_tokens": max_tokens,
            "stream": true,
            "messages": messages,
        });
        if !system.is_empty() {
            set(&mut body, "system", Value::Array(system));
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name, "description": t.description, "input_schema": t.parameters,
                    })
                })
                .collect();
            set(&mut body, "tools", Value::Array(tools));
            let choice = match &request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
            set(&mut body, "tool_choice", choice);
        }
        if let Some(t) = request.temperature {
            set(&mut body, "temperature", json!(t));
        }
        if let Some(p) = request.top_p {
            set(&mut body, "top_p", json!(p));
        }
        http::merge_options(&mut body, &request.options, PROVIDER);
        // Extended thinking rejects sampling settings (as the AI SDK does,
        // drop them rather than fail the call).
        if body.pointer("/thinking/type").and_then(Value::as_str) == Some("enabled")
            && let Value::Object(map) = &mut body
        {
            map.remove("temperature");
            map.remove("top_p");
        }
        body
    }
}

fn set(value: &mut Value, key: &str, field: Value) {
    if let Value::Object(map) = value {
        map.insert(key.to_string(), field);
    }
}

/// Puts a cache breakpoint on the last block that may carry one (thinking
/// blocks may not).
fn mark_last_cacheable(blocks: &mut [Value], cache: &Value) {
    if let Some(block) = blocks.iter_mut().rev().find(|b| {
        !matches!(
            b.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    }) {
        set(block, "cache_control", cache.clone());
    }
}

fn anthropic_meta<'a>(metadata: Option<&'a ProviderMetadata>, key: &str) -> Option<&'a str> {
    metadata?.get(PROVIDER)?.get(key)?.as_str()
}

/// A message's wire role and content blocks.
fn encode_message(message: &ModelMessage) -> (&'static str, Vec<Value>) {
    let role = match message.role {
        ModelRole::Assistant => "assistant",
        ModelRole::User | ModelRole::Tool => "user",
    };
    let blocks = message
        .content
        .iter()
        .filter_map(|part| match part {
            // The API rejects empty text blocks.
            ContentPart::Text { text, .. } if text.is_empty() => None,
            ContentPart::Text { text, .. } => Some(json!({"type": "text", "text": text})),
            ContentPart::Reasoning {
                text,
                provider_metadata,
            } => {
                let meta = provider_metadata.as_ref();
                if let Some(data) = anthropic_meta(meta, "redactedData") {
                    Some(json!({"type": "redacted_thinking", "data": data}))
                } else {
                    // Unsigned thinking (from another provider) cannot be
                    // sent back: the API rejects it.
                    anthropic_meta(meta, "signature").map(|signature| {
                        json!({"type": "thinking", "thinking": text, "signature": signature})
                    })
                }
            }
            ContentPart::File {
                media_type,
                url,
                filename,
            } => Some(file_block(media_type, url, filename.as_deref())),
            ContentPart::ToolCall {
                id, name, input, ..
            } => {
                // `input` must be an object; arguments that were not valid
                // JSON were already answered with an error result.
                let input = if input.is_object() {
                    input.clone()
                } else {
                    Value::Object(Map::new())
                };
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentPart::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": output});
                if *is_error {
                    set(&mut block, "is_error", Value::Bool(true));
                }
                Some(block)
            }
        })
        .collect();
    (role, blocks)
}

fn file_block(media_type: &str, url: &str, filename: Option<&str>) -> Value {
    let source = match url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
    {
        Some((header, data)) if header.ends_with(";base64") => {
            json!({"type": "base64", "media_type": media_type, "data": data})
        }
        _ => json!({"type": "url", "url": url}),
    };
    if media_type.starts_with("image/") {
        json!({"type": "image", "source": source})
    } else if media_type == "application/pdf" {
        json!({"type": "document", "source": source})
    } else {
        json!({"type": "text", "text": format!(
            "[attached file {} ({media_type}) cannot be sent to this API]",
            filename.unwrap_or(""),
        )})
    }
}

/// Retry decisions for Anthropic error types, on top of the status rules.
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

fn classify(api: &mut ApiError, json: Option<&Value>) {
    let kind = json
        .and_then(|j| j.pointer("/error/type"))
        .and_then(Value::as_str);
    // Status rules stay for everything else (409 conflict, 5xx).
    match kind {
        Some("billing_error") => api.is_retryable = false,
        Some("overloaded_error") => api.is_retryable = true,
        _ => {}
    }
}

#[async_trait::async_trait]
impl LanguageModel for Anthropic {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let body = self.request_body(&request);
        drop(request);
        let mut builder = self
            .http
            .post(format!("{}/messages", self.base_url))
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("accept", "text/event-stream")
            .json(&body);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let response = http::send(builder, &cancel, classify).await?;
        Ok(http::drive(
            response,
            MessagesDecoder::default(),
            cancel,
            self.idle_timeout,
        ))
    }
}

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
    },
}

/// The Messages stream state machine.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    started: bool,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

fn read_usage(usage: &Value, into: &mut Usage) {
    // Counts are cumulative: overwrite what is present, keep the rest.
    if let Some(n) = http::u64_at(usage, "/input_tokens") {
        into.input = n;
    }
    if let Some(n) = http::u64_at(usage, "/output_tokens") {
        into.output = n;
    }
    if let Some(n) = http::u64_at(usage, "/cache_read_input_tokens") {
        into.cache_read = n;
    }
    if let Some(n) = http::u64_at(usage, "/cache_creation_input_tokens") {
        into.cache_write = n;
    }
}

fn metadata(key: &str, value: &str) -> ProviderMetadata {
    let mut inner = Map::new();
    inner.insert(key.to_string(), Value::String(value.to_string()));
    let mut meta = Map::new();
    meta.insert(PROVIDER.to_string(), Value::Object(inner));
    meta
}

/// Maps an `error` event (or error body) to a [`ModelError`].
fn stream_error(json: &Value) -> ModelError {
    let kind = json
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = http::error_message(json).unwrap_or_else(|| json.to_string());
    if http::is_overflow(None, &message) {
        return ModelError::ContextOverflow { message };
    }
    ModelError::Api(ApiError {
        message,
        status: None,
        is_retryable: retryable_type(kind).unwrap_or(false),
        headers: None,
        body: Some(json.to_string()),
    })
}

impl MessagesDecoder {
    fn block_start(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(block) = data.get("content_block") else {
            return;
        };
        let str_field = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let open = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let id = format!("text-{index}");
                out.push(StreamEvent::TextStart { id: id.clone() });
                let text = str_field("text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        id: id.clone(),
                        delta: text,
                    });
                }
                Block::Text { id }
            }
            Some("thinking") => {
                let id = format!("reasoning-{index}");
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: None,
                });
                let text = str_field("thinking");
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        id: id.clone(),
                        delta: text,
                    });
                }
                Block::Thinking {
                    id,
                    signature: str_field("signature"),
                }
            }
            Some("redacted_thinking") => {
                let id = format!("reasoning-{index}");
                out.push(StreamEvent::ReasoningStart {
                    id: id.clone(),
                    provider_metadata: Some(metadata("redactedData", &str_field("data"))),
                });
                Block::Redacted { id }
            }
            Some("tool_use") => {
                let id = str_field("id");
                let name = str_field("name");
                out.push(StreamEvent::ToolInputStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::Tool {
                    id,
                    name,
                    json: String::new(),
                }
            }
            // Server tools, web search results, …: not part of this model.
            _ => return,
        };
        self.blocks.insert(index, open);
    }

    fn block_delta(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let (Some(block), Some(delta)) = (self.blocks.get_mut(&index), data.get("delta")) else {
            return;
        };
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or("");
        match (block, delta.get("type").and_then(Value::as_str)) {
            (Block::Text { id }, Some("text_delta")) if !text("text").is_empty() => {
                out.push(StreamEvent::TextDelta {
                    id: id.clone(),
                    delta: text("text").to_string(),
                })
            }
            (Block::Thinking { id, .. }, Some("thinking_delta"))
                if !text("thinking").is_empty() =>
            {
                out.push(StreamEvent::ReasoningDelta {
                    id: id.clone(),
                    delta: text("thinking").to_string(),
                })
            }
            (Block::Thinking { signature, .. }, Some("signature_delta")) => {
                signature.push_str(text("signature"))
            }
            (Block::Tool { id, json, .. }, Some("input_json_delta"))
                if !text("partial_json").is_empty() =>
            {
                json.push_str(text("partial_json"));
                out.push(StreamEvent::ToolInputDelta {
                    id: id.clone(),
                    delta: text("partial_json").to_string(),
                })
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
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
            Some(Block::Tool { id, name, json }) => out.push(StreamEvent::ToolCall(ToolCall {
                id,
                name,
                input: http::parse_arguments(&json),
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
            Some("tool_use") => FinishReason::ToolCalls,
            Some("refusal") => FinishReason::ContentFilter,
            Some(_) => FinishReason::Other,
            None => FinishReason::Unknown,
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: self.usage,
            provider_metadata: match (reason, raw) {
                (FinishReason::Other, Some(raw)) => Some(metadata("stopReason", &raw)),
                _ => None,
            },
        });
        self.done = true;
    }
}

impl Decoder for MessagesDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let data = http::parse_json(PROVIDER, &event.data)?;
        // `data.type` repeats the event name; prefer it (some proxies drop `event:`).
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(usage) = data.pointer("/message/usage") {
                    read_usage(usage, &mut self.usage);
                }
            }
            "content_block_start" => self.block_start(&data, out),
            "content_block_delta" => self.block_delta(&data, out),
            "content_block_stop" => self.block_stop(&data, out),
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    read_usage(usage, &mut self.usage);
                }
            }
            "message_stop" => self.finish(out),
            "error" => return Err(stream_error(&data)),
            _ => {} // ping and future event types
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
