//! [`SessionSetup`]: what the server hands the host's [`AgentFactory`]
//! for each ACP session — its directory, the approver that asks the
//! client, the stored session to resume, the client's MCP servers — and
//! [`ConfiguredAgents`], the factory that builds from the directory's
//! configuration.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Map, Value, json};

use crate::permission::Approver;
use crate::tools::mcp::{McpConfig, McpManager};
use crate::{CodingAgent, CodingAgentBuilder, SessionStore, Workspace};

/// An error of the host's factory, shown to the client as the error of
/// `session/new` or `session/load`.
pub type FactoryError = Box<dyn std::error::Error + Send + Sync>;

/// Builds the coding agent of one ACP session.
#[async_trait::async_trait]
pub trait AgentFactory: Send + Sync {
    /// The agent for `setup`; [`SessionSetup::apply`] adds what the
    /// protocol brings to a builder.
    async fn build(&self, setup: SessionSetup) -> Result<CodingAgent, FactoryError>;
}

/// What one ACP session needs from its agent.
#[derive(Clone)]
pub struct SessionSetup {
    pub(crate) cwd: PathBuf,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) resume: Option<String>,
    pub(crate) mcp_servers: Map<String, Value>,
}

impl std::fmt::Debug for SessionSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSetup")
            .field("cwd", &self.cwd)
            .field("resume", &self.resume)
            .field("mcp_servers", &self.mcp_servers)
            .finish_non_exhaustive()
    }
}

impl SessionSetup {
    /// The session's working directory, as the client sent it.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The stored session to continue (`session/load`).
    pub fn resume(&self) -> Option<&str> {
        self.resume.as_deref()
    }

    /// The approver that turns every ask into `session/request_permission`.
    pub fn approver(&self) -> Arc<dyn Approver> {
        Arc::clone(&self.approver)
    }

    /// The MCP servers the client gave, as entries of the config's `mcp`
    /// key (`local` for stdio, `remote` for HTTP and SSE).
    pub fn client_mcp(&self) -> &Map<String, Value> {
        &self.mcp_servers
    }

    /// The MCP servers of `workspace`'s config with the client's added (a
    /// client server of the same name replaces the configured one); `None`
    /// when there are none.
    pub fn mcp(&self, workspace: &Workspace) -> Option<McpManager> {
        let mut config = McpConfig::from_opencode(&Value::Object(workspace.config().value.clone()))
            .substitute_process_env();
        // The client's entries are taken as given, without `{env:…}` substitution.
        let client = McpConfig::from_opencode(&json!({ "mcp": self.mcp_servers }));
        config.servers.extend(client.servers);
        (!config.servers.is_empty()).then(|| McpManager::new(config, &self.cwd))
    }

    /// Adds the approver, the session to resume and the MCP servers
    /// ([`mcp`](Self::mcp)) to `builder`.
    pub fn apply(&self, builder: CodingAgentBuilder, workspace: &Workspace) -> CodingAgentBuilder {
        let mut builder = builder.approver(self.approver());
        if let Some(manager) = self.mcp(workspace) {
            builder = builder.mcp(manager);
        }
        if let Some(id) = &self.resume {
            builder = builder.resume(id.clone());
        }
        builder
    }
}

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

/// Builds each session's agent from its directory's configuration, as
/// [`CodingAgent::builder`] does, with sessions kept in `store` (so
/// `session/load` finds them).
#[derive(Clone)]
pub struct ConfiguredAgents {
    store: Arc<dyn SessionStore>,
}

impl ConfiguredAgents {
    /// Sessions live in `store`.
    pub fn new(store: Arc<dyn SessionStore>) -> Self {
        ConfiguredAgents { store }
    }
}

#[async_trait::async_trait]
impl AgentFactory for ConfiguredAgents {
    async fn build(&self, setup: SessionSetup) -> Result<CodingAgent, FactoryError> {
        let workspace = Workspace::load(setup.cwd())?;
        let builder = CodingAgent::builder(setup.cwd()).store(Arc::clone(&self.store));
        let builder = setup.apply(builder, &workspace).workspace(workspace);
        Ok(builder.build().await?)
    }
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
        let config = McpConfig::from_opencode(&json!({ "mcp": entries }));
        assert!(config.servers.contains_key("docs"));
    }
}
