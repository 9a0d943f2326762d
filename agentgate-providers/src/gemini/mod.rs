//! Google Gemini `streamGenerateContent` client: [`Gemini`].
//!
//! `thoughtSignature`s ride on parts and come back in
//! [`agentgate_core::ProviderMetadata`] (`{"google": {"thoughtSignature": …}}`)
//! on the text, reasoning or call they belong to; they are sent back on
//! the same part. The request is built by [`encode`] into the typed body
//! of [`wire`]; the stream is read by [`decode`].

mod decode;
mod encode;
mod wire;

pub(crate) use decode::GenerateDecoder;

use agentgate_core::{ApiError, EventStream, LanguageModel, ModelError, ModelInfo, ModelRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ProviderError;
use crate::endpoints::GEMINI_BASE_URL;
use crate::error_body::ErrorBody;
use crate::http;

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
    /// Where the key came from, named when the provider refuses it.
    key_source: Option<String>,
    headers: Vec<(String, String)>,
    http: reqwest::Client,
    timeouts: crate::Timeouts,
    /// The last request body's size (the next one's buffer starts so big).
    body_size: http::SizeHint,
    /// The history messages' encodings (see [`crate::encode_cache`]).
    encoded: crate::encode_cache::EncodeCache<crate::encode_cache::Turn<&'static str>>,
}

crate::http::client_builders!(Gemini);

impl Gemini {
    /// A client for `model` with this API key, against [`GEMINI_BASE_URL`].
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        Gemini {
            info: crate::model_info::model_info(PROVIDER, &model.into()),
            base_url: GEMINI_BASE_URL.to_string(),
            api_key: api_key.into(),
            key_source: None,
            headers: Vec::new(),
            http: http::shared_client(),
            timeouts: crate::Timeouts::default(),
            body_size: http::SizeHint::default(),
            encoded: Default::default(),
        }
    }

    /// A client with the key from `GOOGLE_GENERATIVE_AI_API_KEY` or
    /// `GEMINI_API_KEY` (in that order).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        let spec = crate::providers::provider(PROVIDER);
        let key = spec.api_key()?.unwrap_or_default();
        let client = Gemini::new(model, key).with_base_url(spec.base_url());
        Ok(match spec.api_key_source() {
            Some(source) => client.with_key_source(source),
            None => client,
        })
    }

    /// The JSON body this client sends for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        encode::request_body(request)
    }
}

impl crate::request_body::WritesBody for Gemini {
    /// The bytes this client sends for `request`: the
    /// [`request_body`](Self::request_body) serialised, with the history's
    /// kept encodings reused (see `encode_cache.rs`) and never put in a
    /// JSON tree.
    fn request_chunks(&self, request: &ModelRequest) -> crate::request_body::RequestBody {
        encode::request_bytes(request, &self.body_size, &self.encoded)
    }
}

/// A `retryDelay` such as `"28s"` or `"1.5s"` in milliseconds.
fn retry_delay_ms(delay: &str) -> Option<u64> {
    let seconds: f64 = delay.strip_suffix('s')?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).ceil() as u64)
}

/// `RESOURCE_EXHAUSTED` is retried only with `RetryInfo` (a quota that
/// resets later is not), whose delay becomes a `retry-after-ms` header so
/// the loop's backoff (§13) honours it; `UNAVAILABLE` is retried.
fn classify(api: &mut ApiError, body: Option<&ErrorBody>) {
    let Some(error) = body.and_then(ErrorBody::object) else {
        return;
    };
    match error.status.as_deref() {
        Some("RESOURCE_EXHAUSTED") => {
            let delay = error
                .details
                .iter()
                .flatten()
                .find_map(|d| d.retry_delay.as_deref())
                .and_then(retry_delay_ms);
            match delay {
                Some(ms) => {
                    api.is_retryable = true;
                    let headers = api.headers.get_or_insert_with(Default::default);
                    headers
                        .entry("retry-after-ms".into())
                        .or_insert_with(|| ms.to_string());
                }
                None => api.is_retryable = false,
            }
        }
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
        let body = crate::request_body::WritesBody::request_chunks(self, &request);
        drop(request);
        let builder = self
            .http
            .post(format!(
                "{}/models/{}:streamGenerateContent?alt=sse",
                self.base_url, self.info.id
            ))
            .header("x-goog-api-key", &self.api_key)
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
            GenerateDecoder::default(),
            cancel,
            clock,
        ))
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
