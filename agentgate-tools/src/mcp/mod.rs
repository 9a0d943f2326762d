//! MCP servers as tools (feature `mcp`, on by default), built on the
//! official Rust SDK, `rmcp`.
//!
//! An [`McpManager`] takes opencode's `mcp` configuration ([`McpConfig`]):
//! `local` servers run as child processes over stdio, `remote` servers are
//! reached over streamable HTTP with the configured headers (`{env:VAR}`
//! substituted), falling back to the older HTTP+SSE transport as opencode
//! does. Servers start lazily — on the first call that needs them — and
//! concurrently, each within its startup timeout.
//!
//! Each server tool becomes an agentgate-core `Tool` named `<server>_<tool>`
//! (opencode's sanitising, [`mcp_tool_name`]) that asks its own name with
//! pattern `*` before the call reaches the server, so rules such as
//! `"github_*": "ask"` or `"github_delete_repo": "deny"` apply unchanged
//! and a denied tool is hidden from the model (§5). Calls are cancellable
//! and bounded by the server's request timeout; results map to text plus
//! attachments, `isError` to a failed call. Servers that offer resources
//! add `list_mcp_resources`, `list_mcp_resource_templates` and
//! `read_mcp_resource`, which ask `read` with `mcp:<server>:<uri>`
//! patterns. [`McpManager::instructions`] gives the system prompt's
//! `<mcp_instructions>` block (§15).
//!
//! A server that fails to start, crashes or answers garbage becomes
//! [`McpStatus::Failed`] with its name and stderr tail; it leaves the next
//! [`McpManager::tools`] list, and the other servers and the session go
//! on. One that was running and exited is started again by the next call
//! that needs it (once per exit; a failed restart fails the call with
//! [`McpError::RestartFailed`]).
//!
//! Local servers run in process groups of their own, so a terminal's
//! Ctrl-C reaches the host only; the whole group is killed when the
//! connection ends, the manager shuts down or is dropped, or a start is
//! abandoned. Their stderr is kept as a bounded tail, cut while it is read.
//!
//! ```no_run
//! use agentgate_tools::mcp::{McpConfig, McpManager};
//! use agentgate_tools::core::ToolRegistry;
//!
//! # async fn demo() {
//! let config = McpConfig::from_value(&serde_json::json!({
//!     "everything": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-everything"]}
//! }))
//! .substitute_process_env();
//! let manager = McpManager::new(config, ".");
//! let mut registry = ToolRegistry::new();
//! manager.register(&mut registry).await; // starts the servers
//! for server in manager.status().await {
//!     println!("{} {} {:?}", server.name, server.status, server.tools);
//! }
//! # }
//! ```

mod config;
mod connection;
mod content;
mod error;
mod http_client;
mod instructions;
mod legacy_sse;
mod manager;
mod naming;
mod process_group;
mod resource_tools;
mod servers;
mod stderr_tail;
mod tool;

pub use config::{
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpConfig, McpServerConfig, McpServerEntry,
    McpTimeouts, McpTransport, substitute_env,
};
pub use connection::McpToolInfo;
pub use error::McpError;
pub use instructions::format_instructions;
pub use manager::{McpManager, McpServerStatus, McpStatus};
pub use naming::{mcp_tool_name, sanitize_name};
pub use resource_tools::{
    ListResourceTemplatesTool, ListResourcesArgs, ListResourcesTool, ReadResourceArgs,
    ReadResourceTool,
};
pub use tool::McpTool;
