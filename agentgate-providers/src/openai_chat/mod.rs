//! OpenAI Chat Completions streaming client, for OpenAI itself and every
//! server that speaks its dialect: [`OpenAiCompatible`].
//!
//! The request is built by [`encode`] into the typed body of [`wire`] and
//! sent with `stream: true` and `stream_options.include_usage`; the stream
//! is read by [`decode`].

mod decode;
mod encode;
mod wire;

pub(crate) use decode::ChatDecoder;

use agentgate_core::{ApiError, EventStream, LanguageModel, ModelError, ModelInfo, ModelRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::error_body::ErrorBody;
use crate::families::{MaxTokensField, ModelFamily, model_family};
use crate::http;
use crate::providers::{Provider, provider};

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
    /// Where the key came from, named when the provider refuses it.
    key_source: Option<String>,
    headers: Vec<(String, String)>,
    /// The cap's field when set explicitly; else the model family's.
    max_tokens_field: Option<MaxTokensField>,
    family: &'static ModelFamily,
    http: reqwest::Client,
    timeouts: crate::Timeouts,
    /// The last request body's size (the next one's buffer starts so big).
    body_size: http::SizeHint,
    /// The wire encoding of the history messages it has sent.
    encoded: crate::encode_cache::EncodeCache<crate::encode_cache::Elements>,
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
        let info = crate::model_info::model_info(&provider.into(), &model.into());
        OpenAiCompatible {
            family: model_family(&info.provider, &info.id),
            info,
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key: None,
            key_source: None,
            headers: Vec::new(),
            max_tokens_field: None,
            http: http::shared_client(),
            timeouts: crate::Timeouts::default(),
            body_size: http::SizeHint::default(),
            encoded: Default::default(),
        }
    }

    /// A client for a Chat Completions provider of [`crate::PROVIDERS`]:
    /// base URL and key from the environment as the table says.
    pub fn from_provider(
        provider: &Provider,
        model: impl Into<String>,
    ) -> Result<Self, ProviderError> {
        let client = OpenAiCompatible::new(provider.id, model, provider.base_url());
        Ok(match (provider.api_key()?, provider.api_key_source()) {
            (Some(key), Some(source)) => client.with_api_key(key).with_key_source(source),
            (Some(key), None) => client.with_api_key(key),
            (None, _) => client,
        })
    }

    /// OpenAI itself: key from `OPENAI_API_KEY`, base URL from
    /// `OPENAI_BASE_URL` or [`OPENAI_BASE_URL`](crate::OPENAI_BASE_URL); the cap is sent as
    /// `max_completion_tokens`.
    pub fn openai(model: impl Into<String>) -> Result<Self, ProviderError> {
        Ok(OpenAiCompatible::from_provider(provider("openai"), model)?
            .with_max_tokens_field(MaxTokensField::MaxCompletionTokens))
    }

    /// A local Ollama server: `OLLAMA_HOST` (`host`, `host:port` or a URL)
    /// when set, else [`OLLAMA_BASE_URL`](crate::OLLAMA_BASE_URL). No key is needed.
    pub fn ollama(model: impl Into<String>) -> Self {
        let spec = provider("ollama");
        OpenAiCompatible::new(spec.id, model, spec.base_url())
    }

    /// A vLLM server: `VLLM_BASE_URL` or [`VLLM_BASE_URL`](crate::VLLM_BASE_URL), with
    /// `VLLM_API_KEY` when set.
    pub fn vllm(model: impl Into<String>) -> Self {
        Self::keyless_preset("vllm", model)
    }

    /// LM Studio's local server: `LMSTUDIO_BASE_URL` or
    /// [`LMSTUDIO_BASE_URL`](crate::LMSTUDIO_BASE_URL), with `LMSTUDIO_API_KEY` when set.
    pub fn lmstudio(model: impl Into<String>) -> Self {
        Self::keyless_preset("lmstudio", model)
    }

    /// A preset whose key is optional.
    fn keyless_preset(id: &str, model: impl Into<String>) -> Self {
        let spec = provider(id);
        let client = OpenAiCompatible::new(spec.id, model, spec.base_url());
        match (spec.api_key().ok().flatten(), spec.api_key_source()) {
            (Some(key), Some(source)) => client.with_api_key(key).with_key_source(source),
            (Some(key), None) => client.with_api_key(key),
            (None, _) => client,
        }
    }

    /// OpenRouter: key from `OPENROUTER_API_KEY`, base URL
    /// [`OPENROUTER_BASE_URL`](crate::OPENROUTER_BASE_URL). The model is OpenRouter's id, e.g.
    /// `anthropic/claude-sonnet-4.5`.
    pub fn openrouter(model: impl Into<String>) -> Result<Self, ProviderError> {
        OpenAiCompatible::from_provider(provider("openrouter"), model)
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Chooses the field that carries the output token cap (by default
    /// the model family's, see [`crate::model_family`]).
    pub fn with_max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = Some(field);
        self
    }

    /// The JSON body this client sends for `request` (the bytes it sends
    /// are this value serialised).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        encode::request_body(request, &self.encode_settings())
    }

    /// What the encoder needs of this client.
    fn encode_settings(&self) -> encode::EncodeSettings<'_> {
        encode::EncodeSettings {
            model: &self.info.id,
            provider: &self.info.provider,
            family: self.family,
            max_tokens_field: self.max_tokens_field.unwrap_or(self.family.token_field),
        }
    }
}

impl crate::request_body::WritesBody for OpenAiCompatible {
    /// The bytes this client sends for `request`: the
    /// [`request_body`](Self::request_body) serialised, with the history's
    /// kept encodings reused (see `encode_cache.rs`) and never put in a
    /// JSON tree.
    fn request_chunks(&self, request: &ModelRequest) -> crate::request_body::RequestBody {
        encode::request_bytes(
            request,
            &self.encode_settings(),
            &self.body_size,
            &self.encoded,
        )
    }
}

/// OpenAI-specific retry decisions on top of the status rules (shared by
/// Chat Completions and Responses): an exhausted quota is never retried.
pub(crate) fn classify(api: &mut ApiError, body: Option<&ErrorBody>) {
    let Some(body) = body else {
        return;
    };
    if body.code() == Some("insufficient_quota") || body.kind() == Some("insufficient_quota") {
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
        let body = crate::request_body::WritesBody::request_chunks(self, &request);
        drop(request);
        let builder = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .header("accept", "text/event-stream");
        let mut builder = http::json_body(builder, body);
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let clock = crate::timeouts::CallClock::start(self.timeouts, &self.info.provider);
        let response = http::send(builder, &cancel, classify, &clock)
            .await
            .map_err(|e| crate::key_source::on_rejected_key(e, self.key_source.as_deref()))?;
        Ok(http::drive(
            response,
            ChatDecoder::new(self.info.provider.clone()),
            cancel,
            clock,
        ))
    }
}
