//! The `webfetch` tool: asks `webfetch` for the URL (§7.2), then GETs it
//! with reqwest (rustls) and returns it as markdown, text or raw HTML.
//! Responses are capped at 5 MB and the request has a timeout.
//!
//! Beyond opencode (see `docs/security.md`): the URL is also matched in its
//! canonical form, the host written as the network stack reaches it
//! (`http://127.1`, `http://[::ffff:7f00:1]`, `http://0.0.0.0`,
//! `http://2130706433` are all `http://127.0.0.1/`; see the `canonical`
//! module), and the fetch uses that very form, so the address judged is the
//! address connected to. Redirects are followed by the tool itself, each
//! hop judged and asked like the first URL, so a redirect cannot lead to a
//! URL the rules deny.

use std::time::Duration;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

mod canonical;

use reqwest::Url;

use crate::files::request::ToolRequest;
use crate::limits::WebFetchLimits;
use crate::web::html;

/// The tool id and permission name.
pub const WEBFETCH: &str = "webfetch";

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
    /// The URL does not parse (an IPv6 zone id, a bad host or port).
    #[error("{url:?} is not a valid URL: {reason}. Give an absolute http:// or https:// URL.")]
    Invalid {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
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
    /// More than [`WebFetchLimits::max_redirects`] redirects, or one without a
    /// usable `Location`.
    #[error("Fetching {url} failed: {reason}. Fetch the final URL directly.")]
    Redirect {
        /// The URL that redirected.
        url: String,
        /// What is wrong with the redirect.
        reason: String,
    },
    /// The body is larger than [`WebFetchLimits::max_response_bytes`].
    #[error("Response too large (exceeds {}MB limit): {url}. Fetch a more specific page.", .limit.div_ceil(1024 * 1024))]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit, in bytes.
        limit: usize,
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
    limits: WebFetchLimits,
}

impl WebFetchTool {
    /// The permission requests a call makes before fetching (§7.2):
    /// `webfetch` with the URL as given and in its normalised forms (see
    /// [`url_patterns`]), "always" approving `*`. Each redirect is asked
    /// the same way before it is followed. The timeout shown is the one
    /// [`WebFetchLimits::default`] gives; [`WebFetchTool::requests_for`]
    /// uses a tool's own limits.
    pub fn requests(args: &WebFetchArgs) -> Vec<ToolRequest> {
        requests_with(args, &WebFetchLimits::default())
    }

    /// [`WebFetchTool::requests`] with this tool's limits.
    pub fn requests_for(&self, args: &WebFetchArgs) -> Vec<ToolRequest> {
        requests_with(args, &self.limits)
    }

    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: WebFetchLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &WebFetchLimits {
        &self.limits
    }

    /// A webfetch tool with its own HTTP client (rustls, no system
    /// OpenSSL, redirects left to the tool so each hop is asked).
    pub fn new() -> Result<Self, WebFetchError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("agent-sdk/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| WebFetchError::Client(error.to_string()))?;
        Ok(WebFetchTool::with_client(client))
    }

    /// A webfetch tool using `client` (to share a pool or set a proxy).
    /// Build it with `.redirect(reqwest::redirect::Policy::none())`: the
    /// tool follows redirects itself, asking for each hop; a client that
    /// follows them on its own would skip those checks.
    pub fn with_client(client: reqwest::Client) -> Self {
        WebFetchTool {
            client,
            limits: WebFetchLimits::default(),
        }
    }

    /// One GET of the judged URL: the response, or where it redirects to.
    /// The request is built from the judged [`Url`] itself (no text is
    /// parsed again) and checked to still carry it before it is sent.
    async fn fetch_once(
        &self,
        judged: &canonical::Judged,
        format: FetchFormat,
        timeout: Duration,
    ) -> Result<Hop, WebFetchError> {
        let url = judged.canonical.as_str();
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
        let request = self
            .client
            .get(judged.fetch.clone())
            .header(reqwest::header::ACCEPT, accept)
            .timeout(timeout)
            .build()
            .map_err(map)?;
        if !same_destination(request.url(), &judged.canonical) {
            return Err(WebFetchError::Request {
                url: url.to_string(),
                reason: format!("the client would request {} instead", request.url()),
            });
        }
        let mut response = self.client.execute(request).await.map_err(map)?;
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
            let next =
                judged
                    .canonical
                    .join(location)
                    .map_err(|error| WebFetchError::Redirect {
                        url: url.to_string(),
                        reason: format!("invalid Location {location:?}: {error}"),
                    })?;
            return Ok(Hop::Redirect(next));
        }
        if !status.is_success() {
            return Err(WebFetchError::Status {
                url: url.to_string(),
                status: status.as_u16(),
            });
        }
        if response
            .content_length()
            .is_some_and(|length| length > self.limits.max_response_bytes as u64)
        {
            return Err(WebFetchError::TooLarge {
                url: url.to_string(),
                limit: self.limits.max_response_bytes,
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
            if body.len() + chunk.len() > self.limits.max_response_bytes {
                return Err(WebFetchError::TooLarge {
                    url: url.to_string(),
                    limit: self.limits.max_response_bytes,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Hop::Done(
            content_type,
            String::from_utf8_lossy(&body).into_owned(),
        ))
    }

    /// Fetches the judged first URL, judging and asking for every redirect
    /// before following it; returns the final URL, its content type and
    /// body.
    async fn fetch(
        &self,
        first: canonical::Judged,
        args: &WebFetchArgs,
        timeout: Duration,
        ctx: &ToolContext,
    ) -> Result<(String, String, String), ToolError> {
        let mut judged = first;
        let max_redirects = self.limits.max_redirects;
        for hop in 0..=max_redirects {
            match self.fetch_once(&judged, args.format, timeout).await? {
                Hop::Redirect(_) if hop == max_redirects => break,
                Hop::Redirect(next) => {
                    let text = next.to_string();
                    judged = canonical::judge_url(next).map_err(|error| unjudged(&text, error))?;
                    hop_request(&text, args.format, timeout).ask(ctx).await?;
                }
                Hop::Done(content_type, body) => {
                    return Ok((judged.canonical.to_string(), content_type, body));
                }
            }
        }
        Err(WebFetchError::Redirect {
            url: args.url.clone(),
            reason: format!("more than {max_redirects} redirects"),
        }
        .into())
    }
}

/// Whether the client's request goes where the judged URL says: same
/// scheme, host and port (user info moves to a header, so it may differ).
fn same_destination(request: &Url, judged: &Url) -> bool {
    request.scheme() == judged.scheme()
        && request.host_str() == judged.host_str()
        && request.port_or_known_default() == judged.port_or_known_default()
        && request.path() == judged.path()
        && request.query() == judged.query()
}

/// The error for a URL that cannot be judged.
fn unjudged(url: &str, error: canonical::Unjudged) -> WebFetchError {
    match error {
        canonical::Unjudged::Scheme => WebFetchError::Scheme(url.to_string()),
        canonical::Unjudged::Invalid(reason) => WebFetchError::Invalid {
            url: url.to_string(),
            reason,
        },
    }
}

/// What one GET gave.
enum Hop {
    /// A redirect to this absolute URL (parsed, not yet judged).
    Redirect(Url),
    /// The content type and body.
    Done(String, String),
}

/// The `webfetch` request for one URL.
/// The timeout of a call: its own, else the default, at most the maximum.
fn call_timeout(args: &WebFetchArgs, limits: &WebFetchLimits) -> Duration {
    args.timeout
        .map(Duration::from_secs)
        .unwrap_or(limits.default_timeout)
        .min(limits.max_timeout)
}

/// The requests of a call under `limits`.
fn requests_with(args: &WebFetchArgs, limits: &WebFetchLimits) -> Vec<ToolRequest> {
    vec![hop_request(
        &args.url,
        args.format,
        call_timeout(args, limits),
    )]
}

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

/// The patterns a URL is matched on: as given (opencode's pattern), then
/// its canonical form, the one the fetch uses: WHATWG parsing (scheme and
/// host lower-cased, percent-encoding undone, IPv4 shorthand, decimal,
/// octal and hex hosts written as dotted quads, default port dropped),
/// then the host as the network stack reaches it (IPv4-mapped and
/// IPv4-compatible IPv6 written as IPv4, `0.0.0.0` and `[::]` as loopback,
/// no trailing dot), without user info or fragment. A loopback host
/// (`localhost` and `*.localhost` by RFC 6761, `127.0.0.0/8`, `[::1]`)
/// adds the same URL with `127.0.0.1` and with `[::1]`.
///
/// ```
/// use agentgate_tools::url_patterns;
/// assert_eq!(
///     url_patterns("http://127.1:80/x"),
///     ["http://127.1:80/x", "http://127.0.0.1/x", "http://[::1]/x"],
/// );
/// assert_eq!(url_patterns("https://example.com/"), ["https://example.com/"]);
/// assert!(url_patterns("http://2130706433/").contains(&"http://127.0.0.1/".to_string()));
/// assert!(url_patterns("http://[::ffff:7f00:1]/").contains(&"http://127.0.0.1/".to_string()));
/// assert!(url_patterns("http://0/").contains(&"http://127.0.0.1/".to_string()));
/// assert_eq!(
///     url_patterns("HTTP://u:p@LOCALHOST./"),
///     ["HTTP://u:p@LOCALHOST./", "http://localhost/", "http://127.0.0.1/", "http://[::1]/"],
/// );
/// ```
pub fn url_patterns(url: &str) -> Vec<String> {
    let mut patterns = vec![url.to_string()];
    let mut push = |pattern: String| {
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    };
    if let Ok(judged) = canonical::judge(url) {
        push(judged.canonical.to_string());
        for alias in canonical::loopback_aliases(&judged.canonical) {
            push(alias.to_string());
        }
    }
    patterns
}

#[async_trait::async_trait]
impl TypedTool for WebFetchTool {
    type Args = WebFetchArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

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
        let timeout = call_timeout(&args, &self.limits);
        // A URL that cannot be judged (an IPv6 zone id, a bad host) is
        // refused before anyone is asked about it.
        let judged = canonical::judge(&args.url).map_err(|error| unjudged(&args.url, error))?;
        for request in self.requests_for(&args) {
            request.ask(ctx).await?;
        }
        let (final_url, content_type, body) = tokio::select! {
            result = self.fetch(judged, &args, timeout, ctx) => result?,
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
