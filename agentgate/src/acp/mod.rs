//! Serves a coding agent to an editor over the Agent Client Protocol
//! (ACP: JSON-RPC over stdio, from Zed; JetBrains, Neovim and Emacs
//! clients speak it), on the official SDK's types.
//!
//! Each ACP session is a [`CodingAgent`](crate::CodingAgent) that the
//! host's [`AgentFactory`] builds for the session's directory (the same
//! seam as `agent serve`'s: the [`AgentSetup`] carries
//! the approver that asks the editor and the client's MCP servers). Its turns
//! stream as `session/update`s (message and thought chunks, tool calls
//! with diffs and output, the todo list as a plan), every ask of the
//! permission gate becomes a `session/request_permission` (deny rules are
//! decided before and never reach the client), `session/cancel` cancels
//! the turn, the primary agents are the session's modes, and
//! `session/load` replays a stored session. docs/acp.md has the details.
//!
//! ```no_run
//! # async fn demo(
//! #     stdin: tokio::io::DuplexStream,
//! #     stdout: tokio::io::DuplexStream,
//! # ) -> Result<(), agentgate::acp::AcpError> {
//! use std::sync::Arc;
//! // Sessions in memory; a file store lets `session/load` find them later.
//! let store = Arc::new(agentgate::MemorySessionStore::new());
//! let factory = agentgate::ConfiguredAgents::with_store(store);
//! agentgate::acp::AcpServer::new(Arc::new(factory))
//!     .serve(stdin, stdout)
//!     .await?;
//! # Ok(()) }
//! ```

mod approver;
mod commands;
mod server;
mod setup;
mod updates;
mod usage;

use std::sync::Arc;

use agent_client_protocol::v1::schema::Implementation;
use tokio::io::{AsyncRead, AsyncWrite};

pub use crate::agent_factory::{AgentFactory, AgentSetup, ConfiguredAgents, FactoryError};

/// The connection failed (the transport broke, or a message could not be
/// written).
#[derive(Debug, thiserror::Error)]
#[error("the ACP connection failed: {0}")]
pub struct AcpError(String);

/// An ACP agent server: the factory of its sessions' agents and the name
/// it gives in `initialize`.
pub struct AcpServer {
    factory: Arc<dyn AgentFactory>,
    name: String,
    version: String,
    trust: Option<crate::project_trust::TrustStore>,
}

impl AcpServer {
    /// A server whose sessions' agents `factory` builds.
    pub fn new(factory: Arc<dyn AgentFactory>) -> Self {
        AcpServer {
            factory,
            name: "agentgate".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            trust: None,
        }
    }

    /// Asks the editor, at `session/new` and `session/load`, whether to
    /// trust a project whose configuration was loaded untrusted (and would
    /// start a process, redirect a provider or allow what the user's rules
    /// ask): a `session/request_permission` whose title lists what the
    /// configuration would do. "Trust" records the project in `store` and
    /// builds the session's agent again, so the factory must read trust
    /// from the same store (the `agent` CLI's, `agent trust`'s record, with
    /// [`TrustStore::in_data_dir`](crate::project_trust::TrustStore::in_data_dir)
    /// of its data directory). Without it, an untrusted project stays so.
    pub fn ask_trust(mut self, store: crate::project_trust::TrustStore) -> Self {
        self.trust = Some(store);
        self
    }

    /// The name and version `initialize` reports (default: `agentgate` and
    /// this crate's version).
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Serves ACP on `input` and `output` (stdin and stdout for an agent
    /// an editor starts) until the client closes `input`. Only protocol
    /// messages are written to `output`; a malformed message is answered
    /// with a JSON-RPC error and the connection stays up.
    ///
    /// # Errors
    /// [`AcpError`] when the transport fails.
    pub async fn serve<R, W>(self, input: R, output: W) -> Result<(), AcpError>
    where
        R: AsyncRead + Send + 'static,
        W: AsyncWrite + Send + 'static,
    {
        let info = Implementation::new(self.name, self.version);
        server::serve(self.factory, self.trust, info, input, output)
            .await
            .map_err(|e| AcpError(e.to_string()))
    }
}

impl std::fmt::Debug for AcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpServer")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}
