//! [`McpTool`]: one MCP server tool as an agentgate-core [`Tool`], named
//! `<server>_<tool>` and asking that name (pattern `*`) before the call
//! reaches the server (§7.2's MCP row).

use std::sync::Arc;

use agentgate_core::{Tool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::connection::{McpToolInfo, RequestError};
use super::content;
use super::naming::mcp_tool_name;
use super::servers::Servers;

/// A tool of an MCP server. Calls go to whichever connection the server
/// has when the call runs: a server that crashed or was shut down fails the
/// call with its name and stderr tail instead of hanging.
pub struct McpTool {
    id: String,
    server: String,
    info: McpToolInfo,
    servers: Arc<Servers>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("id", &self.id)
            .field("server", &self.server)
            .field("tool", &self.info.name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    pub(crate) fn new(server: &str, info: McpToolInfo, servers: Arc<Servers>) -> Self {
        McpTool {
            id: mcp_tool_name(server, &info.name),
            server: server.to_string(),
            info,
            servers,
        }
    }

    /// The configured server name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The server's own name for the tool.
    pub fn tool_name(&self) -> &str {
        &self.info.name
    }
}

#[async_trait]
impl Tool for McpTool {
    fn id(&self) -> &str {
        &self.id
    }

    fn description(&self) -> &str {
        &self.info.description
    }

    fn parameters(&self) -> Value {
        self.info.input_schema.clone()
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = match input {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::InvalidArguments {
                    tool: self.id.clone(),
                    detail: format!("expected an object, got {other}"),
                });
            }
        };
        ctx.ask(
            &self.id,
            ["*"],
            ["*"],
            json!({"server": self.server, "tool": self.info.name, "arguments": arguments}),
        )
        .await?;
        // Starting (or restarting) the server can take up to its startup
        // timeout: a cancelled call stops waiting, and the abandoned start
        // kills what it spawned.
        let connection = tokio::select! {
            connection = self.servers.connection(&self.server) => connection,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        }
        .map_err(|e| ToolError::failed(e.to_string()))?;
        if !connection.tools().iter().any(|t| t.name == self.info.name) {
            return Err(ToolError::failed(format!(
                "MCP server {:?} no longer offers the tool {:?} (its tool list changed)",
                self.server, self.info.name
            )));
        }
        let result = connection
            .call_tool(&self.info.name, arguments, &ctx.cancel)
            .await
            .map_err(|e| match e {
                RequestError::Cancelled => ToolError::Cancelled,
                RequestError::Failed(e) => ToolError::failed(e.to_string()),
            })?;
        let mut metadata = Map::new();
        metadata.insert("server".into(), Value::String(self.server.clone()));
        metadata.insert("tool".into(), Value::String(self.info.name.clone()));
        content::tool_result(&result, &self.id, metadata)
    }
}
