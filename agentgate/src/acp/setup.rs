//! The client's MCP servers of an ACP session (`session/new`'s
//! `mcpServers`) as entries of the config's `mcp` key, which
//! [`AgentSetup`](crate::AgentSetup) hands the host's factory.

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Map, Value, json};

/// The client's MCP servers as config entries.
pub(crate) fn client_mcp_entries(servers: &[McpServer]) -> Map<String, Value> {
    let mut entries = Map::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(stdio) => {
                let mut command = vec![stdio.command.display().to_string()];
                command.extend(stdio.args.iter().cloned());
                let environment: Map<String, Value> = stdio
                    .env
                    .iter()
                    .map(|var| (var.name.clone(), Value::String(var.value.clone())))
                    .collect();
                (
                    stdio.name.clone(),
                    json!({"type": "local", "command": command, "environment": environment}),
                )
            }
            McpServer::Http(http) => (
                http.name.clone(),
                remote(&http.url, http.headers.iter().map(|h| (&h.name, &h.value))),
            ),
            McpServer::Sse(sse) => (
                sse.name.clone(),
                remote(&sse.url, sse.headers.iter().map(|h| (&h.name, &h.value))),
            ),
            _ => {
                tracing::warn!(
                    "an MCP server of a transport this agent does not speak was left out"
                );
                continue;
            }
        };
        entries.insert(name, entry);
    }
    entries
}

fn remote<'a>(url: &str, headers: impl Iterator<Item = (&'a String, &'a String)>) -> Value {
    let headers: Map<String, Value> = headers
        .map(|(name, value)| (name.clone(), Value::String(value.clone())))
        .collect();
    json!({"type": "remote", "url": url, "headers": headers})
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{EnvVariable, McpServerStdio};

    #[test]
    fn a_client_stdio_server_is_a_local_entry() {
        let server = McpServer::Stdio(
            McpServerStdio::new("docs", "/usr/bin/docs-mcp")
                .args(vec!["--stdio".into()])
                .env(vec![EnvVariable::new("TOKEN", "t")]),
        );
        let entries = client_mcp_entries(&[server]);
        assert_eq!(
            entries["docs"],
            json!({"type": "local", "command": ["/usr/bin/docs-mcp", "--stdio"], "environment": {"TOKEN": "t"}})
        );
        let config = crate::tools::mcp::McpConfig::from_opencode(&json!({ "mcp": entries }));
        assert!(config.servers.contains_key("docs"));
    }
}
