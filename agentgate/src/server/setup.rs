//! [`AgentSetup`]: what the server hands the host's [`AgentFactory`] for
//! each session — the directory, the server's permission gate and session
//! store, the session to resume — and [`WorkspaceAgents`], the factory that
//! builds from the directory's configuration.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::permission::PermissionGate;
use crate::{CodingAgent, CodingAgentBuilder, SessionStore, Workspace};

/// An error of the host's factory, answered as a 500 with its text.
pub type FactoryError = Box<dyn std::error::Error + Send + Sync>;

/// Builds the coding agent of one served session.
///
/// The server calls it when a session is created (`resume` is `None`) and
/// when a request names a stored session it has no agent for yet (created
/// earlier, or by another process sharing the store).
#[async_trait::async_trait]
pub trait AgentFactory: Send + Sync {
    /// The agent for `setup`; [`AgentSetup::apply`] adds what the server
    /// needs to a builder.
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError>;
}

/// What one served session needs from its agent.
#[derive(Clone)]
pub struct AgentSetup {
    pub(crate) directory: PathBuf,
    pub(crate) permissions: PermissionGate,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) resume: Option<String>,
    pub(crate) agent: Option<String>,
}

impl std::fmt::Debug for AgentSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSetup")
            .field("directory", &self.directory)
            .field("resume", &self.resume)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl AgentSetup {
    /// The directory the server serves.
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

    /// The server's permission gate. It has no approver: its asks wait for
    /// an HTTP reply (`POST /permission/{id}/reply`). Every session of the
    /// server shares it, so `GET /permission` sees them all.
    pub fn permissions(&self) -> PermissionGate {
        self.permissions.clone()
    }

    /// The server's session store.
    pub fn store(&self) -> Arc<dyn SessionStore> {
        Arc::clone(&self.store)
    }

    /// Adds the server's gate and store, the session to resume and the
    /// agent to start in to `builder`. The agent must use them: asks on
    /// another gate would never reach the server's clients.
    pub fn apply(&self, builder: CodingAgentBuilder) -> CodingAgentBuilder {
        let mut builder = builder.permissions(self.permissions()).store(self.store());
        match (&self.resume, &self.agent) {
            (Some(id), _) => builder = builder.resume(id.clone()),
            (None, Some(agent)) => builder = builder.agent(agent.clone()),
            (None, None) => {}
        }
        builder
    }
}

/// Builds each session's agent from the directory's configuration, as
/// [`CodingAgent::builder`] does (configured model, tools, sandbox, MCP
/// servers), on the server's gate and store.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceAgents;

#[async_trait::async_trait]
impl AgentFactory for WorkspaceAgents {
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        let directory = setup.directory().to_path_buf();
        let workspace = tokio::task::spawn_blocking(move || Workspace::load(directory)).await??;
        let builder = CodingAgent::builder(setup.directory()).workspace(workspace);
        Ok(setup.apply(builder).build().await?)
    }
}
