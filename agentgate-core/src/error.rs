//! Why a model call failed: [`ModelError`] and [`ApiError`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Response headers of a failed HTTP call, keys in lowercase
/// (`retry-after`, `retry-after-ms`, `x-should-retry`, ...).
pub type Headers = BTreeMap<String, String>;

/// An error response from the provider's API (an HTTP status, or an error
/// event inside an otherwise successful stream), the shape of opencode's
/// `APIError`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The provider's message (shown to the user; never parsed except by
    /// the retry rules of §13, which look at it).
    pub message: String,
    /// The HTTP status, when there was one (`None` for a mid-stream error event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether the provider adapter considers the call worth retrying
    /// (e.g. 408/409/429, an overload, `x-should-retry: true`). Statuses
    /// of 500 and above are retried regardless.
    #[serde(default)]
    pub is_retryable: bool,
    /// The response headers, when the failure was an HTTP response.
    /// Their presence changes the backoff schedule (§13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Headers>,
    /// The raw response body, for diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl ApiError {
    /// An API error with a message and an HTTP status; retryable when the
    /// status is 408, 409, 429 or at least 500.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError {
            message: message.into(),
            status: Some(status),
            is_retryable: matches!(status, 408 | 409 | 429) || status >= 500,
            headers: None,
            body: None,
        }
    }

    /// Adds a response header (the name is lowercased).
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers
            .get_or_insert_with(Headers::new)
            .insert(name.to_ascii_lowercase(), value.into());
        self
    }

    /// Sets whether the error is worth retrying.
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.is_retryable = retryable;
        self
    }

    /// The raw `retry-after-ms` header value, if any.
    pub fn retry_after_ms(&self) -> Option<&str> {
        self.header("retry-after-ms")
    }

    /// The raw `retry-after` header value (seconds or an HTTP date), if any.
    pub fn retry_after(&self) -> Option<&str> {
        self.header("retry-after")
    }

    /// A header by name, ignoring ASCII case.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(self.headers.as_ref()?, name)
    }
}

/// A header of `headers` by name, ignoring ASCII case (HTTP header names
/// are case-insensitive, and hosts may fill the map as the server wrote them).
pub fn header_in<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .or_else(|| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .map(String::as_str)
}

/// Why a model call or its stream failed.
///
/// The loop retries some of these (see [`RetryPolicy`](crate::RetryPolicy)); the
/// rest end the turn with the error recorded on the assistant message.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error.
    #[error("provider error{}: {}", .0.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default(), .0.message)]
    Api(ApiError),
    /// The request does not fit the model's context window (OpenAI
    /// `context_length_exceeded`, Anthropic "prompt is too long", Gemini
    /// token-count `INVALID_ARGUMENT`). Never retried: the history must be
    /// compacted first.
    #[error("context window exceeded: {message}; compact or shorten the conversation")]
    ContextOverflow {
        /// The provider's message.
        message: String,
    },
    /// The connection dropped or the stream ended without its terminal
    /// event (a cut stream). Retried like a retryable API error without
    /// response headers.
    #[error("model stream interrupted: {message}")]
    Interrupted {
        /// What happened.
        message: String,
    },
    /// The call was cancelled through its `CancellationToken`.
    #[error("model call cancelled")]
    Cancelled,
    /// A client timeout fired: no response headers in time, no stream data
    /// for too long, or the whole request took too long. The message names
    /// the timeout and the setting that changes it. Retried at most once
    /// per step: a server that stalls twice will likely stall again, and
    /// each stall already cost the whole timeout.
    #[error("{message}")]
    TimedOut {
        /// What timed out, and how to change the limit.
        message: String,
    },
    /// The server could not be reached at all (connection refused, host
    /// not found). On a step's first attempt this is most likely a wrong
    /// base URL and is reported at once; after an attempt that reached the
    /// server it is a server restarting, and is retried.
    #[error("{message}")]
    Unreachable {
        /// What failed, and what to check.
        message: String,
    },
    /// Anything else (a malformed response, a client-side failure). Retried
    /// only when the message looks like a rate limit (§13).
    #[error("{message}")]
    Other {
        /// What happened.
        message: String,
    },
}

impl ModelError {
    /// A [`ModelError::Other`] with this message.
    pub fn other(message: impl Into<String>) -> Self {
        ModelError::Other {
            message: message.into(),
        }
    }

    /// A [`ModelError::Interrupted`] with this message.
    pub fn interrupted(message: impl Into<String>) -> Self {
        ModelError::Interrupted {
            message: message.into(),
        }
    }

    /// A [`ModelError::TimedOut`] with this message.
    pub fn timed_out(message: impl Into<String>) -> Self {
        ModelError::TimedOut {
            message: message.into(),
        }
    }

    /// A [`ModelError::Unreachable`] with this message.
    pub fn unreachable(message: impl Into<String>) -> Self {
        ModelError::Unreachable {
            message: message.into(),
        }
    }

    /// The HTTP status, for API errors that have one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ModelError::Api(api) => api.status,
            _ => None,
        }
    }

    /// The response headers the backoff schedule looks at: those of an
    /// API error, when it has any (§13).
    pub fn retry_headers(&self) -> Option<&Headers> {
        match self {
            ModelError::Api(api) => api.headers.as_ref(),
            _ => None,
        }
    }

    /// Whether this is a context-window overflow.
    pub fn is_context_overflow(&self) -> bool {
        matches!(self, ModelError::ContextOverflow { .. })
    }
}

impl From<ApiError> for ModelError {
    fn from(error: ApiError) -> Self {
        ModelError::Api(error)
    }
}
