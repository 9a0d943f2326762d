//! Serves coding agents over HTTP with the routes and JSON shapes of
//! opencode's server (`opencode serve`, 1.18), so opencode's clients — its
//! SDK (`@opencode-ai/sdk`), web dashboards, bots — drive them: sessions,
//! prompts, the event stream (`GET /event`, server-sent events) and the
//! answers to permission asks. docs/server.md lists the routes and events.
//!
//! Each session's agent is a [`CodingAgent`](crate::CodingAgent) the
//! host's [`AgentFactory`] builds (the seam `agent acp` shares), on the
//! server's permission gate and session store ([`AgentSetup::apply`]). The gate has no approver: an ask
//! waits until a client answers it (`POST /permission/{id}/reply`), or the
//! session is aborted, which rejects it. Asks are published on an
//! [`AskRelay`] so that every process of a deployment lists them and a
//! reply given to any of them reaches the process whose turn waits.
//!
//! Security by default: the server binds `127.0.0.1:4096`; a non-loopback
//! address needs [`Auth::Basic`] ([`ServerBuilder::build`] refuses
//! otherwise); cross-site requests are refused unless their origin is
//! configured ([`ServerBuilder::cors`]); bodies are bounded; an event
//! client that falls behind is disconnected.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use agentgate::{ConfiguredAgents, server::Server};
//!
//! let server = Server::builder(Arc::new(ConfiguredAgents::default()), ".")
//!     .store(Arc::new(agentgate::MemorySessionStore::new()))
//!     .build()?;
//! let bound = server.bind().await?;
//! println!("listening on http://{}", bound.local_addr());
//! bound.serve(async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```

mod answers;
mod ask_answers;
mod audit_route;
mod auth;
mod command_routes;
mod events;
mod page;
mod parking;
mod revert_routes;
mod routes;
mod served;
mod shell_routes;
mod state;
mod turn_task;
mod wire;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use agentgate_store::{AskRelay, AuditLog, LocalRelay};
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

pub use crate::agent_factory::{AgentFactory, AgentSetup, ConfiguredAgents, FactoryError};
pub use agentgate_store::{RelayError, RelayedReply};
pub use auth::{Auth, DEFAULT_USERNAME};

use crate::permission::{ApprovalStore, PermissionGate};
use crate::{Config, MemorySessionStore, SessionStore};

/// The port opencode's server listens on by default.
pub const DEFAULT_PORT: u16 = 4096;

/// The default bound on request bodies: 10 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 10 * 1024 * 1024;

/// The default number of events an event client may fall behind before
/// it is disconnected.
pub const DEFAULT_EVENT_CAPACITY: usize = 1024;

/// How long [`BoundServer::serve`] waits, after its shutdown signal, for
/// the open requests to be answered before it returns anyway.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A non-loopback address without a password.
    #[error(
        "refusing to serve {0} without a password: anyone who reaches it could run commands; \
         set a password (Auth::Basic; `agent serve` reads OPENCODE_SERVER_PASSWORD) or bind 127.0.0.1"
    )]
    Unprotected(SocketAddr),
    /// A CORS origin that is not a valid header value.
    #[error("CORS origin {0:?} is not a valid origin (use scheme://host[:port])")]
    BadOrigin(String),
    /// The approval store could not be read.
    #[error("the approval store could not be read: {0}")]
    Approvals(String),
    /// Binding or serving failed.
    #[error("{action} {address}: {source}")]
    Io {
        /// What failed.
        action: &'static str,
        /// The address.
        address: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}

/// Builds a [`Server`]; see [`Server::builder`].
pub struct ServerBuilder {
    factory: Arc<dyn AgentFactory>,
    directory: PathBuf,
    store: Option<Arc<dyn SessionStore>>,
    permissions: Option<PermissionGate>,
    approvals: Option<Arc<dyn ApprovalStore>>,
    relay: Option<Arc<dyn AskRelay>>,
    audit: Option<Arc<dyn AuditLog>>,
    config: Option<Config>,
    commands: crate::Commands,
    trust: crate::ProjectTrust,
    address: SocketAddr,
    auth: Auth,
    cors: Vec<String>,
    body_limit: usize,
    event_capacity: usize,
    park_after: Option<std::time::Duration>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("directory", &self.directory)
            .field("address", &self.address)
            .field("auth", &self.auth)
            .field("cors", &self.cors)
            .field("body_limit", &self.body_limit)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Sessions live in `store` (default: in memory). Processes that share
    /// a store share sessions: a session created by one can be prompted
    /// through another.
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// "Always" answers are remembered in `store`, under the served
    /// directory (default: in memory, for the server's lifetime).
    pub fn approvals(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.approvals = Some(store);
        self
    }

    /// Uses this gate (it must have no approver, or asks never reach the
    /// clients); replaces [`approvals`](Self::approvals).
    pub fn permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Publishes asks on `relay` and applies the replies it carries
    /// (default: a [`LocalRelay`], this process only).
    pub fn relay(mut self, relay: Arc<dyn AskRelay>) -> Self {
        self.relay = Some(relay);
        self
    }

    /// Drops from memory a turn that has waited at an ask for `after`
    /// (zero: at once), when the [`relay`](Self::relay) keeps asks beyond
    /// the process (SQLite's, PostgreSQL's): the stored ask is its commit
    /// point, and an answer on any server sharing the store resumes it
    /// there. A client waiting on `POST /session/{id}/message` is answered
    /// the message as stored so far. Default: a waiting turn stays in
    /// memory until answered.
    pub fn park_asks_after(mut self, after: std::time::Duration) -> Self {
        self.park_after = Some(after);
        self
    }

    /// Records every permission decision of the server's gate in `log`
    /// (unless the gate given with [`permissions`](Self::permissions)
    /// records already), and serves it at `GET /audit`.
    pub fn audit(mut self, log: Arc<dyn AuditLog>) -> Self {
        self.audit = Some(log);
        self
    }

    /// Whether the served project's configuration is trusted
    /// ([`Workspace::trust_state`](crate::Workspace::trust_state)), for
    /// `GET /project/trust` and the approval page, which shows what an
    /// untrusted project's configuration was not allowed to do (default:
    /// [`ProjectTrust::NotNeeded`](crate::ProjectTrust::NotNeeded)).
    pub fn trust(mut self, trust: crate::ProjectTrust) -> Self {
        self.trust = trust;
        self
    }

    /// The directory's configuration, for `GET /config` and `GET /agent`
    /// (default: none; they answer `{}` and `[]`).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// The directory's custom commands, for `GET /command` (default: none;
    /// it answers `[]`). `POST /session/{id}/command` runs the commands of
    /// the session's own agent ([`CodingAgent::commands`](crate::CodingAgent::commands)),
    /// which the factory builds from the same directory.
    pub fn commands(mut self, commands: crate::Commands) -> Self {
        self.commands = commands;
        self
    }

    /// Listens on `address` (default `127.0.0.1:4096`; port 0 picks a free
    /// one, see [`BoundServer::local_addr`]).
    pub fn address(mut self, address: SocketAddr) -> Self {
        self.address = address;
        self
    }

    /// How clients authenticate (default [`Auth::None`], allowed only on a
    /// loopback address).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Allows browser requests from `origin` (`https://app.example`);
    /// without any, only same-origin browser requests are answered.
    pub fn cors(mut self, origin: impl Into<String>) -> Self {
        self.cors.push(origin.into());
        self
    }

    /// Bounds request bodies (default [`DEFAULT_BODY_LIMIT`]); a larger one
    /// is answered 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How many events an event client may fall behind before it is
    /// disconnected (default [`DEFAULT_EVENT_CAPACITY`]).
    pub fn event_capacity(mut self, events: usize) -> Self {
        self.event_capacity = events.max(1);
        self
    }

    /// The server.
    ///
    /// # Errors
    /// [`ServerError::Unprotected`] for a non-loopback address without a
    /// password, [`ServerError::BadOrigin`] for a malformed CORS origin,
    /// [`ServerError::Approvals`] when the approval store cannot be read.
    pub fn build(self) -> Result<Server, ServerError> {
        if !self.address.ip().is_loopback() && self.auth == Auth::None {
            return Err(ServerError::Unprotected(self.address));
        }
        let mut origins = Vec::new();
        for origin in &self.cors {
            origins.push(
                HeaderValue::from_str(origin)
                    .ok()
                    .filter(|_| origin.contains("://"))
                    .ok_or_else(|| ServerError::BadOrigin(origin.clone()))?,
            );
        }
        let gate = match (self.permissions, self.approvals) {
            (Some(gate), _) => gate,
            (None, Some(store)) => {
                PermissionGate::with_store(store, self.directory.display().to_string())
                    .map_err(|e| ServerError::Approvals(e.to_string()))?
            }
            (None, None) => PermissionGate::new(),
        };
        if let Some(log) = &self.audit
            && !gate.is_audited()
        {
            gate.set_audit(log.audit_sink());
        }
        let relay = self.relay.unwrap_or_else(|| Arc::new(LocalRelay::new()));
        // Only a relay whose asks outlive the process can resume a dropped turn.
        let park_after = self.park_after.filter(|_| relay.outlives_the_process());
        let shared = Arc::new(
            state::Shared::new(
                self.factory,
                self.store
                    .unwrap_or_else(|| Arc::new(MemorySessionStore::new())),
                gate,
                relay,
                state::ServedProject {
                    directory: self.directory,
                    config: self.config,
                    commands: self.commands,
                    trust: self.trust,
                    audit: self.audit,
                },
                events::Bus::new(self.event_capacity),
            )
            .parking_after(park_after),
        );
        Ok(Server {
            shared,
            address: self.address,
            auth: self.auth,
            cors: self.cors,
            origins,
            body_limit: self.body_limit,
        })
    }
}

/// An HTTP server of coding agents; see the [module](self) documentation.
pub struct Server {
    shared: Arc<state::Shared>,
    address: SocketAddr,
    auth: Auth,
    cors: Vec<String>,
    origins: Vec<HeaderValue>,
    body_limit: usize,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("address", &self.address)
            .field("auth", &self.auth)
            .field("cors", &self.cors)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server for `directory` whose sessions' agents `factory` builds.
    pub fn builder(factory: Arc<dyn AgentFactory>, directory: impl Into<PathBuf>) -> ServerBuilder {
        ServerBuilder {
            factory,
            directory: directory.into(),
            store: None,
            permissions: None,
            approvals: None,
            audit: None,
            relay: None,
            config: None,
            commands: crate::Commands::new(),
            trust: crate::ProjectTrust::NotNeeded,
            address: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            auth: Auth::None,
            cors: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            park_after: None,
        }
    }

    /// The server's permission gate (every session's asks).
    pub fn permissions(&self) -> &PermissionGate {
        &self.shared.gate
    }

    /// The routes with their guard (auth, origins, loopback `Host`), body
    /// limit and CORS layers, for a host that serves them itself (merged
    /// into its own router). Starts the tasks that follow the gate and the
    /// relay, so call it inside a tokio runtime, once.
    pub fn into_router(self) -> axum::Router {
        self.shared.spawn_bridges();
        ask_answers::follow_relayed_replies(&self.shared);
        let guard = auth::Guard {
            auth: self.auth,
            cors: Arc::new(self.cors),
        };
        let mut router = routes::router(Arc::clone(&self.shared))
            .layer(axum::middleware::from_fn_with_state(guard, auth::guard))
            .layer(DefaultBodyLimit::max(self.body_limit));
        if !self.origins.is_empty() {
            router = router.layer(
                CorsLayer::new()
                    .allow_origin(AllowOrigin::list(self.origins))
                    .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::PATCH])
                    .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
                    .allow_credentials(true),
            );
        }
        router
    }

    /// Binds the address.
    ///
    /// # Errors
    /// [`ServerError::Io`] when the address cannot be bound.
    pub async fn bind(self) -> Result<BoundServer, ServerError> {
        let address = self.address;
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| ServerError::Io {
                action: "cannot listen on",
                address,
                source,
            })?;
        let local = listener.local_addr().map_err(|source| ServerError::Io {
            action: "cannot read the address of",
            address,
            source,
        })?;
        let shared = Arc::clone(&self.shared);
        Ok(BoundServer {
            listener,
            local,
            shared,
            router: self.into_router(),
        })
    }
}

/// A server bound to its address, not yet serving.
pub struct BoundServer {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    shared: Arc<state::Shared>,
    router: axum::Router,
}

impl std::fmt::Debug for BoundServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundServer")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl BoundServer {
    /// The address bound (with the port chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Serves until `shutdown` resolves; then every session is aborted
    /// (pending asks rejected, turns cancelled) — except, with a relay whose
    /// asks outlive the process, the sessions waiting at an ask, whose asks
    /// stay saved for the next process — event streams end, and this
    /// returns once open requests are answered, or [`SHUTDOWN_GRACE`] after
    /// the signal (a request waiting at a saved ask is then dropped).
    ///
    /// # Errors
    /// [`ServerError::Io`] when accepting connections fails.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let shared = Arc::clone(&self.shared);
        let address = self.local;
        let (stopped, signalled) = tokio::sync::oneshot::channel::<()>();
        let stopping = async move {
            shutdown.await;
            shared.shutdown();
            let _ = stopped.send(());
        };
        // The peer's address answers "who replied" in the audit log.
        let router = self
            .router
            .into_make_service_with_connect_info::<SocketAddr>();
        let serving = axum::serve(self.listener, router).with_graceful_shutdown(stopping);
        let grace = async move {
            if signalled.await.is_ok() {
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            served = serving => served.map_err(|source| ServerError::Io {
                action: "serving",
                address,
                source,
            }),
            () = grace => Ok(()),
        }
    }
}
