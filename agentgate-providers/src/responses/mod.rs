//! OpenAI Responses API streaming client: [`OpenAiResponses`].
//!
//! Stateless use (`store: false`): reasoning items come back with their
//! item id and, for reasoning models, their encrypted content in
//! [`agentgate_core::ProviderMetadata`] (`{"openai": {"itemId": …,
//! "encryptedContent": …}}`) and are sent back as input items on the next
//! request; function calls carry their `fc_…` item id the same way. The
//! request is built by [`encode`] into the typed body of [`wire`]; the
//! stream is read by [`decode`].

mod decode;
mod encode;
mod wire;

pub(crate) use decode::ResponsesDecoder;

use agentgate_core::{EventStream, LanguageModel, ModelError, ModelInfo, ModelRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::endpoints::OPENAI_BASE_URL;
use crate::http;

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
    /// Where the key came from, named when the provider refuses it.
    key_source: Option<String>,
    headers: Vec<(String, String)>,
    http: reqwest::Client,
    timeouts: crate::Timeouts,
    /// The last request body's size (the next one's buffer starts so big).
    body_size: http::SizeHint,
    /// The wire encoding of the history messages it has sent.
    encoded: crate::encode_cache::EncodeCache<crate::encode_cache::Elements>,
}

crate::http::client_builders!(OpenAiResponses);

impl OpenAiResponses {
    /// A client for `model` with this API key, against `OPENAI_BASE_URL`'s
    /// default ([`OPENAI_BASE_URL`]).
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        OpenAiResponses {
            info: crate::model_info::model_info(PROVIDER, &model.into()),
            base_url: OPENAI_BASE_URL.to_string(),
            api_key: api_key.into(),
            key_source: None,
            headers: Vec::new(),
            http: http::shared_client(),
            timeouts: crate::Timeouts::default(),
            body_size: http::SizeHint::default(),
            encoded: Default::default(),
        }
    }

    /// A client with the key from `OPENAI_API_KEY` and the base URL from
    /// `OPENAI_BASE_URL` when set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let spec = crate::providers::provider(PROVIDER);
        let key = spec.api_key()?.unwrap_or_default();
        let client = OpenAiResponses::new(model, key).with_base_url(spec.base_url());
        Ok(match spec.api_key_source() {
            Some(source) => client.with_key_source(source),
            None => client,
        })
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        encode::request_body(request, &self.encode_settings())
    }

    /// What the encoder needs of this client.
    fn encode_settings(&self) -> encode::EncodeSettings<'_> {
        encode::EncodeSettings {
            model: &self.info.id,
            family: crate::families::model_family(PROVIDER, &self.info.id),
        }
    }
}

impl crate::request_body::WritesBody for OpenAiResponses {
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
        let body = crate::request_body::WritesBody::request_chunks(self, &request);
        drop(request);
        let builder = self
            .http
            .post(format!("{}/responses", self.base_url))
            .bearer_auth(&self.api_key)
            .header("accept", "text/event-stream");
        let mut builder = http::json_body(builder, body);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let clock = crate::timeouts::CallClock::start(self.timeouts, &self.info.provider);
        let response = http::send(builder, &cancel, crate::openai_chat::classify, &clock)
            .await
            .map_err(|e| crate::key_source::on_rejected_key(e, self.key_source.as_deref()))?;
        Ok(http::drive(
            response,
            ResponsesDecoder::default(),
            cancel,
            clock,
        ))
    }
}
