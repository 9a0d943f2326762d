//! The HTTP plumbing shared by the clients: sending a request (error
//! responses mapped by [`crate::error_body`]), and driving a provider
//! decoder over the server-sent events of a 200 response.
//!
//! Nothing here retries: the agent loop owns retries (§13), so errors are
//! mapped faithfully (status, headers, `x-should-retry`) and returned.
//! Every wait is bounded by the call's [`CallClock`] (the header, chunk and
//! whole-request timeouts).

use std::collections::VecDeque;
use std::io::Write;

use agentgate_core::{EventStream, Headers, ModelError, StreamEvent};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error_body::{Classify, map_error_response};
use crate::sse::{SseEvent, sse_events};
use crate::timeouts::{CallClock, Which};

/// A provider's stream state machine: turns SSE events into
/// [`StreamEvent`]s and knows whether the terminal event arrived.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event. An `Err` ends the stream.
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;
    /// Whether the terminal event was seen (the driver stops reading).
    fn finished(&self) -> bool;
    /// The body ended before [`Decoder::finished`]: emit what can still be
    /// emitted or say why the stream is incomplete.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;
}

/// The builder methods every client shares: base URL, extra headers, model
/// description, HTTP client, timeouts and where the key came from. The
/// client type must have the fields `base_url`, `headers`, `info`, `http`,
/// `timeouts` and `key_source`.
macro_rules! client_builders {
    ($client:ty) => {
        impl $client {
            /// Replaces the base URL (everything before the endpoint path,
            /// e.g. `https://host/v1`); a trailing `/` is ignored.
            pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
                self.base_url = base_url.into().trim_end_matches('/').to_string();
                self
            }

            /// Adds a header to every request (a beta flag, an organisation id ...).
            pub fn with_header(
                mut self,
                name: impl Into<String>,
                value: impl Into<String>,
            ) -> Self {
                self.headers.push((name.into(), value.into()));
                self
            }

            /// Says where the API key came from, as a place: `"the
            /// ANTHROPIC_API_KEY environment variable"`,
            /// ``"`provider.local.options.apiKey` in ~/.config/opencode/opencode.json"``.
            /// A 401 response's error names it, so the person knows which
            /// key to correct.
            pub fn with_key_source(mut self, source: impl Into<String>) -> Self {
                self.key_source = Some(source.into());
                self
            }

            /// Replaces the model description (limits, capabilities).
            pub fn with_info(mut self, info: agentgate_core::ModelInfo) -> Self {
                self.info = info;
                self
            }

            /// Uses this `reqwest` client (proxies, timeouts, connection
            /// pool) instead of the process-wide shared one.
            pub fn with_http_client(mut self, http: reqwest::Client) -> Self {
                self.http = http;
                self
            }

            /// Ends a stream with `ModelError::TimedOut` when no bytes
            /// arrive for this long: the same as
            /// [`with_chunk_timeout`](Self::with_chunk_timeout)`(Some(timeout))`.
            pub fn with_idle_timeout(mut self, timeout: std::time::Duration) -> Self {
                self.timeouts.chunk = Some(timeout);
                self
            }

            /// Replaces all three timeouts (see [`crate::Timeouts`]).
            pub fn with_timeouts(mut self, timeouts: crate::Timeouts) -> Self {
                self.timeouts = timeouts;
                self
            }

            /// How long the response headers may take (opencode's
            /// `headerTimeout`; default 5 minutes, `None`: no limit).
            pub fn with_header_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
                self.timeouts.header = timeout;
                self
            }

            /// How long the stream may be silent between two chunks
            /// (opencode's `chunkTimeout`; default 5 minutes, `None`: no
            /// limit).
            pub fn with_chunk_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
                self.timeouts.chunk = timeout;
                self
            }

            /// How long the whole request may take, headers and stream
            /// (opencode's `timeout`; default `None`: no limit).
            pub fn with_request_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
                self.timeouts.total = timeout;
                self
            }

            /// The timeouts calls use.
            pub fn timeouts(&self) -> crate::Timeouts {
                self.timeouts
            }

            /// The base URL requests go to.
            pub fn base_url(&self) -> &str {
                &self.base_url
            }
        }
    };
}
pub(crate) use client_builders;

/// An environment variable's value, unless it is unset or blank.
pub(crate) fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// How long a connection attempt may take before the call fails with
/// `Interrupted` (a dead host must not hang a turn for minutes).
pub(crate) const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One `reqwest` client shared by every model client that was not given
/// its own, so they share a connection pool.
pub(crate) fn shared_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// Sends a request; a non-2xx response becomes a mapped [`ModelError`]
/// whose message names the URL it came from. The headers must arrive
/// within the clock's header timeout.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    cancel: &CancellationToken,
    classify: Classify,
    clock: &CallClock,
) -> Result<reqwest::Response, ModelError> {
    let (client, request) = request.build_split();
    let request = request.map_err(|e| {
        ModelError::other(format!(
            "invalid base URL: {}; it must be an http:// or https:// URL",
            error_chain(&e)
        ))
    })?;
    let target = format!("{} {}", request.method(), without_query(request.url()));
    if !matches!(request.url().scheme(), "http" | "https") {
        return Err(ModelError::other(format!(
            "invalid base URL for {target}: it must start with http:// or https://"
        )));
    }
    let wait = clock.header_wait();
    let response = tokio::select! {
        _ = cancel.cancelled() => return Err(ModelError::Cancelled),
        response = within(wait, client.execute(request)) => match response {
            Ok(response) => response.map_err(|e| send_error(e, &target))?,
            Err(which) => return Err(clock.error(which)),
        },
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let headers = lowercase_headers(response.headers());
    // An error body that never ends is cut at the chunk timeout: the
    // status and headers already say what happened.
    let body = tokio::select! {
        _ = cancel.cancelled() => return Err(ModelError::Cancelled),
        body = within(clock.chunk_wait(), response.text()) => match body {
            Ok(body) => body.unwrap_or_default(),
            Err(_) => String::new(),
        },
    };
    Err(
        match map_error_response(status.as_u16(), headers, body, classify) {
            ModelError::Api(mut api) => {
                api.message = format!("{} ({target})", api.message);
                ModelError::Api(api)
            }
            other => other,
        },
    )
}

/// The URL without its query string (which may carry a key on some
/// gateways), for messages.
fn without_query(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.to_string()
}

/// `future`, unless `limit` passes first: then which timeout that was.
async fn within<F: std::future::Future>(
    limit: Option<(std::time::Duration, Which)>,
    future: F,
) -> Result<F::Output, Which> {
    match limit {
        Some((limit, which)) => tokio::time::timeout(limit, future).await.map_err(|_| which),
        None => Ok(future.await),
    }
}

/// A failure to get a response. A host that refuses the connection or does
/// not resolve is `Unreachable`: on a step's first attempt the loop reports
/// it at once (retrying a wrong base URL would keep a turn silent for
/// minutes), after a failed attempt it retries (a server restarting); a
/// timeout or a reset connection is `Interrupted`, which the loop retries.
fn send_error(error: reqwest::Error, target: &str) -> ModelError {
    if error.is_connect() && !error.is_timeout() {
        return ModelError::unreachable(format!(
            "could not connect to {target}: {}; check that the server is running and the \
             provider's base URL (`provider.<id>.options.baseURL` in opencode.json, or the \
             provider's base URL variable such as OPENAI_BASE_URL)",
            error_chain(&error)
        ));
    }
    if error.is_builder() {
        return ModelError::other(format!(
            "invalid base URL for {target}: {}",
            error_chain(&error)
        ));
    }
    let kind = if error.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    ModelError::interrupted(format!("{kind}: {target}: {}", error_chain(&error)))
}

/// An error and its sources, `: `-separated (reqwest's own message leaves
/// out the cause, such as "Connection refused").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A failure while reading the body of a 200 response (reset, timeout).
pub(crate) fn transport_error(error: reqwest::Error) -> ModelError {
    let kind = if error.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    // A cut body is retried by the loop like a cut stream.
    ModelError::interrupted(format!("{kind}: {}", error_chain(&error)))
}

fn lowercase_headers(headers: &reqwest::header::HeaderMap) -> Headers {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let value = value.to_str().ok()?;
            Some((name.as_str().to_ascii_lowercase(), value.to_string()))
        })
        .collect()
}

/// Drives `decoder` over the SSE body of `response`, stopping promptly
/// when `cancel` fires. The stream ends after the decoder's terminal
/// event or after the first error.
pub(crate) fn drive<D: Decoder>(
    response: reqwest::Response,
    decoder: D,
    cancel: CancellationToken,
    clock: CallClock,
) -> EventStream {
    struct State<S, D> {
        events: S,
        decoder: D,
        ready: VecDeque<Result<StreamEvent, ModelError>>,
        done: bool,
        cancel: CancellationToken,
        clock: CallClock,
    }
    let state = State {
        events: Box::pin(sse_events(response.bytes_stream())),
        decoder,
        ready: VecDeque::new(),
        done: false,
        cancel,
        clock,
    };
    Box::pin(futures::stream::unfold(
        state,
        move |mut state| async move {
            loop {
                if let Some(item) = state.ready.pop_front() {
                    return Some((item, state));
                }
                if state.done {
                    return None;
                }
                let wait = state.clock.chunk_wait();
                let next = tokio::select! {
                    biased;
                    _ = state.cancel.cancelled() => {
                        state.done = true;
                        return Some((Err(ModelError::Cancelled), state));
                    }
                    next = within(wait, state.events.next()) => match next {
                        Ok(next) => next,
                        Err(which) => {
                            state.done = true;
                            let error = state.clock.error(which);
                            return Some((Err(error), state));
                        }
                    },
                };
                let mut out = Vec::new();
                let result = match next {
                    Some(Ok(event)) => state.decoder.event(event, &mut out),
                    Some(Err(crate::SseError::Transport(e))) => Err(transport_error(e)),
                    Some(Err(too_large)) => Err(ModelError::other(too_large.to_string())),
                    None => {
                        state.done = true;
                        state.decoder.end(&mut out)
                    }
                };
                state.ready.extend(out.into_iter().map(Ok));
                match result {
                    Ok(()) => state.done |= state.decoder.finished(),
                    Err(error) => {
                        state.ready.push_back(Err(error));
                        state.done = true;
                    }
                }
            }
        },
    ))
}

/// Parses a JSON `data:` payload into the provider's typed event; a
/// malformed line (or one of an unexpected shape) is an error naming the
/// provider, never a panic.
pub(crate) fn parse_event<T: DeserializeOwned>(
    provider: &str,
    data: &str,
) -> Result<T, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        let mut snippet: String = data.chars().take(200).collect();
        if snippet.len() < data.len() {
            snippet.push('…');
        }
        ModelError::other(format!(
            "{provider} sent a malformed stream event ({e}): {snippet}"
        ))
    })
}

/// Parses accumulated tool-call argument text: empty means `{}`, invalid
/// JSON is passed on as a JSON string so the tool reports it to the model.
pub(crate) fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Merges the provider options of `request.options[key]` (an object) into
/// a request body, overriding what the client set: objects are merged key
/// by key (so `{"generationConfig": {"thinkingConfig": …}}` keeps the
/// client's `maxOutputTokens`), anything else replaces.
/// The request body of `typed` as a JSON value, the pass-through options
/// of `options[key]` merged over it (what a client's `request_body`
/// returns).
pub(crate) fn body_value<T: serde::Serialize>(
    typed: &T,
    options: &serde_json::Map<String, Value>,
    key: &str,
) -> Value {
    let mut body = serde_json::to_value(typed).unwrap_or(Value::Null);
    merge_options(&mut body, options, key);
    body
}

/// The bytes a client sends for `typed` with `options[key]` merged over
/// it: the same bytes as [`body_value`] serialised (serde_json keeps the
/// fields' order), but without building the JSON tree of the whole
/// history first when there is nothing to merge, which is the common case.
/// The buffer is sized from `size_hint` (the previous body's size), so
/// a large history is not copied again at each doubling of the buffer.
pub(crate) fn body_bytes<T: serde::Serialize>(
    typed: &T,
    options: &serde_json::Map<String, Value>,
    key: &str,
    size_hint: &SizeHint,
) -> Vec<u8> {
    use std::sync::atomic::Ordering;
    let hint = size_hint.0.load(Ordering::Relaxed);
    let mut bytes = Vec::with_capacity(hint.saturating_add(hint / 8).max(1024));
    let written = match options.get(key) {
        Some(Value::Object(extra)) if !extra.is_empty() => {
            serde_json::to_writer(&mut bytes, &body_value(typed, options, key))
        }
        _ => serde_json::to_writer(&mut bytes, typed),
    };
    if written.is_err() {
        bytes.clear();
        bytes.extend_from_slice(b"null");
    }
    size_hint.0.store(bytes.len(), Ordering::Relaxed);
    bytes
}

/// The bytes of [`body_value`] for a request whose history is written
/// apart: `typed` serialises field `field` as an empty array, and
/// `history` is written in its place, so cached encodings
/// ([`crate::encode_cache::Cached::Raw`]) go into the body as they are,
/// never through a JSON tree, and those of `shared` (see
/// [`crate::request_body::shareable`]) go out as chunks of their own,
/// without a copy. Only the fields around the history go
/// through one (small: the model, the tools, the settings), to merge
/// `options[key]` over them exactly as [`body_value`] does. `None` when
/// the options replace the history field itself (the caller then encodes
/// the whole body the plain way).
///
/// `kept` is a field `typed` leaves out whose encoding the caller keeps
/// (the tool list, see [`crate::tools_encoding`]): it is written as it is,
/// where `typed` would have put it, and only goes through the tree when
/// options are merged over the head.
#[allow(clippy::too_many_arguments)]
pub(crate) fn body_bytes_with_history<T: serde::Serialize, H: serde::Serialize>(
    typed: &T,
    field: &str,
    history: &H,
    kept: Option<KeptField<'_>>,
    options: &serde_json::Map<String, Value>,
    key: &str,
    size_hint: &SizeHint,
    mut shared: Vec<bytes::Bytes>,
) -> Option<crate::request_body::RequestBody> {
    use std::sync::atomic::Ordering;
    let merged = match options.get(key) {
        Some(Value::Object(extra)) if extra.contains_key(field) => return None,
        Some(Value::Object(_)) => true,
        _ => false,
    };
    let mut head = serde_json::to_value(typed).ok()?;
    if let (Some(kept), Value::Object(fields)) = (&kept, &mut head) {
        let at = fields
            .keys()
            .position(|name| name == kept.before)
            .unwrap_or(fields.len());
        // Options merge over the real value; otherwise the place is held
        // and the kept encoding written there.
        let value = if merged {
            serde_json::from_str(kept.encoded.first()?.get()).ok()?
        } else {
            Value::Null
        };
        fields.shift_insert(at, kept.name.to_string(), value);
    }
    merge_options(&mut head, options, key);
    let Value::Object(fields) = head else {
        return None;
    };
    let written_raw = kept.filter(|_| !merged);
    if let Some(kept) = &written_raw {
        shared.extend(crate::request_body::shareable(std::slice::from_ref(
            kept.encoded,
        )));
    }
    let hint = size_hint.0.load(Ordering::Relaxed);
    let mut out =
        crate::request_body::ChunkWriter::new(shared, hint.saturating_add(hint / 8).max(1024));
    out.write_all(b"{").ok()?;
    for (index, (name, value)) in fields.iter().enumerate() {
        if index > 0 {
            out.write_all(b",").ok()?;
        }
        serde_json::to_writer(&mut out, name).ok()?;
        out.write_all(b":").ok()?;
        match &written_raw {
            _ if name == field => serde_json::to_writer(&mut out, history).ok()?,
            Some(kept) if name == kept.name => {
                serde_json::to_writer(&mut out, kept.encoded.first()?).ok()?
            }
            _ => serde_json::to_writer(&mut out, value).ok()?,
        }
    }
    out.write_all(b"}").ok()?;
    // The next body's copied part starts this big (the shared chunks are
    // not copied).
    size_hint.0.store(out.copied(), Ordering::Relaxed);
    Some(out.finish())
}

/// A field of a request's head written from an encoding the client keeps
/// (see [`body_bytes_with_history`]).
pub(crate) struct KeptField<'a> {
    /// The field's name.
    pub name: &'static str,
    /// The field it comes before in the typed head (at the end when the
    /// head has no such field).
    pub before: &'static str,
    /// Its encoding (one raw value).
    pub encoded: &'a crate::tools_encoding::EncodedTools,
}

/// The size of the last request body a client sent: the next body's
/// buffer starts that large (the history only grows between steps).
#[derive(Debug, Default)]
pub(crate) struct SizeHint(std::sync::atomic::AtomicUsize);

impl Clone for SizeHint {
    fn clone(&self) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        SizeHint(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }
}

/// Sets `bytes` as the JSON body of `builder` (as `RequestBuilder::json`
/// does for a value).
pub(crate) fn json_body(
    builder: reqwest::RequestBuilder,
    body: crate::request_body::RequestBody,
) -> reqwest::RequestBuilder {
    builder
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.into_reqwest())
}

pub(crate) fn merge_options(body: &mut Value, options: &serde_json::Map<String, Value>, key: &str) {
    if let Some(extra @ Value::Object(_)) = options.get(key) {
        deep_merge(body, extra);
    }
}

fn deep_merge(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                match into.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        into.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (into, from) => *into = from.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_merge_objects_key_by_key() {
        let mut body = serde_json::json!({"a": {"x": 1, "y": 2}, "b": 1});
        let mut options = serde_json::Map::new();
        options.insert(
            "p".into(),
            serde_json::json!({"a": {"y": 3, "z": 4}, "b": [1]}),
        );
        merge_options(&mut body, &options, "p");
        assert_eq!(
            body,
            serde_json::json!({"a": {"x": 1, "y": 3, "z": 4}, "b": [1]})
        );
    }

    #[test]
    fn arguments_parse_or_pass_through() {
        assert_eq!(parse_arguments(""), serde_json::json!({}));
        assert_eq!(parse_arguments("{\"a\":1}"), serde_json::json!({"a": 1}));
        assert_eq!(parse_arguments("{\"a\""), serde_json::json!("{\"a\""));
    }
}
