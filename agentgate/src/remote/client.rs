//! [`RemoteAgent`]: a server's URL, credentials, timeouts and approver;
//! [`RemoteSession`]: one of its sessions.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::RemoteError;
use super::event::is_safe_id;
use crate::permission::{Approver, RejectAll, Reply};
use crate::protocol::{CreateSession, ErrorBody, ReplyBody, SessionInfo};

/// The user name opencode's server expects unless told otherwise.
const DEFAULT_USERNAME: &str = "opencode";
/// The most of a response body this client reads (a session, an error).
const MAX_BODY: usize = 4 << 20;

/// How a [`RemoteAgent`] connects; from [`RemoteAgent::builder`].
pub struct RemoteAgentBuilder {
    url: String,
    username: String,
    password: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    idle_timeout: Duration,
    max_event: usize,
    approver: Arc<dyn Approver>,
}

impl std::fmt::Debug for RemoteAgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgentBuilder")
            .field("url", &self.url)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl RemoteAgentBuilder {
    /// The basic-auth password (user `opencode` unless [`username`](Self::username)).
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into()).filter(|p| !p.is_empty());
        self
    }

    /// The basic-auth user name.
    pub fn username(mut self, username: impl Into<String>) -> Self {
        self.username = username.into();
        self
    }

    /// The password and user name from the environment, as `agent serve`
    /// reads them: `OPENCODE_SERVER_PASSWORD`, else `AGENT_SERVER_PASSWORD`;
    /// `OPENCODE_SERVER_USERNAME`.
    pub fn credentials_from_env(self) -> Self {
        self.credentials_from(|name| std::env::var(name).ok())
    }

    /// [`credentials_from_env`](Self::credentials_from_env) with the
    /// variables read by `env`.
    pub fn credentials_from(mut self, env: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(password) = env("OPENCODE_SERVER_PASSWORD")
            .or_else(|| env("AGENT_SERVER_PASSWORD"))
            .filter(|p| !p.is_empty())
        {
            self.password = Some(password);
        }
        if let Some(username) = env("OPENCODE_SERVER_USERNAME").filter(|u| !u.is_empty()) {
            self.username = username;
        }
        self
    }

    /// How long connecting may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a plain request (not the event stream) may take (default 30 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the event stream may stay silent during a turn before the
    /// turn fails with [`RemoteError::Idle`] (default 60 s; the server
    /// sends a keep-alive every 10 s).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The largest server-sent event accepted, in bytes (default 8 MiB).
    pub fn max_event_size(mut self, bytes: usize) -> Self {
        self.max_event = bytes;
        self
    }

    /// Who answers the server's asks for this client's sessions (default:
    /// [`RejectAll`] writing opencode's warning to stderr).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Checks the server answers (`GET /global/health`) with these
    /// credentials.
    pub async fn connect(self) -> Result<RemoteAgent, RemoteError> {
        let url = self.url.trim().trim_end_matches('/').to_string();
        let parsed = reqwest::Url::parse(&url).map_err(|e| RemoteError::InvalidUrl {
            url: self.url.clone(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(RemoteError::InvalidUrl {
                url: self.url,
                reason: "only http and https are served".into(),
            });
        }
        let client = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .build()
            .map_err(|e| RemoteError::Unreachable {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        let agent = RemoteAgent {
            inner: Arc::new(Inner {
                base: url,
                client,
                username: self.username,
                password: self.password,
                request_timeout: self.request_timeout,
                idle_timeout: self.idle_timeout,
                max_event: self.max_event,
                approver: self.approver,
            }),
        };
        // Any JSON answer will do: opencode's servers answer `{healthy,
        // version}`, a proxy in front of one may answer less.
        agent.get::<Value>("/global/health").await?;
        Ok(agent)
    }
}

pub(crate) struct Inner {
    pub(crate) base: String,
    client: reqwest::Client,
    username: String,
    password: Option<String>,
    request_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_event: usize,
    pub(crate) approver: Arc<dyn Approver>,
}

/// A client of an `agent serve` (or `opencode serve`) server: runs prompts
/// in its sessions and answers their asks with a local [`Approver`].
///
/// ```no_run
/// # async fn demo() -> Result<(), agentgate::remote::RemoteError> {
/// use std::sync::Arc;
/// use futures::StreamExt;
/// use agentgate::permission::AllowAll;
/// use agentgate::remote::{RemoteAgent, RemoteEvent};
///
/// let agent = RemoteAgent::builder("http://127.0.0.1:4096")
///     .credentials_from_env()
///     .approver(Arc::new(AllowAll))
///     .connect()
///     .await?;
/// let session = agent.new_session().await?;
/// let mut turn = session.stream("list the files").await?;
/// while let Some(event) = turn.next().await {
///     match event? {
///         RemoteEvent::TextDelta { delta, .. } => print!("{delta}"),
///         RemoteEvent::Finished(end) => println!("\n{:?}", end.stop),
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RemoteAgent {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("url", &self.inner.base)
            .finish_non_exhaustive()
    }
}

impl RemoteAgent {
    /// A builder for the server at `url` (`http://HOST:PORT`).
    pub fn builder(url: impl Into<String>) -> RemoteAgentBuilder {
        RemoteAgentBuilder {
            url: url.into(),
            username: DEFAULT_USERNAME.to_string(),
            password: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_event: 8 << 20,
            approver: Arc::new(RejectAll::stderr()),
        }
    }

    /// Connects to `url` without credentials and with the defaults of
    /// [`builder`](Self::builder).
    pub async fn connect(url: impl Into<String>) -> Result<RemoteAgent, RemoteError> {
        Self::builder(url).connect().await
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.inner.base
    }

    /// A new session (`POST /session`).
    pub async fn new_session(&self) -> Result<RemoteSession, RemoteError> {
        let info = self.post("/session", &CreateSession::default()).await?;
        self.session_from(info)
    }

    /// The existing session `id` (`GET /session/{id}`).
    pub async fn session(&self, id: &str) -> Result<RemoteSession, RemoteError> {
        if !is_safe_id(id) {
            return Err(RemoteError::InvalidId { id: id.into() });
        }
        let info = self.get(&format!("/session/{id}")).await?;
        self.session_from(info)
    }

    /// The session `info` describes (opencode's `Session`, kept whole for
    /// [`RemoteSession::info`]).
    pub(crate) fn session_from(&self, info: Value) -> Result<RemoteSession, RemoteError> {
        match serde_json::from_value::<SessionInfo>(info.clone()) {
            Ok(session) if is_safe_id(&session.id) => Ok(RemoteSession {
                agent: self.clone(),
                id: session.id,
                info,
            }),
            Ok(_) => Err(self.protocol("a session without a usable id")),
            Err(e) => Err(self.protocol(&format!("not a session: {e}"))),
        }
    }

    pub(crate) fn protocol(&self, reason: &str) -> RemoteError {
        RemoteError::Protocol {
            url: self.inner.base.clone(),
            reason: reason.into(),
        }
    }

    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self
            .inner
            .client
            .request(method, format!("{}{path}", self.inner.base));
        match &self.inner.password {
            Some(password) => request.basic_auth(&self.inner.username, Some(password)),
            None => request,
        }
    }

    /// Sends `request`; an error status becomes the error naming it.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        timeout: bool,
    ) -> Result<reqwest::Response, RemoteError> {
        let request = if timeout {
            request.timeout(self.inner.request_timeout)
        } else {
            request
        };
        let response = request.send().await.map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let url = response.url().to_string();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(RemoteError::Unauthorized {
                url: self.inner.base.clone(),
            });
        }
        let body = read_limited(response, 64 << 10).await.unwrap_or_default();
        let message = serde_json::from_slice::<ErrorBody>(&body)
            .ok()
            .map(|error| error.data.message)
            .filter(|message| !message.is_empty())
            .unwrap_or_else(|| one_line(&String::from_utf8_lossy(&body), 200));
        Err(RemoteError::Status {
            url,
            status: status.as_u16(),
            message,
        })
    }

    pub(crate) fn unreachable(&self, error: &reqwest::Error) -> RemoteError {
        let mut reason = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            reason = format!("{reason}: {inner}");
            source = inner.source();
        }
        RemoteError::Unreachable {
            url: self.inner.base.clone(),
            reason,
        }
    }

    async fn json<T: DeserializeOwned>(
        &self,
        response: reqwest::Response,
    ) -> Result<T, RemoteError> {
        let body = read_limited(response, MAX_BODY)
            .await
            .map_err(|reason| self.protocol(&reason))?;
        serde_json::from_slice(&body).map_err(|e| self.protocol(&format!("not JSON: {e}")))
    }

    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, RemoteError> {
        let response = self
            .send(self.request(reqwest::Method::GET, path), true)
            .await?;
        self.json(response).await
    }

    /// POSTs `body`; the answer's JSON (`null` for 204 No Content).
    pub(crate) async fn post(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<Value, RemoteError> {
        let response = self
            .send(self.request(reqwest::Method::POST, path).json(body), true)
            .await?;
        if response.status() == reqwest::StatusCode::NO_CONTENT {
            return Ok(Value::Null);
        }
        self.json(response).await
    }

    /// Answers request `id` with `reply` (`POST /permission/{id}/reply`).
    pub async fn reply(&self, id: &str, reply: &Reply) -> Result<(), RemoteError> {
        if !is_safe_id(id) {
            return Err(RemoteError::InvalidId { id: id.into() });
        }
        self.post(&format!("/permission/{id}/reply"), &ReplyBody::of(reply))
            .await?;
        Ok(())
    }
}

/// Reads at most `limit` bytes of a body.
async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > limit {
            return Err(format!("a response larger than {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A session on the server.
#[derive(Debug, Clone)]
pub struct RemoteSession {
    pub(crate) agent: RemoteAgent,
    id: String,
    info: Value,
}

impl RemoteSession {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session as the server described it (opencode's `Session`).
    pub fn info(&self) -> &Value {
        &self.info
    }

    /// Aborts the session's running turn (`POST /session/{id}/abort`).
    pub async fn abort(&self) -> Result<(), RemoteError> {
        self.agent
            .post(
                &format!("/session/{}/abort", self.id),
                &serde_json::Map::new(),
            )
            .await
            .map(|_| ())
    }
}

/// The first non-blank line of `text`, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    line.chars().take(max).collect()
}
