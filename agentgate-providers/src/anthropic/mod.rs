//! Anthropic Messages streaming client: [`Anthropic`].
//!
//! The request is built by [`encode`] into the typed body of [`wire`];
//! the stream is read by [`decode`]. Thinking blocks come back with their
//! signature in [`agentgate_core::ProviderMetadata`]
//! (`{"anthropic": {"signature": …}}`, or `{"anthropic": {"redactedData":
//! …}}` for redacted thinking) and are sent back unchanged on the next
//! request.

mod decode;
mod encode;
mod wire;

pub(crate) use decode::MessagesDecoder;

use agentgate_core::{ApiError, EventStream, LanguageModel, ModelError, ModelInfo, ModelRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::endpoints::ANTHROPIC_BASE_URL;
use crate::error_body::ErrorBody;
use crate::http;

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The output cap used when neither the request nor the model declares
/// one, and the most requested by default (as opencode does).
pub const DEFAULT_MAX_TOKENS: u32 = 32_000;

/// The key of this provider's entries in provider metadata and options.
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
            info: crate::model_info::model_info(PROVIDER, &model.into()),
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
        let spec = crate::providers::provider(PROVIDER);
        let key = spec.api_key()?.unwrap_or_default();
        Ok(Anthropic::new(model, key).with_base_url(spec.base_url()))
    }

    /// Turns the §15 cache breakpoints on (the default) or off.
    pub fn with_prompt_caching(mut self, enabled: bool) -> Self {
        self.prompt_caching = enabled;
        self
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let default_max_tokens = match u32::try_from(self.info.limits.output) {
            Ok(0) | Err(_) => DEFAULT_MAX_TOKENS,
            Ok(n) => n.min(DEFAULT_MAX_TOKENS),
        };
        encode::request_body(
            request,
            &encode::EncodeSettings {
                model: &self.info.id,
                prompt_caching: self.prompt_caching,
                default_max_tokens,
                output_limit: self.info.limits.output,
            },
        )
    }
}

/// Anthropic error types on top of the status rules (409 conflict and
/// 5xx stay as the status says).
fn classify(api: &mut ApiError, body: Option<&ErrorBody>) {
    match body.and_then(ErrorBody::kind) {
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
        let url = format!("{}/messages", self.base_url);
        let mut builder = self
            .http
            .post(&url)
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
