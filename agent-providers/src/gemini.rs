//! Google Gemini `streamGenerateContent` client: [`Gemini`].
//!
//! Gemini sends function calls whole and without ids, so the client mints
//! call ids (`call_<responseId>_<n>`) and emits only
//! [`StreamEvent::ToolCall`] for them. `thoughtSignature`s ride on parts
//! and come back in [`ProviderMetadata`] (`{"google": {"thoughtSignature":
//! …}}`) on the text, reasoning or call they belong to; they are sent back
//! on the same part. The stream has no terminal event: it is complete when
//! a candidate carried a `finishReason` before the body ended.

use agent_core::{
    ApiError, ContentPart, EventStream, FinishReason, LanguageModel, ModelError, ModelInfo,
    ModelRequest, ModelRole, ProviderMetadata, StreamEvent, ToolCall, ToolChoice, Usage,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::http::{self, Decoder};
use crate::sse::SseEvent;

/// The Gemini API base URL.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

const PROVIDER: &str = "google";

/// A streaming Gemini client
/// (`POST {base_url}/models/{model}:streamGenerateContent?alt=sse`).
///
/// Provider options in `ModelRequest::options["google"]` are merged into
/// the request body, e.g. `{"generationConfig": {"thinkingConfig":
/// {"includeThoughts": true}}}` (an object given there replaces the one
/// the client built).
#[derive(Debug, Clone)]
pub struct Gemini {
    info: ModelInfo,
    base_url: String,
    api_key: String,
    headers: Vec<(String, String)>,
    http: reqwest::Client,
    idle_timeout: Option<std::time::Duration>,
}

crate::http::client_builders!(Gemini);

impl Gemini {
    /// A client for `model` with this API key, against [`GEMINI_BASE_URL`].
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        Gemini {
            info: crate::registry::model_info(PROVIDER, &model.into()),
            base_url: GEMINI_BASE_URL.to_string(),
            api_key: api_key.into(),
            headers: Vec::new(),
            http: http::shared_client(),
            idle_timeout: None,
        }
    }

    /// A client with the key from `GOOGLE_GENERATIVE_AI_API_KEY` or
    /// `GEMINI_API_KEY` (in that order).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let key = ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"]
            .iter()
            .find_map(|name| http::env_nonempty(name))
            .ok_or_else(|| ProviderError::MissingApiKey {
                provider: PROVIDER.into(),
                variable: "GOOGLE_GENERATIVE_AI_API_KEY (or GEMINI_API_KEY)".into(),
            })?;
        Ok(Gemini::new(model, key))
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut contents: Vec<Value> = Vec::new();
        for message in request.messages.iter() {
            let (role, parts) = encode_message(message.role, &message.content);
            if parts.is_empty() {
                continue;
            }
            match contents.last_mut() {
                Some(last) if last.get("role").and_then(Value::as_str) == Some(role) => {
                    if let Some(Value::Array(existing)) = last.get_mut("parts") {
                        existing.extend(parts);
                    }
                }
                _ => contents.push(json!({"role": role, "parts": parts})),
            }
        }
        let mut body = json!({"contents": contents});
        let Value::Object(map) = &mut body else {
            return body;
        };
        let system: Vec<Value> = request
            .system
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| json!({"text": s}))
            .collect();
        if !system.is_empty() {
            map.insert("systemInstruction".into(), json!({"parts": system}));
        }
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name, "description": t.description,
                        "parametersJsonSchema": t.parameters,
                    })
                })
                .collect();
            map.insert(
                "tools".into(),
                json!([{"functionDeclarations": declarations}]),
            );
            let config = match &request.tool_choice {
                ToolChoice::Auto => json!({"mode": "AUTO"}),
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
            };
            map.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": config}),
            );
        }
        let mut generation = Map::new();
        if let Some(t) = request.temperature {
            generation.insert("temperature".into(), json!(t));
        }
        if let Some(p) = request.top_p {
            generation.insert("topP".into(), json!(p));
        }
        if let Some(max) = request.max_output_tokens {
            generation.insert("maxOutputTokens".into(), json!(max));
        }
        if !generation.is_empty() {
            map.insert("generationConfig".into(), Value::Object(generation));
        }
        http::merge_options(&mut body, &request.options, PROVIDER);
        body
    }
}

fn signature(metadata: Option<&ProviderMetadata>) -> Option<&str> {
    metadata?.get(PROVIDER)?.get("thoughtSignature")?.as_str()
}

fn with_signature(mut part: Value, metadata: Option<&ProviderMetadata>) -> Value {
    if let (Some(sig), Value::Object(map)) = (signature(metadata), &mut part) {
        map.insert("thoughtSignature".into(), json!(sig));
    }
    part
}

fn encode_message(role: ModelRole, content: &[ContentPart]) -> (&'static str, Vec<Value>) {
    let wire_role = match role {
        ModelRole::Assistant => "model",
        ModelRole::User | ModelRole::Tool => "user",
    };
    let parts = content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } if text.is_empty() => None,
            ContentPart::Text {
                text,
                provider_metadata,
            } => Some(with_signature(
                json!({"text": text}),
                provider_metadata.as_ref(),
            )),
            // Thoughts go back only with the signature Gemini gave them.
            ContentPart::Reasoning {
                text,
                provider_metadata,
            } => signature(provider_metadata.as_ref())
                .map(|sig| json!({"text": text, "thought": true, "thoughtSignature": sig})),
            ContentPart::File {
                media_type, url, ..
            } => Some(
                match url
                    .strip_prefix("data:")
                    .and_then(|rest| rest.split_once(','))
                {
                    Some((header, data)) if header.ends_with(";base64") => {
                        json!({"inlineData": {"mimeType": media_type, "data": data}})
                    }
                    _ => json!({"fileData": {"mimeType": media_type, "fileUri": url}}),
                },
            ),
            ContentPart::ToolCall {
                name,
                input,
                provider_metadata,
                ..
            } => Some(with_signature(
                json!({"functionCall": {"name": name, "args": input}}),
                provider_metadata.as_ref(),
            )),
            ContentPart::ToolResult { name, output, .. } => Some(json!({
                "functionResponse": {"name": name, "response": {"name": name, "content": output}},
            })),
        })
        .collect();
    (wire_role, parts)
}

/// A `retryDelay` such as `"28s"` or `"1.5s"` in milliseconds.
fn retry_delay_ms(delay: &str) -> Option<u64> {
    let seconds: f64 = delay.strip_suffix('s')?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).ceil() as u64)
}

fn retry_info(json: Option<&Value>) -> Option<&str> {
    json?
        .pointer("/error/details")?
        .as_array()?
        .iter()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
}

/// `RESOURCE_EXHAUSTED` is retried only with `RetryInfo` (a quota that
/// resets later is not), whose delay becomes a `retry-after-ms` header so
/// the loop's backoff (§13) honours it; `UNAVAILABLE` is retried.
fn classify(api: &mut ApiError, json: Option<&Value>) {
    let status = json
        .and_then(|j| j.pointer("/error/status"))
        .and_then(Value::as_str);
    match status {
        Some("RESOURCE_EXHAUSTED") => match retry_info(json).and_then(retry_delay_ms) {
            Some(ms) => {
                api.is_retryable = true;
                let headers = api.headers.get_or_insert_with(Default::default);
                headers
                    .entry("retry-after-ms".into())
                    .or_insert_with(|| ms.to_string());
            }
            None => api.is_retryable = false,
        },
        Some("UNAVAILABLE") => api.is_retryable = true,
        _ => {}
    }
}

#[async_trait::async_trait]
impl LanguageModel for Gemini {
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
            .post(format!(
                "{}/models/{}:streamGenerateContent?alt=sse",
                self.base_url, self.info.id
            ))
            .header("x-goog-api-key", &self.api_key)
            .header("accept", "text/event-stream")
            .json(&body);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let response = http::send(builder, &cancel, classify).await?;
        Ok(http::drive(
            response,
            GenerateDecoder::default(),
            cancel,
            self.idle_timeout,
        ))
    }
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
            response_id: String::new(),
            finish: None,
            blocked: false,
            usage: Usage::default(),
            done: false,
        }
    }
}

fn google_meta(key: &str, value: &str) -> ProviderMetadata {
    let mut inner = Map::new();
    inner.insert(key.to_string(), Value::String(value.to_string()));
    let mut meta = Map::new();
    meta.insert(PROVIDER.to_string(), Value::Object(inner));
    meta
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

    fn part(&mut self, part: &Value, out: &mut Vec<StreamEvent>) {
        let sig = part.get("thoughtSignature").and_then(Value::as_str);
        if let Some(call) = part.get("functionCall") {
            self.close(out);
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| {
                    if self.response_id.is_empty() {
                        format!("call_{}", self.calls)
                    } else {
                        format!("call_{}_{}", self.response_id, self.calls)
                    }
                });
            self.calls += 1;
            out.push(StreamEvent::ToolCall(ToolCall {
                id,
                name: call
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                input: call
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
                provider_metadata: sig.map(|s| google_meta("thoughtSignature", s)),
            }));
            return;
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else {
            return;
        };
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        self.open(if thought { Open::Reasoning } else { Open::Text }, out);
        if !text.is_empty() {
            let id = self.block_id.clone();
            let delta = text.to_string();
            out.push(if thought {
                StreamEvent::ReasoningDelta { id, delta }
            } else {
                StreamEvent::TextDelta { id, delta }
            });
        }
        if let Some(sig) = sig {
            self.block_signature = Some(sig.to_string());
        }
    }

    fn finish_event(&mut self, out: &mut Vec<StreamEvent>) {
        self.close(out);
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

fn gemini_usage(usage: &Value) -> Usage {
    let prompt = http::u64_at(usage, "/promptTokenCount").unwrap_or(0);
    let cached = http::u64_at(usage, "/cachedContentTokenCount").unwrap_or(0);
    let candidates = http::u64_at(usage, "/candidatesTokenCount").unwrap_or(0);
    let thoughts = http::u64_at(usage, "/thoughtsTokenCount").unwrap_or(0);
    Usage {
        input: prompt.saturating_sub(cached),
        // `output` includes reasoning; Gemini counts thoughts apart.
        output: candidates.saturating_add(thoughts),
        reasoning: thoughts,
        cache_read: cached,
        cache_write: 0,
        total: http::u64_at(usage, "/totalTokenCount").unwrap_or(0),
    }
}

impl Decoder for GenerateDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let chunk = http::parse_json(PROVIDER, &event.data)?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("Gemini reported an error without a message")
                .to_string();
            if http::is_overflow(None, &message) {
                return Err(ModelError::ContextOverflow { message });
            }
            let status = error.get("status").and_then(Value::as_str);
            return Err(ModelError::Api(ApiError {
                message,
                status: None,
                is_retryable: matches!(status, Some("UNAVAILABLE" | "INTERNAL")),
                headers: None,
                body: Some(chunk.to_string()),
            }));
        }
        if let Some(id) = chunk.get("responseId").and_then(Value::as_str) {
            self.response_id = id.to_string();
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            self.usage = gemini_usage(usage);
        }
        if chunk.pointer("/promptFeedback/blockReason").is_some() {
            self.blocked = true;
            self.finish = Some("BLOCKED".into());
        }
        if let Some(candidate) = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            if let Some(parts) = candidate
                .pointer("/content/parts")
                .and_then(Value::as_array)
            {
                for part in parts {
                    self.part(part, out);
                }
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                self.finish = Some(reason.to_string());
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

    #[test]
    fn retry_delays() {
        assert_eq!(retry_delay_ms("28s"), Some(28_000));
        assert_eq!(retry_delay_ms("1.5s"), Some(1_500));
        assert_eq!(retry_delay_ms("soon"), None);
    }
}
