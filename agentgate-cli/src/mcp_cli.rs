//! `agent mcp list`: the MCP servers of the config's `mcp` key, started the
//! way a session starts them, with their status and tools.

use agentgate::Workspace;
use agentgate_tools::mcp::{McpConfig, McpManager, McpServerStatus, McpStatus};
use serde_json::{Value, json};

use crate::permission_cli::Project;

/// Starts the project's MCP servers (concurrently, each within its startup
/// timeout), prints their status and stops them.
/// Without `--config` the servers are those `agent run` starts: the whole
/// configuration stack's `mcp` key, read by the library's [`Workspace`].
pub async fn list(project: &Project, json: bool) -> String {
    let from_stack = match &project.ctx.config {
        None => match Workspace::load(&project.ctx.dir) {
            Ok(workspace) => Some(workspace.mcp()),
            Err(error) => return format!("agent: {error}\n"),
        },
        Some(_) => None,
    };
    let manager = match from_stack {
        Some(Some(manager)) => manager,
        Some(None) => McpManager::new(McpConfig::default(), &project.ctx.dir),
        None => {
            let config = project
                .config
                .as_ref()
                .map(|file| McpConfig::from_opencode(&Value::Object(file.value.clone())))
                .unwrap_or_default()
                .substitute_process_env();
            McpManager::new(config, &project.ctx.dir)
        }
    };
    let status = manager.status().await;
    manager.shutdown();
    format_list(&status, json)
}

/// The report: one line per server (`✓ name  connected  (n tools)`, `○`
/// disabled, `✗` failed with the error below), its tools indented; or a JSON
/// array of `{name, status, error?, tools}`.
pub fn format_list(servers: &[McpServerStatus], json: bool) -> String {
    if json {
        let entries: Vec<Value> = servers
            .iter()
            .map(|server| {
                let mut entry = json!({
                    "name": server.name,
                    "status": status_word(&server.status),
                    "tools": server.tools,
                });
                if let McpStatus::Failed(error) = &server.status {
                    entry["error"] = Value::String(error.to_string());
                }
                entry
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&entries).unwrap_or_default();
        text.push('\n');
        return text;
    }
    if servers.is_empty() {
        return "No MCP servers configured (add them under `mcp` in opencode.json).\n".into();
    }
    let width = servers.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for server in servers {
        let (mark, detail) = match &server.status {
            McpStatus::Connected => {
                let n = server.tools.len();
                (
                    "✓",
                    format!("connected ({n} tool{})", if n == 1 { "" } else { "s" }),
                )
            }
            McpStatus::Disabled => ("○", "disabled".to_string()),
            McpStatus::Failed(_) => ("✗", "failed".to_string()),
            _ => ("?", status_word(&server.status).to_string()),
        };
        out.push_str(&format!("{mark} {:width$}  {detail}\n", server.name));
        if let McpStatus::Failed(error) = &server.status {
            for line in error.to_string().lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
        for tool in &server.tools {
            out.push_str(&format!("    {tool}\n"));
        }
    }
    out
}

fn status_word(status: &McpStatus) -> &'static str {
    match status {
        McpStatus::Connected => "connected",
        McpStatus::Disabled => "disabled",
        McpStatus::Failed(_) => "failed",
        McpStatus::Pending => "pending",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_tools::mcp::McpError;

    fn servers() -> Vec<McpServerStatus> {
        vec![
            McpServerStatus {
                name: "everything".into(),
                status: McpStatus::Connected,
                tools: vec!["everything_echo".into()],
            },
            McpServerStatus {
                name: "gh".into(),
                status: McpStatus::Failed(McpError::Start {
                    server: "gh".into(),
                    message: "boom".into(),
                    stderr: "no token".into(),
                }),
                tools: vec![],
            },
        ]
    }

    #[test]
    fn text_lists_status_errors_and_tools() {
        assert_eq!(
            format_list(&servers(), false),
            "✓ everything  connected (1 tool)\n    everything_echo\n✗ gh          failed\n    MCP server \"gh\" failed to start: boom\n    stderr (last lines):\n    no token\n"
        );
    }

    #[test]
    fn json_has_the_error() {
        let value: Value = serde_json::from_str(&format_list(&servers(), true)).unwrap();
        assert_eq!(value[0]["status"], "connected");
        assert_eq!(value[1]["status"], "failed");
        assert!(value[1]["error"].as_str().unwrap().contains("no token"));
    }
}
