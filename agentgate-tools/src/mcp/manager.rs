//! [`McpManager`]: the configured servers, started lazily and
//! concurrently, their status, their tools and their instructions.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agentgate_core::{Tool, ToolRegistry};
use agentgate_permission::{Ruleset, is_disabled};
use tokio::sync::watch;

use super::config::{McpConfig, McpServerEntry};
use super::error::McpError;
use super::instructions::format_instructions;
use super::naming::mcp_tool_name;
use super::resource_tools::{ListResourceTemplatesTool, ListResourcesTool, ReadResourceTool};
use super::servers::{Servers, Slot, SlotState};
use super::tool::McpTool;

/// A server's state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpStatus {
    /// Not started yet (servers start on first use).
    Pending,
    /// Running; its tools are registered.
    Connected,
    /// `enabled: false` in the config.
    Disabled,
    /// Failed to start, crashed, or timed out; the error names the server
    /// and carries its stderr tail.
    Failed(McpError),
}

impl std::fmt::Display for McpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpStatus::Pending => f.write_str("pending"),
            McpStatus::Connected => f.write_str("connected"),
            McpStatus::Disabled => f.write_str("disabled"),
            McpStatus::Failed(error) => write!(f, "failed: {error}"),
        }
    }
}

/// One server as `agent mcp list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerStatus {
    /// The configured name.
    pub name: String,
    /// Its state.
    pub status: McpStatus,
    /// Registered tool names (`<server>_<tool>`), when connected.
    pub tools: Vec<String>,
}

/// The MCP servers of one configuration.
///
/// Nothing starts when the manager is built. The first call that needs the
/// servers ([`start`](Self::start), [`tools`](Self::tools),
/// [`status`](Self::status), [`instructions`](Self::instructions), or a
/// tool call) starts every enabled server at once; each starts once, and a
/// server that fails is reported and left out while the others work.
///
/// Cheap to clone; dropping the last clone (and every tool it handed out)
/// stops the servers.
#[derive(Clone)]
pub struct McpManager {
    servers: Arc<Servers>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.servers.slots.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// A manager for `config`; local servers run in `directory` (opencode
    /// uses the project directory).
    pub fn new(config: McpConfig, directory: impl Into<PathBuf>) -> Self {
        let slots = config
            .servers
            .into_iter()
            .map(|(name, entry)| {
                let state = match &entry {
                    McpServerEntry::Valid(server) if !server.enabled => SlotState::Disabled,
                    McpServerEntry::Valid(_) => SlotState::Pending,
                    McpServerEntry::Invalid(message) => SlotState::Failed(McpError::Config {
                        server: name.clone(),
                        message: message.clone(),
                    }),
                };
                let slot = Slot {
                    entry,
                    state: Mutex::new(state),
                    starting: tokio::sync::Mutex::new(()),
                    restarts: Default::default(),
                };
                (name, slot)
            })
            .collect();
        let (version, _) = watch::channel(0);
        McpManager {
            servers: Arc::new(Servers {
                directory: directory.into(),
                slots,
                generations: Mutex::new(0),
                version,
            }),
        }
    }

    /// The configured server names, in config order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.slots.keys().map(String::as_str)
    }

    /// The enabled servers that have not finished starting (not started
    /// yet, or starting now), in config order: what a caller waiting on
    /// [`start`](Self::start) waits for.
    pub fn starting(&self) -> Vec<String> {
        self.servers
            .slots
            .iter()
            .filter(|(_, slot)| matches!(*slot.lock(), SlotState::Pending))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Starts every enabled server that has not started yet, concurrently,
    /// and waits for them (each within its startup timeout).
    pub async fn start(&self) {
        self.servers.start_all().await;
    }

    /// Every server's status, after starting them.
    pub async fn status(&self) -> Vec<McpServerStatus> {
        self.start().await;
        self.servers
            .slots
            .iter()
            .map(|(name, slot)| {
                let (status, tools) = match &*slot.lock() {
                    SlotState::Pending => (McpStatus::Pending, Vec::new()),
                    SlotState::Disabled => (McpStatus::Disabled, Vec::new()),
                    SlotState::Failed(error) | SlotState::Exited(error) => {
                        (McpStatus::Failed(error.clone()), Vec::new())
                    }
                    SlotState::Connected { connection, .. } => (
                        McpStatus::Connected,
                        connection
                            .tools()
                            .iter()
                            .map(|tool| mcp_tool_name(name, &tool.name))
                            .collect(),
                    ),
                };
                McpServerStatus {
                    name: name.clone(),
                    status,
                    tools,
                }
            })
            .collect()
    }

    /// The tools of every connected server (`<server>_<tool>`), plus the
    /// three resource tools when a connected server offers resources.
    /// Starts the servers first.
    pub async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.start().await;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut resources = false;
        for (name, connection) in self.servers.connected() {
            for info in connection.tools() {
                tools.push(Arc::new(McpTool::new(
                    name,
                    info,
                    Arc::clone(&self.servers),
                )));
            }
            resources |= connection.has_resources();
        }
        if resources {
            tools.push(Arc::new(ListResourcesTool::new(Arc::clone(&self.servers))));
            tools.push(Arc::new(ListResourceTemplatesTool::new(Arc::clone(
                &self.servers,
            ))));
            tools.push(Arc::new(ReadResourceTool::new(Arc::clone(&self.servers))));
        }
        tools
    }

    /// Adds [`tools`](Self::tools) to `registry`.
    pub async fn register(&self, registry: &mut ToolRegistry) {
        for tool in self.tools().await {
            registry.register_arc(tool);
        }
    }

    /// The `<mcp_instructions>` block for the system prompt (§15): the
    /// instructions of every connected server, by name, leaving out a
    /// server all of whose tools `ruleset` disables (§5). `None` when no
    /// server has instructions. Starts the servers first.
    pub async fn instructions(&self, ruleset: &Ruleset) -> Option<String> {
        self.start().await;
        let mut servers: Vec<(String, String)> = self
            .servers
            .connected()
            .into_iter()
            .filter_map(|(name, connection)| {
                let text = connection.instructions()?;
                let tools = connection.tools();
                let all_disabled = !tools.is_empty()
                    && tools
                        .iter()
                        .all(|tool| is_disabled(&mcp_tool_name(name, &tool.name), ruleset));
                (!all_disabled).then(|| (name.to_string(), text.to_string()))
            })
            .collect();
        if servers.is_empty() {
            return None;
        }
        servers.sort_by(|a, b| a.0.cmp(&b.0));
        Some(format_instructions(&servers))
    }

    /// A receiver whose value changes whenever a server's tool list or
    /// status changes after starting (`tools/list_changed`, a crash): call
    /// [`tools`](Self::tools) again and rebuild the registry between turns.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.servers.version.subscribe()
    }

    /// Stops every running server; their tools fail from now on.
    pub fn shutdown(&self) {
        for (name, slot) in &self.servers.slots {
            let mut state = slot.lock();
            let stop = match &*state {
                SlotState::Connected { connection, .. } => {
                    connection.shutdown();
                    true
                }
                // Not restarted by a later call either.
                SlotState::Exited(_) => true,
                _ => false,
            };
            if stop {
                *state = SlotState::Failed(McpError::NotConnected {
                    server: name.clone(),
                    status: "shut down".into(),
                });
            }
        }
        self.servers.bump();
    }
}
