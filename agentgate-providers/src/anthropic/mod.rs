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

/// A streaming Anthropic Messages client (`POST {base_url}/v1/messages`).
///
/// The base URL is the host, as the official SDKs and `ANTHROPIC_BASE_URL`
/// take it (`https://api.anthropic.com`, a gateway's
/// `https://gateway.example/anthropic`); a trailing `/` is ignored, and one
/// that already ends in `/v1` (this client's older form, and the AI SDK's
/// `baseURL`) is not doubled:
///
/// ```
/// use agentgate_providers::Anthropic;
/// for base in ["https://gw.example", "https://gw.example/", "https://gw.example/v1"] {
///     let client = Anthropic::new("claude-sonnet-4-5", "key").with_base_url(base);
///     assert_eq!(client.messages_url(), "https://gw.example/v1/messages");
/// }
/// ```
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
    /// Where the key came from, named when the provider refuses it.
    key_source: Option<String>,
    headers: Vec<(String, String)>,
    prompt_caching: bool,
    http: reqwest::Client,
    timeouts: crate::Timeouts,
    /// The last request body's size (the next one's buffer starts so big).
    body_size: http::SizeHint,
    /// The history messages' encodings (see [`crate::encode_cache`]).
    encoded: crate::encode_cache::EncodeCache<crate::encode_cache::Turn<wire::Role>>,
}

crate::http::client_builders!(Anthropic);

impl Anthropic {
    /// A client for `model` with this API key, against [`ANTHROPIC_BASE_URL`].
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        Anthropic {
            info: crate::model_info::model_info(PROVIDER, &model.into()),
            base_url: ANTHROPIC_BASE_URL.to_string(),
            api_key: api_key.into(),
            key_source: None,
            headers: Vec::new(),
            prompt_caching: true,
            http: http::shared_client(),
            timeouts: crate::Timeouts::default(),
            body_size: http::SizeHint::default(),
            encoded: Default::default(),
        }
    }

    /// A client with the key from `ANTHROPIC_API_KEY` and the base URL
    /// from `ANTHROPIC_BASE_URL` when set.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let spec = crate::providers::provider(PROVIDER);
        let key = spec.api_key()?.unwrap_or_default();
        let client = Anthropic::new(model, key).with_base_url(spec.base_url());
        Ok(match spec.api_key_source() {
            Some(source) => client.with_key_source(source),
            None => client,
        })
    }

    /// The URL requests go to: the base URL's host part and
    /// `/v1/messages`.
    pub fn messages_url(&self) -> String {
        messages_url(&self.base_url)
    }

    /// Turns the §15 cache breakpoints on (the default) or off.
    pub fn with_prompt_caching(mut self, enabled: bool) -> Self {
        self.prompt_caching = enabled;
        self
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        encode::request_body(request, &self.encode_settings())
    }

    /// What the encoder needs of this client.
    fn encode_settings(&self) -> encode::EncodeSettings<'_> {
        let default_max_tokens = match u32::try_from(self.info.limits.output) {
            Ok(0) | Err(_) => DEFAULT_MAX_TOKENS,
            Ok(n) => n.min(DEFAULT_MAX_TOKENS),
        };
        encode::EncodeSettings {
            model: &self.info.id,
            prompt_caching: self.prompt_caching,
            default_max_tokens,
            output_limit: self.info.limits.output,
        }
    }
}

impl crate::request_body::WritesBody for Anthropic {
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

/// `{host}/v1/messages` for a base URL given as the host, with or without
/// a trailing `/` or `/v1`.
fn messages_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let host = base.strip_suffix("/v1").unwrap_or(base);
    format!("{host}/v1/messages")
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
        let body = crate::request_body::WritesBody::request_chunks(self, &request);
        drop(request);
        let url = self.messages_url();
        let builder = self
            .http
            .post(&url)
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("accept", "text/event-stream");
        let mut builder = http::json_body(builder, body);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let clock = crate::timeouts::CallClock::start(self.timeouts, &self.info.provider);
        let response = http::send(builder, &cancel, classify, &clock)
            .await
            .map_err(|e| crate::key_source::on_rejected_key(e, self.key_source.as_deref()))?;
        Ok(http::drive(
            response,
            MessagesDecoder::default(),
            cancel,
            clock,
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use agentgate_core::ModelMessage;
    use futures::StreamExt;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    #[test]
    fn the_base_url_is_the_host_and_v1_is_not_doubled() {
        for base in [
            "https://gw.example",
            "https://gw.example/",
            "https://gw.example/v1",
            "https://gw.example/v1/",
        ] {
            assert_eq!(
                messages_url(base),
                "https://gw.example/v1/messages",
                "{base}"
            );
        }
        // A gateway's own path prefix is kept.
        assert_eq!(
            messages_url("https://gw.example/anthropic"),
            "https://gw.example/anthropic/v1/messages"
        );
        assert_eq!(
            messages_url(ANTHROPIC_BASE_URL),
            "https://api.anthropic.com/v1/messages"
        );
    }

    /// `ANTHROPIC_BASE_URL` as Anthropic documents it for gateways (the
    /// host, no `/v1`) reaches `/v1/messages` on the wire, and so do the
    /// forms with a trailing `/` or `/v1`.
    #[tokio::test]
    async fn anthropic_base_url_from_the_environment_reaches_v1_messages() {
        let server = MockServer::start().await;
        let body = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
            "event: message_stop\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .expect(3)
            .mount(&server)
            .await;
        let spec = crate::providers::provider(PROVIDER);
        for value in [
            server.uri(),
            format!("{}/", server.uri()),
            format!("{}/v1", server.uri()),
        ] {
            let lookup = |name: &str| (name == "ANTHROPIC_BASE_URL").then(|| value.clone());
            let client = Anthropic::new("claude-sonnet-4-5", "key")
                .with_base_url(spec.base_url_from_lookup(&lookup))
                .with_http_client(
                    reqwest::Client::builder()
                        .pool_max_idle_per_host(0)
                        .build()
                        .unwrap(),
                );
            let request = ModelRequest::new(vec![ModelMessage::user("hi")]);
            let stream = client
                .stream(request, CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("{value}: {e}"));
            let items: Vec<_> = stream.collect().await;
            assert!(items.iter().all(Result::is_ok), "{value}: {items:?}");
        }
        // Unset: the public API's host.
        let spec = crate::providers::provider(PROVIDER);
        assert_eq!(
            spec.base_url_from_lookup(&|_| None),
            "https://api.anthropic.com"
        );
    }
}
