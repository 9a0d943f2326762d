//! [`AgentFactory`]: the one seam through which a host gives each served
//! session its [`CodingAgent`] — `agent serve` (opencode's HTTP API) and
//! `agent acp` (editors) both call it — with [`AgentSetup`], what the
//! serving side needs the agent to use, and [`ConfiguredAgents`], the
//! factory that builds from the directory's configuration.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_core::SessionStore;
use agentgate_permission::{Approver, PermissionGate};
use serde_json::{Map, Value};

use crate::{CodingAgent, CodingAgentBuilder};

/// An error of the host's factory: the server answers it as a 500 with
/// its text, ACP as the error of `session/new` or `session/load`.
pub type FactoryError = Box<dyn std::error::Error + Send + Sync>;

/// Builds the coding agent of one served session.
///
/// Called when a session is created (`resume` is `None`) and when a
/// request names a stored session the server has no agent for yet
/// (created earlier, or by another process sharing the store).
///
/// ```no_run
/// use agentgate::{AgentFactory, AgentSetup, CodingAgent, FactoryError};
///
/// /// Every session on the project's configuration, asking before edits.
/// struct Careful;
///
/// #[agentgate::async_trait]
/// impl AgentFactory for Careful {
///     async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
///         let builder = CodingAgent::builder(setup.directory())
///             .permission_preset(agentgate::PermissionPreset::AskBeforeSideEffects);
///         Ok(setup.apply(builder).build().await?)
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait AgentFactory: Send + Sync {
    /// The agent for `setup`; [`AgentSetup::apply`] adds what the serving
    /// side needs to a builder.
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError>;

    /// Whether the agents this factory builds for one server differ only
    /// in their session, so the server may build one and open every other
    /// session on its engine ([`CodingAgent::new_session`],
    /// [`CodingAgent::open_session`]): one set of tools, one sandbox, one
    /// set of MCP servers for all of them, and a session costs a record
    /// instead of an agent. `false` (the default) calls [`build`](Self::build)
    /// for every session the server opens. Only the HTTP server asks: an
    /// ACP client's sessions each bring their own MCP servers.
    fn shares_engine(&self) -> bool {
        false
    }
}

/// What one served session needs from its agent: its directory, the
/// session to resume or the agent to start in, and how its asks are
/// answered (the server's gate, or an approver that asks the editor), the
/// store its sessions live in, the client's MCP servers.
#[derive(Clone, Default)]
pub struct AgentSetup {
    directory: PathBuf,
    resume: Option<String>,
    agent: Option<String>,
    approver: Option<Arc<dyn Approver>>,
    permissions: Option<PermissionGate>,
    store: Option<Arc<dyn SessionStore>>,
    mcp_servers: Map<String, Value>,
}

impl std::fmt::Debug for AgentSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSetup")
            .field("directory", &self.directory)
            .field("resume", &self.resume)
            .field("agent", &self.agent)
            .field("approver", &self.approver.is_some())
            .field("permissions", &self.permissions.is_some())
            .field("mcp_servers", &self.mcp_servers)
            .finish_non_exhaustive()
    }
}

impl AgentSetup {
    /// A setup for a session in `directory` (the serving side adds the rest).
    pub fn new(directory: impl Into<PathBuf>) -> Self {
        AgentSetup {
            directory: directory.into(),
            ..AgentSetup::default()
        }
    }

    /// Continues the stored session `id`.
    pub fn with_resume(mut self, id: Option<String>) -> Self {
        self.resume = id;
        self
    }

    /// Starts a new session in agent `name`.
    pub fn with_agent(mut self, name: Option<String>) -> Self {
        self.agent = name;
        self
    }

    /// Asks go to `approver` (ACP: `session/request_permission`).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Asks wait on `permissions`, answered by its owner (the server:
    /// `POST /permission/{id}/reply`).
    pub fn with_permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Sessions live in `store`.
    pub fn with_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The client's MCP servers, as entries of the config's `mcp` key.
    pub fn with_mcp_servers(mut self, entries: Map<String, Value>) -> Self {
        self.mcp_servers = entries;
        self
    }

    /// The session's directory (the server's, or the `cwd` an ACP client
    /// sent).
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The stored session to continue; `None` for a new session.
    pub fn resume(&self) -> Option<&str> {
        self.resume.as_deref()
    }

    /// The agent a new session starts in, when the client named one.
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The approver that asks the client, when asks go to one.
    pub fn approver(&self) -> Option<Arc<dyn Approver>> {
        self.approver.clone()
    }

    /// The serving side's gate, when asks wait on one. Every session of a
    /// server shares it, so `GET /permission` sees them all.
    pub fn permissions(&self) -> Option<PermissionGate> {
        self.permissions.clone()
    }

    /// The serving side's session store.
    pub fn store(&self) -> Option<Arc<dyn SessionStore>> {
        self.store.clone()
    }

    /// The MCP servers the client gave, as entries of the config's `mcp`
    /// key (`local` for stdio, `remote` for HTTP and SSE).
    pub fn client_mcp(&self) -> &Map<String, Value> {
        &self.mcp_servers
    }

    /// Adds everything the serving side needs to `builder`: the gate or
    /// approver (the agent must use them: asks elsewhere would never reach
    /// the client), the store, the session to resume or the agent to start
    /// in, and (feature `mcp`) the client's MCP servers.
    pub fn apply(&self, builder: CodingAgentBuilder) -> CodingAgentBuilder {
        let mut builder = builder;
        if let Some(permissions) = self.permissions() {
            builder = builder.permissions(permissions);
        }
        if let Some(approver) = self.approver() {
            builder = builder.approver(approver);
        }
        if let Some(store) = self.store() {
            builder = builder.store(store);
        }
        match (&self.resume, &self.agent) {
            (Some(id), _) => builder = builder.resume(id.clone()),
            (None, Some(agent)) => builder = builder.agent(agent.clone()),
            (None, None) => {}
        }
        #[cfg(feature = "mcp")]
        if !self.mcp_servers.is_empty() {
            builder = builder.mcp_servers(self.mcp_servers.clone());
        }
        #[cfg(not(feature = "mcp"))]
        if !self.mcp_servers.is_empty() {
            tracing::warn!(
                "the client's MCP servers were left out: agentgate's feature \"mcp\" is off"
            );
        }
        builder
    }
}

/// Builds each session's agent from its directory's configuration, as
/// [`CodingAgent::builder`] does (configured model, tools, sandbox, MCP
/// servers), with what the serving side sets ([`AgentSetup::apply`]).
#[derive(Clone, Default)]
pub struct ConfiguredAgents {
    store: Option<Arc<dyn SessionStore>>,
}

impl std::fmt::Debug for ConfiguredAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfiguredAgents")
            .field("store", &self.store.is_some())
            .finish()
    }
}

impl ConfiguredAgents {
    /// Sessions live in `store` unless the serving side brings its own (an
    /// ACP server has none: with a file or SQLite store here,
    /// `session/load` finds earlier sessions).
    pub fn with_store(store: Arc<dyn SessionStore>) -> Self {
        ConfiguredAgents { store: Some(store) }
    }
}

#[async_trait::async_trait]
impl AgentFactory for ConfiguredAgents {
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        let mut builder = CodingAgent::builder(setup.directory());
        if let Some(store) = &self.store {
            builder = builder.store(Arc::clone(store));
        }
        Ok(setup.apply(builder).build().await?)
    }

    /// Every session of a directory has the same configuration.
    fn shares_engine(&self) -> bool {
        true
    }
}
