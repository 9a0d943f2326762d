//! The `webfetch` tool: asks `webfetch` for the URL (§7.2), then GETs it
//! with reqwest (rustls) and returns it as markdown, text or raw HTML.
//! Responses are capped at 5 MB and the request has a timeout.
//!
//! Beyond opencode (see `docs/security.md`): the URL is also matched in its
//! normalised form (`http://127.1`, `http://LOCALHOST.`, `http://2130706433`
//! are all `http://127.0.0.1/` or `http://localhost/`), and redirects are
//! followed by the tool itself, each hop asked like the first URL, so a
//! redirect cannot lead to a URL the rules deny.

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
/// Redirects followed at most.
pub const WEBFETCH_MAX_REDIRECTS: usize = 10;

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
    /// More than [`WEBFETCH_MAX_REDIRECTS`] redirects, or one without a
    /// usable `Location`.
    #[error("Fetching {url} failed: {reason}. Fetch the final URL directly.")]
    Redirect {
        /// The URL that redirected.
        url: String,
        /// What is wrong with the redirect.
        reason: String,
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
    /// `webfetch` with the URL as given and in its normalised forms (see
    /// [`url_patterns`]), "always" approving `*`. Each redirect is asked
    /// the same way before it is followed.
    pub fn requests(args: &WebFetchArgs) -> Vec<ToolRequest> {
        let timeout = args
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(WEBFETCH_DEFAULT_TIMEOUT)
            .min(WEBFETCH_MAX_TIMEOUT);
        vec![hop_request(&args.url, args.format, timeout)]
    }

    /// A webfetch tool with its own HTTP client (rustls, no system
    /// OpenSSL, redirects left to the tool so each hop is asked).
    pub fn new() -> Result<Self, WebFetchError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("agent-sdk/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| WebFetchError::Client(error.to_string()))?;
        Ok(WebFetchTool { client })
    }

    /// A webfetch tool using `client` (to share a pool or set a proxy).
    /// Build it with `.redirect(reqwest::redirect::Policy::none())`: the
    /// tool follows redirects itself, asking for each hop; a client that
    /// follows them on its own would skip those checks.
    pub fn with_client(client: reqwest::Client) -> Self {
        WebFetchTool { client }
    }

    /// One GET of `url`: the response, or where it redirects to.
    async fn fetch_once(
        &self,
        url: &str,
        format: FetchFormat,
        timeout: Duration,
    ) -> Result<Hop, WebFetchError> {
        let accept = match format {
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
                    url: url.to_string(),
                    seconds: timeout.as_secs(),
                }
            } else {
                WebFetchError::Request {
                    url: url.to_string(),
                    reason: error.to_string(),
                }
            }
        };
        let mut response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, accept)
            .timeout(timeout)
            .send()
            .await
            .map_err(map)?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| WebFetchError::Redirect {
                    url: url.to_string(),
                    reason: format!("status {} without a Location header", status.as_u16()),
                })?;
            let next = response
                .url()
                .join(location)
                .map_err(|error| WebFetchError::Redirect {
                    url: url.to_string(),
                    reason: format!("invalid Location {location:?}: {error}"),
                })?;
            return Ok(Hop::Redirect(next.to_string()));
        }
        if !status.is_success() {
            return Err(WebFetchError::Status {
                url: url.to_string(),
                status: status.as_u16(),
            });
        }
        if response
            .content_length()
            .is_some_and(|length| length > WEBFETCH_MAX_RESPONSE_BYTES as u64)
        {
            return Err(WebFetchError::TooLarge {
                url: url.to_string(),
            });
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
                return Err(WebFetchError::TooLarge {
                    url: url.to_string(),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Hop::Done(
            content_type,
            String::from_utf8_lossy(&body).into_owned(),
        ))
    }

    /// Fetches `args.url`, asking for every redirect before following it;
    /// returns the final URL, its content type and body.
    async fn fetch(
        &self,
        args: &WebFetchArgs,
        timeout: Duration,
        ctx: &ToolContext,
    ) -> Result<(String, String, String), ToolError> {
        let mut url = args.url.clone();
        for hop in 0..=WEBFETCH_MAX_REDIRECTS {
            if hop > 0 {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(WebFetchError::Scheme(url).into());
                }
                hop_request(&url, args.format, timeout).ask(ctx).await?;
            }
            match self.fetch_once(&url, args.format, timeout).await? {
                Hop::Redirect(next) => url = next,
                Hop::Done(content_type, body) => return Ok((url, content_type, body)),
            }
        }
        Err(WebFetchError::Redirect {
            url: args.url.clone(),
            reason: format!("more than {WEBFETCH_MAX_REDIRECTS} redirects"),
        }
        .into())
    }
}

/// What one GET gave.
enum Hop {
    /// A redirect to this absolute URL.
    Redirect(String),
    /// The content type and body.
    Done(String, String),
}

/// The `webfetch` request for one URL.
fn hop_request(url: &str, format: FetchFormat, timeout: Duration) -> ToolRequest {
    ToolRequest {
        permission: WEBFETCH.to_string(),
        patterns: url_patterns(url),
        always: vec!["*".to_string()],
        metadata: json!({
            "url": url,
            "format": format!("{format:?}").to_lowercase(),
            "timeout": timeout.as_secs(),
        }),
    }
}

/// The patterns a URL is matched on: as given, then as the fetch will use
/// it (WHATWG parsing: scheme and host lower-cased, IPv4 shorthand,
/// decimal, octal and hex hosts written as dotted quads, default port
/// dropped), then that without user info or a trailing dot on the host.
///
/// ```
/// use agent_tools::url_patterns;
/// assert_eq!(url_patterns("http://127.1:80/x"), ["http://127.1:80/x", "http://127.0.0.1/x"]);
/// assert!(url_patterns("http://2130706433/").contains(&"http://127.0.0.1/".to_string()));
/// assert!(url_patterns("HTTP://u:p@LOCALHOST./").contains(&"http://localhost/".to_string()));
/// ```
pub fn url_patterns(url: &str) -> Vec<String> {
    let mut patterns = vec![url.to_string()];
    let mut push = |pattern: String| {
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    };
    if let Ok(mut parsed) = reqwest::Url::parse(url) {
        push(parsed.to_string());
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        if let Some(host) = parsed.host_str().map(str::to_string)
            && let Some(bare) = host.strip_suffix('.')
            && !bare.is_empty()
        {
            let _ = parsed.set_host(Some(bare));
        }
        push(parsed.to_string());
    }
    patterns
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
        let (final_url, content_type, body) = tokio::select! {
            result = self.fetch(&args, timeout, ctx) => result?,
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
            .with_metadata(
                json!({"url": args.url, "finalUrl": final_url, "contentType": content_type}),
            ))
    }
}
