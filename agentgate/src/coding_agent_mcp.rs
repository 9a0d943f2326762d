//! The MCP servers of a [`CodingAgent`](crate::CodingAgent) (feature
//! `mcp`): which ones run, started at build, their tools registered and
//! their instructions added to the system prompt; stopped with the agent.

use agentgate_core::ToolRegistry;
use agentgate_permission::Ruleset;
use agentgate_tools::mcp::{McpManager, McpStatus};
use serde_json::{Map, Value};

use crate::workspace::Workspace;

/// Which MCP servers a builder runs.
pub(crate) enum McpChoice {
    /// The configuration's, with these entries added (or replacing theirs).
    Configured(Map<String, Value>),
    /// A manager the host made.
    Given(McpManager),
    /// None.
    Off,
}

impl Default for McpChoice {
    fn default() -> Self {
        McpChoice::Configured(Map::new())
    }
}

impl McpChoice {
    /// Adds `entries` to the configured servers (ignored once a manager
    /// is given or MCP is off: those choices are the host's last word).
    pub(crate) fn add(&mut self, entries: Map<String, Value>) {
        if let McpChoice::Configured(extra) = self {
            extra.extend(entries);
        }
    }

    /// Starts the chosen servers, registers their tools in `tools` and
    /// their instructions in `sections`; a server that fails is logged and
    /// its tools are left out.
    pub(crate) async fn start(
        self,
        workspace: &Workspace,
        tools: &mut ToolRegistry,
        sections: &mut Vec<String>,
    ) -> Option<McpGuard> {
        let manager = match self {
            McpChoice::Configured(extra) => workspace.mcp_with(&extra)?,
            McpChoice::Given(manager) => manager,
            McpChoice::Off => return None,
        };
        manager.register(tools).await;
        for server in manager.status().await {
            if let McpStatus::Failed(error) = &server.status {
                tracing::warn!(server = %server.name, %error, "MCP server failed; its tools are left out");
            }
        }
        if let Some(section) = manager.instructions(&Ruleset::default()).await {
            sections.push(section);
        }
        Some(McpGuard(manager))
    }
}

/// Stops the MCP servers when the agent is dropped.
#[derive(Debug)]
pub(crate) struct McpGuard(pub(crate) McpManager);

impl Drop for McpGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}
