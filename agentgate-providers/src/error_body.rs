//! Error responses as the providers send them: the typed error body
//! ([`ErrorBody`]) in the shapes seen in the wild, context-overflow
//! recognition, and the mapping of an HTTP error response to a
//! [`ModelError`].

use agentgate_core::{ApiError, Headers, ModelError};
use serde::Deserialize;

/// An error body: `{"error":{"message":…}}` (OpenAI, Anthropic, Google),
/// `{"error":"…"}`, `{"message":…}` (Mistral), `{"detail":…}` (vLLM).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorBody {
    #[serde(default)]
    pub error: Option<ErrorField>,
    #[serde(default)]
    pub message: Option<Text>,
    #[serde(default)]
    pub detail: Option<Text>,
    /// Mistral and some compatible servers put the code at the top level.
    #[serde(default)]
    pub code: Option<Code>,
    /// Mistral's `type` at the top level.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// The `error` member: an object or a bare string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ErrorField {
    /// `{"message", "type", "code", "status", "details"}`.
    Object(ErrorObject),
    /// `"error": "boom"`.
    Text(String),
    /// Anything else (kept so the body still parses).
    Other(serde::de::IgnoredAny),
}

/// The fields of an error object that drive decisions.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorObject {
    #[serde(default)]
    pub message: Option<Text>,
    /// OpenAI `insufficient_quota`, Anthropic `overloaded_error`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<Code>,
    /// Google's RPC status (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`).
    #[serde(default)]
    pub status: Option<String>,
    /// Google's typed details (`RetryInfo`).
    #[serde(default)]
    pub details: Option<Vec<ErrorDetail>>,
}

/// One entry of Google's `error.details`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorDetail {
    #[serde(default, rename = "retryDelay")]
    pub retry_delay: Option<String>,
}

/// A message field: text normally, any JSON in odd servers (shown as JSON).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Text {
    /// The usual case.
    Plain(String),
    /// A structured message (FastAPI validation errors, ...).
    Structured(serde_json::Value),
}

impl Text {
    pub fn render(&self) -> String {
        match self {
            Text::Plain(s) => s.clone(),
            Text::Structured(v) => v.to_string(),
        }
    }
}

/// An error code: a string (OpenAI) or a number (Google, Mistral).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Code {
    /// `"context_length_exceeded"`.
    Text(String),
    /// `429`.
    Number(i64),
    /// Anything else.
    Other(serde::de::IgnoredAny),
}

impl Code {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Code::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl ErrorBody {
    /// The body of `text`, when it is JSON of a known shape.
    pub fn parse(text: &str) -> Option<ErrorBody> {
        serde_json::from_str(text).ok()
    }

    /// The error object, when the body has one.
    pub fn object(&self) -> Option<&ErrorObject> {
        match &self.error {
            Some(ErrorField::Object(o)) => Some(o),
            _ => None,
        }
    }

    /// The provider's message, from whichever field carries it.
    pub fn message(&self) -> Option<String> {
        match &self.error {
            Some(ErrorField::Object(ErrorObject {
                message: Some(m), ..
            })) => return Some(m.render()),
            Some(ErrorField::Text(s)) => return Some(s.clone()),
            _ => {}
        }
        self.message
            .as_ref()
            .or(self.detail.as_ref())
            .map(Text::render)
    }

    /// `error.code` as a string, or a top-level string code.
    pub fn code(&self) -> Option<&str> {
        self.object()
            .and_then(|o| o.code.as_ref())
            .or(self.code.as_ref())
            .and_then(Code::as_str)
    }

    /// `error.type`, or a top-level `type`.
    pub fn kind(&self) -> Option<&str> {
        self.object()
            .and_then(|o| o.kind.as_deref())
            .or(self.kind.as_deref())
    }
}

/// Whether an error message or code says the prompt did not fit the context
/// window (OpenAI `context_length_exceeded`, Anthropic "prompt is too long",
/// vLLM / OpenAI-compatible "maximum context length", Gemini token count).
pub(crate) fn is_overflow(code: Option<&str>, message: &str) -> bool {
    if code == Some("context_length_exceeded") {
        return true;
    }
    let lower = message.to_ascii_lowercase();
    OVERFLOW_PHRASES.iter().any(|p| lower.contains(p))
        || (lower.contains("input token count") && lower.contains("exceeds the maximum"))
}

/// Lowercase phrases that mean "the prompt does not fit", per provider.
const OVERFLOW_PHRASES: &[&str] = &[
    // Anthropic, when the prompt alone is too long ...
    "prompt is too long",
    // ... and when prompt plus `max_tokens` exceed the window.
    "input length and `max_tokens` exceed context limit",
    // OpenAI Chat Completions, vLLM and most compatible servers.
    "maximum context length",
    "context_length_exceeded",
    // OpenAI Responses.
    "exceeds the context window",
    "context window exceeds",
    // Bedrock.
    "input is too long for requested model",
    // xAI.
    "maximum prompt length is",
];

/// A provider's own retry refinement, applied after the status rules.
pub(crate) type Classify = fn(&mut ApiError, Option<&ErrorBody>);

/// Maps an HTTP error response: context overflow, else an [`ApiError`]
/// with status, headers, body and a retry decision (408/409/429/≥500,
/// overridden by `x-should-retry`, then adjusted by `classify` for
/// provider-specific error types such as `insufficient_quota`).
pub(crate) fn map_error_response(
    status: u16,
    headers: Headers,
    body: String,
    classify: Classify,
) -> ModelError {
    let parsed = ErrorBody::parse(&body);
    let message = parsed
        .as_ref()
        .and_then(ErrorBody::message)
        .or_else(|| (!body.trim().is_empty()).then(|| body.trim().to_string()))
        .unwrap_or_else(|| format!("HTTP {status} with an empty body"));
    let code = parsed.as_ref().and_then(ErrorBody::code);
    if (400..500).contains(&status) && is_overflow(code, &message) {
        return ModelError::ContextOverflow { message };
    }
    let should_retry = headers.get("x-should-retry").cloned();
    let mut api = ApiError::new(status, message);
    api.headers = Some(headers);
    api.body = Some(body);
    // The provider may refine the decision (and add headers, such as a
    // Gemini `retryDelay` turned into `retry-after-ms`) ...
    classify(&mut api, parsed.as_ref());
    // ... but the server's explicit `x-should-retry` has the last word.
    match should_retry.as_deref() {
        Some("true") => api.is_retryable = true,
        Some("false") => api.is_retryable = false,
        _ => {}
    }
    ModelError::Api(api)
}

/// An API error reported inside a 200 stream (no status, no headers).
pub(crate) fn stream_api_error(message: String, retryable: bool, body: &str) -> ModelError {
    let mut api = ApiError::new(0, message);
    api.status = None;
    api.is_retryable = retryable;
    api.body = Some(body.to_string());
    ModelError::Api(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_classify(_: &mut ApiError, _: Option<&ErrorBody>) {}

    #[test]
    fn x_should_retry_overrides_status() {
        let mut headers = Headers::new();
        headers.insert("x-should-retry".into(), "false".into());
        let error = map_error_response(503, headers, "{}".into(), no_classify);
        let ModelError::Api(api) = error else {
            panic!("expected an API error")
        };
        assert!(!api.is_retryable);
        let mut headers = Headers::new();
        headers.insert("x-should-retry".into(), "true".into());
        let ModelError::Api(api) = map_error_response(400, headers, String::new(), no_classify)
        else {
            panic!("expected an API error")
        };
        assert!(api.is_retryable);
        assert_eq!(api.message, "HTTP 400 with an empty body");
    }

    #[test]
    fn error_message_shapes() {
        let body = ErrorBody::parse(r#"{"error": "boom"}"#).unwrap_or_default();
        assert_eq!(body.message().as_deref(), Some("boom"));
        let body = ErrorBody::parse(r#"{"object": "error", "message": "m", "code": 400}"#)
            .unwrap_or_default();
        assert_eq!(body.message().as_deref(), Some("m"));
        let body = ErrorBody::parse(r#"{"detail": [{"loc": ["body"], "msg": "field required"}]}"#)
            .unwrap_or_default();
        assert!(body.message().is_some_and(|m| m.contains("field required")));
    }
}
