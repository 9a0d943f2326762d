//! OpenAI Responses API streaming client: [`OpenAiResponses`].
//!
//! Stateless use (`store: false`): reasoning items come back with their
//! item id and, for reasoning models, their encrypted content in
//! [`ProviderMetadata`] (`{"openai": {"itemId": …, "encryptedContent": …}}`)
//! and are sent back as input items on the next request; function calls
//! carry their `fc_…` item id the same way. The stream ends with
//! `response.completed`, `response.incomplete` or `response.failed`; a body
//! that ends before one of them is an error.

use std::collections::HashMap;

use agent_core::{
    ApiError, ContentPart, EventStream, FinishReason, LanguageModel, ModelError, ModelInfo,
    ModelRequest, ModelRole, ProviderMetadata, StreamEvent, ToolCall, ToolChoice, Usage,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::http::{self, Decoder};
use crate::openai::OPENAI_BASE_URL;
use crate::sse::SseEvent;

const PROVIDER: &str = "openai";

/// A streaming OpenAI Responses client (`POST {base_url}/responses`), the
/// API OpenAI's reasoning and codex models are meant for.
///
/// Provider options in `ModelRequest::options["openai"]` are merged into
/// the request body, e.g. `{"reasoning": {"effort": "high", "summary":
/// "auto"}}`.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    info: ModelInfo,
    base_url: String,
    api_key: String,
    headers: Vec<(String, String)>,
    http: reqwest::Client,
    idle_timeout: Option<std::time::Duration>,
}

crate::http::client_builders!(OpenAiResponses);

impl OpenAiResponses {
    /// A client for `model` with this API key, against `OPENAI_BASE_URL`'s
    /// default ([`OPENAI_BASE_URL`]).
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        OpenAiResponses {
            info: crate::registry::model_info(PROVIDER, &model.into()),
            base_url: OPENAI_BASE_URL.to_string(),
            api_key: api_key.into(),
            headers: Vec::new(),
            http: http::shared_client(),
            idle_timeout: None,
        }
    }

    /// A client with the key from `OPENAI_API_KEY` and the base URL from
    /// `OPENAI_BASE_URL` when set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let key = http::required_env(PROVIDER, "OPENAI_API_KEY")?;
        let client = OpenAiResponses::new(model, key);
        Ok(match http::env_nonempty("OPENAI_BASE_URL") {
            Some(url) => client.with_base_url(url),
            None => client,
        })
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let reasoning = self.info.capabilities.reasoning;
        let system_role = if reasoning { "developer" } else { "system" };
        let mut input: Vec<Value> = request
            .system
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| json!({"role": system_role, "content": s}))
            .collect();
        for message in request.messages.iter() {
            encode_message(message.role, &message.content, &mut input);
        }
        let mut body = json!({
            "model": self.info.id,
            "input": input,
            "stream": true,
            "store": false,
        });
        let Value::Object(map) = &mut body else {
            return body;
        };
        if reasoning {
            map.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function", "name": t.name, "description": t.description,
                        "parameters": t.parameters, "strict": false,
                    })
                })
                .collect();
            map.insert("tools".into(), Value::Array(tools));
            let choice = match &request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
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
            map.insert("max_output_tokens".into(), json!(max));
        }
        http::merge_options(&mut body, &request.options, PROVIDER);
        body
    }
}

fn openai_meta<'a>(metadata: Option<&'a ProviderMetadata>, key: &str) -> Option<&'a str> {
    metadata?.get(PROVIDER)?.get(key)?.as_str()
}

fn encode_message(role: ModelRole, parts: &[ContentPart], out: &mut Vec<Value>) {
    match role {
        ModelRole::User => {
            let content: Vec<Value> = parts
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text, .. } => {
                        Some(json!({"type": "input_text", "text": text}))
                    }
                    ContentPart::File {
                        media_type, url, ..
                    } if media_type.starts_with("image/") => {
                        Some(json!({"type": "input_image", "image_url": url}))
                    }
                    ContentPart::File {
                        media_type,
                        url,
                        filename,
                    } if media_type == "application/pdf" && url.starts_with("data:") => {
                        Some(json!({
                            "type": "input_file",
                            "filename": filename.as_deref().unwrap_or("file.pdf"),
                            "file_data": url,
                        }))
                    }
                    ContentPart::File {
                        media_type,
                        filename,
                        ..
                    } => Some(json!({"type": "input_text", "text": format!(
                        "[attached file {} ({media_type}) cannot be sent to this API]",
                        filename.as_deref().unwrap_or(""),
                    )})),
                    _ => None,
                })
                .collect();
            if !content.is_empty() {
                out.push(json!({"role": "user", "content": content}));
            }
        }
        ModelRole::Assistant => {
            for part in parts {
                match part {
                    ContentPart::Text { text, .. } if !text.is_empty() => out.push(json!({
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    })),
                    ContentPart::Reasoning {
                        text,
                        provider_metadata,
                    } => {
                        // Only reasoning this API produced can go back.
                        let meta = provider_metadata.as_ref();
                        let Some(id) = openai_meta(meta, "itemId") else {
                            continue;
                        };
                        let summary: Vec<Value> = if text.is_empty() {
                            Vec::new()
                        } else {
                            vec![json!({"type": "summary_text", "text": text})]
                        };
                        let mut item = json!({"type": "reasoning", "id": id, "summary": summary});
                        if let (Some(encrypted), Value::Object(map)) =
                            (openai_meta(meta, "encryptedContent"), &mut item)
                        {
                            map.insert("encrypted_content".into(), json!(encrypted));
                        }
                        out.push(item);
                    }
                    ContentPart::ToolCall {
                        id, name, input, ..
                    } => out.push(json!({
                        "type": "function_call",
                        "call_id": id,
                        "name": name,
                        "arguments": match input {
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        },
                    })),
                    _ => {}
                }
            }
        }
        ModelRole::Tool => {
            for part in parts {
                if let ContentPart::ToolResult {
                    call_id, output, ..
                } = part
                {
                    out.push(json!({
                        "type": "function_call_output", "call_id": call_id, "output": output,
                    }));
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl LanguageModel for OpenAiResponses {
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
            .post(format!("{}/responses", self.base_url))
            .bearer_auth(&self.api_key)
            .header("accept", "text/event-stream")
            .json(&body);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let response = http::send(builder, &cancel, crate::openai::classify).await?;
        Ok(http::drive(
            response,
            ResponsesDecoder::default(),
            cancel,
            self.idle_timeout,
        ))
    }
}

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
    let inner: Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let mut outer = Map::new();
    outer.insert(PROVIDER.to_string(), Value::Object(inner));
    outer
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn responses_usage(usage: &Value) -> Usage {
    let input = http::u64_at(usage, "/input_tokens").unwrap_or(0);
    let cached = http::u64_at(usage, "/input_tokens_details/cached_tokens").unwrap_or(0);
    Usage {
        input: input.saturating_sub(cached),
        output: http::u64_at(usage, "/output_tokens").unwrap_or(0),
        reasoning: http::u64_at(usage, "/output_tokens_details/reasoning_tokens").unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        total: http::u64_at(usage, "/total_tokens").unwrap_or(0),
    }
}

/// An `error` event or a failed response's `error` object.
fn response_error(error: &Value) -> ModelError {
    let code = error.get("code").and_then(Value::as_str);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed without a message")
        .to_string();
    if http::is_overflow(code, &message) {
        return ModelError::ContextOverflow { message };
    }
    ModelError::Api(ApiError {
        message,
        status: None,
        is_retryable: matches!(
            code,
            Some("server_error" | "rate_limit_exceeded" | "server_is_overloaded" | "slow_down")
        ),
        headers: None,
        body: Some(error.to_string()),
    })
}

impl ResponsesDecoder {
    fn item_added(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let Some(item) = data.get("item") else {
            return;
        };
        let id = str_at(item, "/id").to_string();
        match str_at(item, "/type") {
            "message" => {
                out.push(StreamEvent::TextStart { id: id.clone() });
                self.items.insert(id, Item::Message);
            }
            "reasoning" => {
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
            "function_call" => {
                let call_id = str_at(item, "/call_id").to_string();
                let name = str_at(item, "/name").to_string();
                out.push(StreamEvent::ToolInputStart {
                    id: call_id.clone(),
                    name: name.clone(),
                });
                self.items.insert(id, Item::Call { call_id, name });
            }
            _ => {} // web search, file search, …: not part of this model
        }
    }

    fn item_done(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let Some(item) = data.get("item") else {
            return;
        };
        let id = str_at(item, "/id").to_string();
        match self.items.remove(&id) {
            Some(Item::Message) => out.push(StreamEvent::TextEnd {
                id,
                provider_metadata: None,
            }),
            Some(Item::Reasoning { .. }) => {
                let mut pairs = vec![("itemId", id.as_str())];
                if let Some(encrypted) = item.get("encrypted_content").and_then(Value::as_str) {
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
                    input: http::parse_arguments(str_at(item, "/arguments")),
                    provider_metadata: Some(meta(&[("itemId", &id)])),
                }))
            }
            None => {}
        }
    }

    fn finish(&mut self, data: &Value, out: &mut Vec<StreamEvent>) {
        let response = data.get("response").unwrap_or(&Value::Null);
        let status = str_at(response, "/status");
        let incomplete = str_at(response, "/incomplete_details/reason");
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
                .get("usage")
                .filter(|u| u.is_object())
                .map(responses_usage)
                .unwrap_or_default(),
            provider_metadata: raw.map(|raw| meta(&[("finishReason", raw)])),
        });
        self.done = true;
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let data = http::parse_json(PROVIDER, &event.data)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        match kind {
            "response.created" => {
                let id = str_at(&data, "/response/id");
                if !id.is_empty() {
                    out.push(StreamEvent::ProviderMetadata {
                        metadata: meta(&[("responseId", id)]),
                    });
                }
            }
            "response.output_item.added" => self.item_added(&data, out),
            "response.output_item.done" => self.item_done(&data, out),
            "response.output_text.delta" => {
                let delta = str_at(&data, "/delta");
                if !delta.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        id: str_at(&data, "/item_id").to_string(),
                        delta: delta.to_string(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" => {
                let id = str_at(&data, "/item_id").to_string();
                let index = data.get("summary_index").and_then(Value::as_u64);
                if let Some(Item::Reasoning { summary_index }) = self.items.get_mut(&id) {
                    // Summary parts of one item are separated by a blank line.
                    if summary_index.is_some() && *summary_index != index {
                        out.push(StreamEvent::ReasoningDelta {
                            id: id.clone(),
                            delta: "\n\n".into(),
                        });
                    }
                    *summary_index = index;
                }
                let delta = str_at(&data, "/delta");
                if !delta.is_empty() {
                    out.push(StreamEvent::ReasoningDelta {
                        id,
                        delta: delta.to_string(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let item_id = str_at(&data, "/item_id");
                let delta = str_at(&data, "/delta");
                if let Some(Item::Call { call_id, .. }) = self.items.get(item_id)
                    && !delta.is_empty()
                {
                    out.push(StreamEvent::ToolInputDelta {
                        id: call_id.clone(),
                        delta: delta.to_string(),
                    });
                }
            }
            "response.completed" | "response.incomplete" => self.finish(&data, out),
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(response_error(error));
            }
            "error" => return Err(response_error(&data)),
            _ => {}
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
