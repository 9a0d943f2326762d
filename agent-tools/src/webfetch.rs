//! The `webfetch` tool: asks `webfetch` for the URL (§7.2), then GETs it
//! with reqwest (rustls) and returns it as markdown, text or raw HTML.
//! Responses are capped at 5 MB and the request has a timeout.

use std::time::Duration;

use agent_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::html;
use crate::request::ToolRequest;

/// The tool id and permission name.
pub const WEBFETCH: &str = "webfetch";
/// Largest response body accepted (5 MB).
pub const WEBFETCH_MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;
/// Timeout when the call gives none.
pub const WEBFETCH_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest timeout a call may ask for.
pub const WEBFETCH_MAX_TIMEOUT: Duration = Duration::from_secs(120);

const DESCRIPTION: &str = "Fetches a URL (http or https) and returns its content as markdown \
(default), plain text or raw HTML. Responses larger than 5 MB are refused; `timeout` is in \
seconds (default 30, at most 120).";

/// How the fetched content is returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FetchFormat {
    /// HTML converted to plain text.
    Text,
    /// HTML converted to markdown.
    #[default]
    Markdown,
    /// The body as received.
    Html,
}

/// The arguments of the `webfetch` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The URL to fetch (http:// or https://).
    pub url: String,
    /// `markdown` (default), `text` or `html`.
    #[serde(default)]
    pub format: FetchFormat,
    /// Timeout in seconds (default 30, at most 120).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// Why a fetch failed. Messages say what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebFetchError {
    /// The URL is not http(s).
    #[error("The URL must start with http:// or https:// (got {0:?}).")]
    Scheme(String),
    /// The HTTP client could not be built.
    #[error("Could not set up the HTTP client: {0}.")]
    Client(String),
    /// The request did not complete.
    #[error("Fetching {url} failed: {reason}. Check the URL and that the server is reachable.")]
    Request {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// No response within the timeout.
    #[error(
        "Fetching {url} timed out after {seconds} s. Retry with a larger timeout (at most 120) or another URL."
    )]
    Timeout {
        /// The URL.
        url: String,
        /// The timeout.
        seconds: u64,
    },
    /// The server answered with an error status.
    #[error("Request failed with status code: {status} ({url}).")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The body is larger than [`WEBFETCH_MAX_RESPONSE_BYTES`].
    #[error("Response too large (exceeds 5MB limit): {url}. Fetch a more specific page.")]
    TooLarge {
        /// The URL.
        url: String,
    },
}

impl From<WebFetchError> for ToolError {
    fn from(error: WebFetchError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

/// The `webfetch` tool.
#[derive(Debug, Clone)]
pub struct WebFetchTool {
    client: reqwest::Client,
}

impl WebFetchTool {
    /// The permission requests a call makes before fetching (§7.2):
    /// `webfetch` with the URL, "always" approving `*`.
    pub fn requests(args: &WebFetchArgs) -> Vec<ToolRequest> {
        let timeout = args
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(WEBFETCH_DEFAULT_TIMEOUT)
            .min(WEBFETCH_MAX_TIMEOUT);
        vec![
            ToolRequest::new(WEBFETCH, args.url.as_str(), "*").with_metadata(json!({
                "url": args.url,
                "format": format!("{:?}", args.format).to_lowercase(),
                "timeout": timeout.as_secs(),
            })),
        ]
    }

    /// A webfetch tool with its own HTTP client (rustls, no system OpenSSL).
    pub fn new() -> Result<Self, WebFetchError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("agent-sdk/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| WebFetchError::Client(error.to_string()))?;
        Ok(WebFetchTool { client })
    }

    /// A webfetch tool using `client` (to share a pool or set a proxy).
    pub fn with_client(client: reqwest::Client) -> Self {
        WebFetchTool { client }
    }

    async fn fetch(
        &self,
        args: &WebFetchArgs,
        timeout: Duration,
    ) -> Result<(String, String), WebFetchError> {
        let url = args.url.clone();
        let accept = match args.format {
            FetchFormat::Markdown => {
                "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1"
            }
            FetchFormat::Text => {
                "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1"
            }
            FetchFormat::Html => "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1",
        };
        let map = |error: reqwest::Error| {
            if error.is_timeout() {
                WebFetchError::Timeout {
                    url: url.clone(),
                    seconds: timeout.as_secs(),
                }
            } else {
                WebFetchError::Request {
                    url: url.clone(),
                    reason: error.to_string(),
                }
            }
        };
        let mut response = self
            .client
            .get(&url)
            .header(reqwest::header::ACCEPT, accept)
            .timeout(timeout)
            .send()
            .await
            .map_err(map)?;
        let status = response.status();
        if !status.is_success() {
            return Err(WebFetchError::Status {
                url: url.clone(),
                status: status.as_u16(),
            });
        }
        if response
            .content_length()
            .is_some_and(|length| length > WEBFETCH_MAX_RESPONSE_BYTES as u64)
        {
            return Err(WebFetchError::TooLarge { url: url.clone() });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(map)? {
            if body.len() + chunk.len() > WEBFETCH_MAX_RESPONSE_BYTES {
                return Err(WebFetchError::TooLarge { url: url.clone() });
            }
            body.extend_from_slice(&chunk);
        }
        Ok((content_type, String::from_utf8_lossy(&body).into_owned()))
    }
}

#[async_trait::async_trait]
impl TypedTool for WebFetchTool {
    type Args = WebFetchArgs;

    fn id(&self) -> &str {
        WEBFETCH
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn run(&self, args: WebFetchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if !(args.url.starts_with("http://") || args.url.starts_with("https://")) {
            return Err(WebFetchError::Scheme(args.url).into());
        }
        let timeout = args
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(WEBFETCH_DEFAULT_TIMEOUT)
            .min(WEBFETCH_MAX_TIMEOUT);
        for request in Self::requests(&args) {
            request.ask(ctx).await?;
        }
        let (content_type, body) = tokio::select! {
            result = self.fetch(&args, timeout) => result?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let is_html = content_type.contains("text/html") || content_type.contains("xhtml");
        let output = match (args.format, is_html) {
            (FetchFormat::Markdown, true) => html::to_markdown(&body),
            (FetchFormat::Text, true) => html::to_text(&body),
            _ => body,
        };
        Ok(ToolOutput::text(output)
            .with_title(format!("{} ({content_type})", args.url))
            .with_metadata(json!({"url": args.url, "contentType": content_type})))
    }
}
