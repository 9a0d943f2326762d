//! `agent acp`: the Agent Client Protocol over stdin/stdout, for editors
//! that start the agent as a subprocess (Zed's `agent_servers`, and other
//! ACP clients). The protocol and session logic are the library's
//! (`agentgate::acp`); this file only builds each session's agent the way
//! `agent run` does — the directory's configuration, the model (the demo
//! one when nothing is configured, announced on stderr), the sandbox, the
//! file session store and the remembered approvals. stdout carries
//! protocol messages only; everything else goes to stderr.

use std::sync::Arc;

use agentgate::acp::{AcpServer, AgentFactory, AgentSetup, FactoryError};
use agentgate::store::SqliteStore;
use agentgate::{CodingAgent, Workspace};
use agentgate_core::ConfigLoader;
use agentgate_permission::{Action, Rule, Ruleset};
use agentgate_tools::SandboxMode;
use agentgate_tools::mcp::McpStatus;

use crate::model_choice::{DEMO_NOTICE, choose_model};
use crate::run_cli::sandbox_policy;
use crate::terminal_text::Untrusted;
use crate::workspace::session_store;

/// What `agent acp` was given.
#[derive(Debug, Clone, Default)]
pub struct AcpOptions {
    /// The agent new sessions start in (default: the configured default).
    pub agent: Option<String>,
    /// `provider/model` to run on.
    pub model: Option<String>,
    /// The sandbox bash commands run in.
    pub sandbox: Option<SandboxMode>,
}

/// Builds each ACP session's agent for the directory the client names.
struct CliAgents {
    options: AcpOptions,
    store: Arc<SqliteStore>,
}

#[agentgate::async_trait]
impl AgentFactory for CliAgents {
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        let dir = setup.directory().to_path_buf();
        let workspace = tokio::task::spawn_blocking({
            let dir = dir.clone();
            move || Workspace::with_loader(&dir, ConfigLoader::new(&dir))
        })
        .await??;
        for warning in &workspace.config().warnings {
            eprintln!("agent: warning: {}", Untrusted::new(warning));
        }
        let choice = choose_model(self.options.model.as_deref(), &workspace, |v| {
            std::env::var(v).ok()
        })?;
        if choice.demo {
            eprintln!("{DEMO_NOTICE}");
        }
        let policy = sandbox_policy(self.options.sandbox, &workspace.config().value)?;
        let permissions = crate::workspace::gate(&dir)?;
        let mut builder = CodingAgent::builder(&dir)
            .share_cli_store()
            .model(choice.model)
            .sandbox(policy)
            .store(self.store.clone())
            .permissions(permissions);
        let contents = crate::telemetry_cli::capture_content();
        builder = builder.engine(move |engine| engine.trace_contents(contents));
        if choice.demo {
            // As in `agent run`: the demo's session asks before any command.
            builder = builder.session_permission(Ruleset::from(vec![Rule::new(
                "bash",
                "*",
                Action::Ask,
            )]));
        }
        if let (Some(agent), None) = (&self.options.agent, setup.resume()) {
            builder = builder.agent(agent);
        }
        let builder = setup.apply(builder).workspace(workspace);
        let agent = builder.build().await?;
        // The library logs these through `tracing`; the CLI names them on
        // stderr, as `agent run` does.
        if let Some(manager) = agent.mcp() {
            for server in manager.status().await {
                if let McpStatus::Failed(error) = &server.status {
                    eprintln!(
                        "agent: MCP server {} failed: {}",
                        Untrusted::new(&server.name),
                        Untrusted::new(error)
                    );
                }
            }
        }
        Ok(agent)
    }
}

/// Serves ACP on stdin/stdout until the client closes stdin.
pub async fn serve(options: AcpOptions) -> Result<(), String> {
    let store = session_store().await?;
    let factory = CliAgents { options, store };
    AcpServer::new(Arc::new(factory))
        .info("agent", env!("CARGO_PKG_VERSION"))
        // `agent trust`'s record: a project trusted in the editor is
        // trusted in `agent run` too, and the other way round.
        .ask_trust(agentgate::project_trust::TrustStore::in_data_dir(
            &Workspace::data_dir(crate::workspace::APP),
        ))
        .serve(tokio::io::stdin(), tokio::io::stdout())
        .await
        .map_err(|e| e.to_string())
}
