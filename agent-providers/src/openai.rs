//! OpenAI Chat Completions streaming client, for OpenAI itself and every
//! server that speaks its dialect: [`OpenAiCompatible`].
//!
//! Requests are sent with `stream: true` and
//! `stream_options.include_usage`; tool-call deltas are accumulated by
//! their `index` and parsed when the call is complete; `reasoning_content`
//! (DeepSeek, vLLM) and `reasoning` (OpenRouter, Ollama) deltas become
//! reasoning blocks. A stream that ends without `[DONE]` is an error.

use agent_core::{
    ApiError, ContentPart, EventStream, FinishReason, LanguageModel, ModelError, ModelInfo,
    ModelMessage, ModelRequest, ModelRole, StreamEvent, ToolCall, ToolChoice, Usage,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::http::{self, Decoder};
use crate::sse::SseEvent;

/// The OpenAI API base URL.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Ollama's OpenAI-compatible endpoint on its default port.
pub const OLLAMA_BASE_URL: &str = "http://localhost:11434/v1";
/// vLLM's OpenAI-compatible server on its default port.
pub const VLLM_BASE_URL: &str = "http://localhost:8000/v1";
/// LM Studio's local server on its default port.
pub const LMSTUDIO_BASE_URL: &str = "http://localhost:1234/v1";
/// OpenRouter's API.
pub const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";

/// Which request field carries the output token cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaxTokensField {
    /// `max_tokens`: understood by every compatible server (Ollama ignores
    /// `max_completion_tokens` in older builds).
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI requires for reasoning models.
    MaxCompletionTokens,
}

/// A streaming Chat Completions client (`POST {base_url}/chat/completions`).
///
/// Build it with a preset ([`OpenAiCompatible::openai`],
/// [`OpenAiCompatible::ollama`], [`OpenAiCompatible::vllm`],
/// [`OpenAiCompatible::lmstudio`], [`OpenAiCompatible::openrouter`]) or
/// [`OpenAiCompatible::new`] for any other server, then adjust it with the
/// `with_*` methods. Provider options in `ModelRequest::options` under the
/// client's provider id (e.g. `"openai": {"reasoning_effort": "high"}`)
/// are merged into the request body.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    info: ModelInfo,
    base_url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    max_tokens_field: MaxTokensField,
    http: reqwest::Client,
    idle_timeout: Option<std::time::Duration>,
}

crate::http::client_builders!(OpenAiCompatible);

impl OpenAiCompatible {
    /// A client for `model` served by `provider` at `base_url` (the URL up
    /// to and including `/v1`), without an API key.
    pub fn new(
        provider: impl Into<String>,
        model: impl Into<String>,
        base_url: impl Into<String>,
    ) -> Self {
        let info = crate::registry::model_info(&provider.into(), &model.into());
        OpenAiCompatible {
            info,
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key: None,
            headers: Vec::new(),
            max_tokens_field: MaxTokensField::MaxTokens,
            http: http::shared_client(),
            idle_timeout: None,
        }
    }

    /// OpenAI itself: key from `OPENAI_API_KEY`, base URL from
    /// `OPENAI_BASE_URL` or [`OPENAI_BASE_URL`]; the cap is sent as
    /// `max_completion_tokens`.
    pub fn openai(model: impl Into<String>) -> Result<Self, ProviderError> {
        let key = http::required_env("openai", "OPENAI_API_KEY")?;
        let base = http::env_nonempty("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.into());
        Ok(OpenAiCompatible::new("openai", model, base)
            .with_api_key(key)
            .with_max_tokens_field(MaxTokensField::MaxCompletionTokens))
    }

    /// A local Ollama server: `OLLAMA_HOST` (`host:port` or a URL) when
    /// set, else [`OLLAMA_BASE_URL`]. No key is needed.
    pub fn ollama(model: impl Into<String>) -> Self {
        let base = http::env_nonempty("OLLAMA_HOST")
            .map(|host| ollama_base_url(&host))
            .unwrap_or_else(|| OLLAMA_BASE_URL.into());
        OpenAiCompatible::new("ollama", model, base)
    }

    /// A vLLM server: `VLLM_BASE_URL` or [`VLLM_BASE_URL`], with
    /// `VLLM_API_KEY` when set.
    pub fn vllm(model: impl Into<String>) -> Self {
        let base = http::env_nonempty("VLLM_BASE_URL").unwrap_or_else(|| VLLM_BASE_URL.into());
        let client = OpenAiCompatible::new("vllm", model, base);
        match http::env_nonempty("VLLM_API_KEY") {
            Some(key) => client.with_api_key(key),
            None => client,
        }
    }

    /// LM Studio's local server: `LMSTUDIO_BASE_URL` or
    /// [`LMSTUDIO_BASE_URL`], with `LMSTUDIO_API_KEY` when set.
    pub fn lmstudio(model: impl Into<String>) -> Self {
        let base =
            http::env_nonempty("LMSTUDIO_BASE_URL").unwrap_or_else(|| LMSTUDIO_BASE_URL.into());
        let client = OpenAiCompatible::new("lmstudio", model, base);
        match http::env_nonempty("LMSTUDIO_API_KEY") {
            Some(key) => client.with_api_key(key),
            None => client,
        }
    }

    /// OpenRouter: key from `OPENROUTER_API_KEY`, base URL
    /// [`OPENROUTER_BASE_URL`]. The model is OpenRouter's id, e.g.
    /// `anthropic/claude-sonnet-4.5`.
    pub fn openrouter(model: impl Into<String>) -> Result<Self, ProviderError> {
        let key = http::required_env("openrouter", "OPENROUTER_API_KEY")?;
        Ok(OpenAiCompatible::new("openrouter", model, OPENROUTER_BASE_URL).with_api_key(key))
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Chooses the field that carries the output token cap.
    pub fn with_max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut messages: Vec<Value> = request
            .system
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| json!({"role": "system", "content": s}))
            .collect();
        for message in request.messages.iter() {
            encode_message(message, &mut messages);
        }
        let mut body = json!({
            "model": self.info.id,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        let Value::Object(map) = &mut body else {
            return body;
        };
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters,
                    }})
                })
                .collect();
            map.insert("tools".into(), Value::Array(tools));
            let choice = match &request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            };
            map.insert("tool_choice".into(), choice);
        }
        if let Some(t) = request.temperature {
            map.insert("temperature".into(), json!(t));
        }
        if let Some(p) = request.top_p {
            map.insert("top_p".into(), json!(p));
        }
        if let Some(max) = request.max_output_tokens {
            let field = match self.max_tokens_field {
                MaxTokensField::MaxTokens => "max_tokens",
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            };
            map.insert(field.into(), json!(max));
        }
        http::merge_options(&mut body, &request.options, &self.info.provider);
        body
    }
}

/// `OLLAMA_HOST` as Ollama reads it (`host`, `host:port` or a URL) turned
/// into the `/v1` base URL.
fn ollama_base_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    // With a scheme the URL is used as written (its default port applies);
    // a bare host gets Ollama's port 11434 unless it names one.
    let base = if host.contains("://") {
        host.to_string()
    } else if host.contains(':') {
        format!("http://{host}")
    } else {
        format!("http://{host}:11434")
    };
    if base.ends_with("/v1") {
        base
    } else {
        format!("{base}/v1")
    }
}

fn encode_message(message: &ModelMessage, out: &mut Vec<Value>) {
    match message.role {
        ModelRole::User => {
            let simple = message
                .content
                .iter()
                .all(|p| matches!(p, ContentPart::Text { .. }));
            let content = if simple {
                Value::String(joined_text(&message.content))
            } else {
                Value::Array(message.content.iter().filter_map(user_part).collect())
            };
            out.push(json!({"role": "user", "content": content}));
        }
        ModelRole::Assistant => {
            let text = joined_text(&message.content);
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::ToolCall {
                        id, name, input, ..
                    } => Some(json!({"id": id, "type": "function", "function": {
                        "name": name, "arguments": input.to_string(),
                    }})),
                    _ => None,
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                // Reasoning-only turns: the API rejects an empty assistant message.
                return;
            }
            let mut msg = json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { Value::String(text) },
            });
            if !calls.is_empty()
                && let Value::Object(map) = &mut msg
            {
                map.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(msg);
        }
        ModelRole::Tool => {
            for part in &message.content {
                match part {
                    ContentPart::ToolResult {
                        call_id, output, ..
                    } => out.push(json!({
                        "role": "tool", "tool_call_id": call_id, "content": output,
                    })),
                    ContentPart::Text { text, .. } if !text.is_empty() => {
                        out.push(json!({"role": "user", "content": text}))
                    }
                    _ => {}
                }
            }
        }
    }
}

fn joined_text(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

fn user_part(part: &ContentPart) -> Option<Value> {
    match part {
        ContentPart::Text { text, .. } => Some(json!({"type": "text", "text": text})),
        ContentPart::File {
            media_type, url, ..
        } if media_type.starts_with("image/") => {
            Some(json!({"type": "image_url", "image_url": {"url": url}}))
        }
        ContentPart::File {
            media_type,
            url,
            filename,
        } if media_type == "application/pdf" && url.starts_with("data:") => Some(json!({
            "type": "file",
            "file": {"filename": filename.as_deref().unwrap_or("file.pdf"), "file_data": url},
        })),
        ContentPart::File {
            media_type,
            url,
            filename,
        } => Some(json!({"type": "text", "text": format!(
            "[attached file {} ({media_type}) cannot be sent to this API: {}]",
            filename.as_deref().unwrap_or(""),
            if url.starts_with("data:") { "inline data" } else { url.as_str() },
        )})),
        _ => None,
    }
}

/// OpenAI-specific retry decisions on top of the status rules (shared by
/// Chat Completions and Responses): an exhausted quota is never retried.
pub(crate) fn classify(api: &mut ApiError, json: Option<&Value>) {
    let code = json
        .and_then(|j| j.pointer("/error/code"))
        .and_then(Value::as_str);
    let kind = json
        .and_then(|j| j.pointer("/error/type"))
        .and_then(Value::as_str);
    if code == Some("insufficient_quota") || kind == Some("insufficient_quota") {
        api.is_retryable = false;
    }
}

#[async_trait::async_trait]
impl LanguageModel for OpenAiCompatible {
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
            .post(format!("{}/chat/completions", self.base_url))
            .header("accept", "text/event-stream")
            .json(&body);
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let response = http::send(builder, &cancel, classify).await?;
        Ok(http::drive(
            response,
            ChatDecoder::new(self.info.provider.clone()),
            cancel,
            self.idle_timeout,
        ))
    }
}

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

    fn tool_delta(&mut self, delta: &Value, out: &mut Vec<StreamEvent>) {
        let index = delta.get("index").and_then(Value::as_u64).unwrap_or(0);
        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(slot) => slot,
            None => {
                self.calls.push((index, PendingCall::default()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot].1;
        // Set, never concatenate: some servers repeat id and name.
        if let Some(id) = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            && !call.started
        {
            call.id = Some(id.to_string());
        }
        if let Some(name) = delta
            .pointer("/function/name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            && !call.started
        {
            call.name = Some(name.to_string());
        }
        // A string fragment normally; some servers send the whole
        // arguments as a JSON object instead.
        let fragment = match delta.pointer("/function/arguments") {
            Some(Value::String(text)) => text.clone(),
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
            (FinishReason::Other, Some(raw)) => {
                let mut inner = Map::new();
                inner.insert("finishReason".into(), Value::String(raw));
                let mut meta = Map::new();
                meta.insert(self.provider.clone(), Value::Object(inner));
                Some(meta)
            }
            _ => None,
        };
        out.push(StreamEvent::Finish {
            reason,
            usage: self.usage.unwrap_or_default(),
            provider_metadata,
        });
        self.done = true;
    }

    fn stream_error(&self, chunk: &Value) -> ModelError {
        let message = http::error_message(chunk).unwrap_or_else(|| chunk.to_string());
        let error = chunk.get("error");
        let code = error.and_then(|e| e.get("code"));
        let code_str = code.and_then(Value::as_str);
        if http::is_overflow(code_str, &message) {
            return ModelError::ContextOverflow { message };
        }
        let kind = error
            .and_then(|e| e.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let numeric = code.and_then(Value::as_u64);
        let retryable = matches!(kind, "server_error" | "rate_limit_exceeded" | "overloaded")
            || matches!(
                code_str,
                Some("rate_limit_exceeded" | "server_error" | "overloaded")
            )
            || numeric.is_some_and(|n| n == 429 || n >= 500);
        ModelError::Api(ApiError {
            message,
            status: None,
            is_retryable: retryable,
            headers: None,
            body: Some(chunk.to_string()),
        })
    }
}

fn chat_usage(usage: &Value) -> Usage {
    let prompt = http::u64_at(usage, "/prompt_tokens").unwrap_or(0);
    let cached = http::u64_at(usage, "/prompt_tokens_details/cached_tokens").unwrap_or(0);
    Usage {
        input: prompt.saturating_sub(cached),
        output: http::u64_at(usage, "/completion_tokens").unwrap_or(0),
        reasoning: http::u64_at(usage, "/completion_tokens_details/reasoning_tokens").unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        total: http::u64_at(usage, "/total_tokens").unwrap_or(0),
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
        let chunk = http::parse_json(&self.provider, data)?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.stream_error(&chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(chat_usage(usage));
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.reasoning(text, out);
                    break;
                }
            }
            for key in ["content", "refusal"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.text(text, out);
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                self.close_reasoning(out);
                self.close_text(out);
                for call in calls {
                    self.tool_delta(call, out);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_string());
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

    #[test]
    fn ollama_host_forms() {
        assert_eq!(ollama_base_url("127.0.0.1"), "http://127.0.0.1:11434/v1");
        assert_eq!(ollama_base_url("0.0.0.0:9000"), "http://0.0.0.0:9000/v1");
        assert_eq!(
            ollama_base_url("https://ollama.example.com:443/"),
            "https://ollama.example.com:443/v1"
        );
    }

    #[test]
    fn object_arguments_and_missing_ids() {
        let mut decoder = ChatDecoder::new("test".into());
        let mut out = Vec::new();
        decoder.tool_delta(
            &json!({"index": 0, "function": {"name": "grep", "arguments": {"pattern": "x"}}}),
            &mut out,
        );
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
    fn reasoning_only_assistant_turns_are_left_out() {
        let mut out = Vec::new();
        encode_message(
            &ModelMessage {
                role: ModelRole::Assistant,
                content: vec![ContentPart::Reasoning {
                    text: "thinking".into(),
                    provider_metadata: None,
                }],
            },
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn usage_subtracts_cached_tokens() {
        let usage = chat_usage(&json!({
            "prompt_tokens": 812, "completion_tokens": 58, "total_tokens": 870,
            "prompt_tokens_details": {"cached_tokens": 768},
            "completion_tokens_details": {"reasoning_tokens": 10},
        }));
        assert_eq!(usage.input, 44);
        assert_eq!(usage.cache_read, 768);
        assert_eq!(usage.output, 58);
        assert_eq!(usage.reasoning, 10);
        assert_eq!(usage.total, 870);
    }
}
