//! [`CodingAgent`]: the one-call agent for a directory, assembled as
//! `agent run` assembles it ([`Workspace`]): with no other call, the
//! configured model through the config's `provider` entries (and their
//! `limit`s) or the environment, the built-in tools with bash under the
//! config's `sandbox` policy, the config's MCP servers (started, their
//! instructions in the system prompt), the "always" approvals remembered
//! for the directory. Every part can be replaced.
//!
//! agentgate-core's own [`agentgate_core::CodingAgent`] names no concrete
//! tool or provider; this one, in the facade, brings them.

use std::path::PathBuf;
use std::sync::Arc;

use agentgate_core::{
    AgentEnvironment, Config, ConfigLoader, Engine, LanguageModel, ModelResolver, PermissionPreset,
    Session, SessionStore, Tool, ToolRegistry, TurnError, TurnEvent, TurnResult,
};
use agentgate_permission::{Approver, PermissionGate, Ruleset};
use agentgate_tools::SandboxPolicy;
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::workspace::{DEFAULT_APP, Workspace, WorkspaceError};

/// Builds a [`CodingAgent`]; see [`CodingAgent::builder`].
pub struct CodingAgentBuilder {
    inner: agentgate_core::CodingAgentBuilder,
    directory: PathBuf,
    loader: Option<ConfigLoader>,
    workspace: Option<Workspace>,
    #[cfg(feature = "mcp")]
    manager: Option<agentgate_tools::mcp::McpManager>,
    model: Option<Arc<dyn LanguageModel>>,
    model_name: Option<String>,
    resolver: Option<Arc<dyn ModelResolver>>,
    tools: Option<ToolRegistry>,
    added: Vec<Arc<dyn Tool>>,
    sandbox: Option<SandboxPolicy>,
    mcp: bool,
    app: String,
    permissions: Option<PermissionGate>,
}

impl CodingAgentBuilder {
    /// Loads the configuration with this loader (default:
    /// [`ConfigLoader::new`] for the directory).
    pub fn config(mut self, loader: ConfigLoader) -> Self {
        self.loader = Some(loader);
        self
    }

    /// Uses this workspace, already loaded, instead of loading the
    /// directory's configuration (a host that read it first, to choose a
    /// model or show what it found).
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Uses this manager for the config's MCP servers (one the host made
    /// with [`Workspace::mcp`] and may have started, to show progress).
    #[cfg(feature = "mcp")]
    pub fn mcp(mut self, manager: agentgate_tools::mcp::McpManager) -> Self {
        self.manager = Some(manager);
        self
    }

    /// Retries failed model calls by this policy (default: the config's
    /// `retry` key, else [`agentgate_core::RetryPolicy::default`]).
    pub fn retry(mut self, policy: agentgate_core::RetryPolicy) -> Self {
        self.inner = self.inner.retry(policy);
        self
    }

    /// A deadline for each turn (default: none).
    pub fn max_turn_time(mut self, limit: std::time::Duration) -> Self {
        self.inner = self.inner.max_turn_time(limit);
        self
    }

    /// Runs on this model instead of the configured one.
    pub fn model(mut self, model: Arc<dyn LanguageModel>) -> Self {
        self.model = Some(model);
        self
    }

    /// Runs on the model named `provider/model` instead of the configured
    /// one, built as the configured one would be.
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// Resolves agents' own `model` names with this (default: the config's
    /// providers, then the environment).
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Uses these tools instead of the built-in ones (MCP servers' tools
    /// are still added unless [`without_mcp`](Self::without_mcp)).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Adds a tool to the set (the built-in one of the same id is replaced).
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.added.push(Arc::new(tool));
        self
    }

    /// Runs bash under this policy instead of the config's `sandbox` key.
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = Some(policy);
        self
    }

    /// Leaves the config's MCP servers out.
    pub fn without_mcp(mut self) -> Self {
        self.mcp = false;
        self
    }

    /// Answers permission asks (default: none, so every ask is rejected
    /// with a warning — the agent never hangs waiting).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.inner = self.inner.approver(approver);
        self
    }

    /// Uses this permission gate instead of one with the approvals
    /// remembered for the directory.
    pub fn permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Runs this agent (default: the configured `default_agent`, else `build`).
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.inner = self.inner.agent(name);
        self
    }

    /// Sets the agent environment (default: [`AgentEnvironment::detect`]).
    pub fn environment(mut self, environment: AgentEnvironment) -> Self {
        self.inner = self.inner.environment(environment);
        self
    }

    /// The application name of the data directory — sessions, remembered
    /// approvals — and the temporary directory (default `agent-sdk`, the
    /// `agent` CLI's).
    pub fn app(mut self, app: impl Into<String>) -> Self {
        self.app = app.into();
        self
    }

    /// Keeps sessions in this store (default: in memory).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.inner = self.inner.store(store);
        self
    }

    /// Continues the stored session `id` instead of creating one.
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.inner = self.inner.resume(session_id);
        self
    }

    /// Appends a section to the system prompt (after the instruction files
    /// and the MCP servers' instructions).
    pub fn system_section(mut self, section: impl Into<String>) -> Self {
        self.inner = self.inner.system_section(section);
        self
    }

    /// Session rules for the session it creates, evaluated after the
    /// agent's.
    pub fn session_permission(mut self, rules: Ruleset) -> Self {
        self.inner = self.inner.session_permission(rules);
        self
    }

    /// Layers a named set of permission defaults into every agent (see
    /// [`agentgate_core::CodingAgentBuilder::permission_preset`]).
    pub fn permission_preset(mut self, preset: PermissionPreset) -> Self {
        self.inner = self.inner.permission_preset(preset);
        self
    }

    /// Whether (and with which model) new sessions get titles from the
    /// hidden `title` agent (see
    /// [`agentgate_core::CodingAgentBuilder::session_titles`]; default: on
    /// when the configuration's `small_model` or the `title` agent's
    /// `model` is set).
    pub fn session_titles(mut self, titles: agentgate_core::SessionTitles) -> Self {
        self.inner = self.inner.session_titles(titles);
        self
    }

    /// The title of the session it creates; such a session gets no
    /// generated title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner = self.inner.title(title);
        self
    }

    /// Adds a hook (see [`agentgate_core::CodingAgentBuilder::hook`]); it
    /// runs after the configuration's `hooks` commands.
    pub fn hook(mut self, hook: Arc<dyn agentgate_core::Hook>) -> Self {
        self.inner = self.inner.hook(hook);
        self
    }

    /// Loads the configuration, assembles the model, tools, MCP servers and
    /// gate, and creates the session.
    ///
    /// # Errors
    /// [`WorkspaceError::Config`] for a broken configuration,
    /// [`WorkspaceError::NoModel`] when no model is given, configured or
    /// keyed in the environment, [`WorkspaceError::Model`] when the named
    /// one cannot be built, [`WorkspaceError::Sandbox`] for a bad `sandbox`
    /// key, and [`WorkspaceError::Agent`] for the agent itself.
    pub async fn build(self) -> Result<CodingAgent, WorkspaceError> {
        let workspace = match self.workspace {
            Some(workspace) => workspace,
            None => {
                let loader = self
                    .loader
                    .unwrap_or_else(|| ConfigLoader::new(&self.directory));
                let workspace = Workspace::with_loader(&self.directory, loader)?;
                for warning in &workspace.config().warnings {
                    tracing::warn!("{warning}");
                }
                workspace
            }
        };
        let model = match self.model {
            Some(model) => model,
            None => {
                let name = self
                    .model_name
                    .or_else(|| workspace.model_name())
                    .ok_or(WorkspaceError::NoModel)?;
                workspace.model(&name)?
            }
        };
        let mut tools = match self.tools {
            Some(tools) => tools,
            None => {
                let policy = match self.sandbox {
                    Some(policy) => policy,
                    None => workspace.sandbox_policy()?,
                };
                workspace.tools(policy)?
            }
        };
        for tool in self.added {
            tools.register_arc(tool);
        }
        #[cfg_attr(not(feature = "mcp"), allow(unused_mut))]
        let mut inner = self.inner;
        #[cfg(not(feature = "mcp"))]
        let _ = self.mcp;
        #[cfg(feature = "mcp")]
        let manager = match self.manager {
            Some(manager) => Some(manager),
            None => self.mcp.then(|| workspace.mcp()).flatten(),
        };
        let mcp = match manager {
            Some(manager) => {
                manager.register(&mut tools).await;
                for server in manager.status().await {
                    if let agentgate_tools::mcp::McpStatus::Failed(error) = &server.status {
                        tracing::warn!(server = %server.name, %error, "MCP server failed; its tools are left out");
                    }
                }
                if let Some(section) = manager.instructions(&Ruleset::default()).await {
                    inner = inner.system_section(section);
                }
                Some(McpGuard(manager))
            }
            None => None,
        };
        let permissions = match self.permissions {
            Some(permissions) => permissions,
            None => workspace.approvals(&self.app)?,
        };
        let resolver = self.resolver.unwrap_or_else(|| workspace.resolver());
        let loader = workspace.loader().clone();
        let config = workspace.config().clone();
        let agent = inner
            .loaded_config(loader, config)
            .skills(workspace.skills().clone())
            .app(self.app)
            .model(model)
            .model_resolver(resolver)
            .tools(tools)
            .permissions(permissions)
            .build()
            .await?;
        Ok(CodingAgent {
            inner: agent,
            #[cfg(feature = "mcp")]
            mcp,
        })
    }
}

/// Stops the MCP servers when the agent is dropped.
#[cfg(feature = "mcp")]
#[derive(Debug)]
struct McpGuard(agentgate_tools::mcp::McpManager);

#[cfg(feature = "mcp")]
impl Drop for McpGuard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// A coding agent for one directory, assembled from its configuration;
/// an engine and a session on it.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// // The directory's configured model, tools, sandbox and MCP servers.
/// let agent = agentgate::CodingAgent::builder(".").build().await?;
/// let turn = agent.run("What does this project do?").await?;
/// println!("{}", turn.text());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct CodingAgent {
    inner: agentgate_core::CodingAgent,
    #[cfg(feature = "mcp")]
    mcp: Option<McpGuard>,
}

impl CodingAgent {
    /// Starts building a coding agent for `directory`.
    pub fn builder(directory: impl Into<PathBuf>) -> CodingAgentBuilder {
        let directory = directory.into();
        CodingAgentBuilder {
            inner: agentgate_core::CodingAgent::builder(&directory),
            directory,
            loader: None,
            workspace: None,
            #[cfg(feature = "mcp")]
            manager: None,
            model: None,
            model_name: None,
            resolver: None,
            tools: None,
            added: Vec::new(),
            sandbox: None,
            mcp: true,
            app: DEFAULT_APP.to_string(),
            permissions: None,
        }
    }

    /// The engine (events, permissions, the session store).
    pub fn engine(&self) -> &Engine {
        self.inner.engine()
    }

    /// The session prompts go to.
    pub fn session(&self) -> &Session {
        self.inner.session()
    }

    /// The loaded configuration.
    pub fn config(&self) -> &Config {
        self.inner.config()
    }

    /// The config's MCP servers, when it has any (and they were not left
    /// out).
    #[cfg(feature = "mcp")]
    pub fn mcp(&self) -> Option<&agentgate_tools::mcp::McpManager> {
        self.mcp.as_ref().map(|guard| &guard.0)
    }

    /// The agent of agentgate-core underneath.
    pub fn core(&self) -> &agentgate_core::CodingAgent {
        &self.inner
    }

    /// Runs a prompt; a turn without an answer is an `Err` (see
    /// [`Engine::run`]).
    pub async fn run(&self, prompt: impl Into<String>) -> Result<TurnResult, TurnError> {
        self.inner.run(prompt).await
    }

    /// Runs a prompt made of parts: text and attached files or images
    /// (see [`agentgate_core::CodingAgent::run_parts`] and
    /// [`attach_file`](crate::attach_file)).
    pub async fn run_parts(&self, parts: Vec<crate::Part>) -> Result<TurnResult, TurnError> {
        self.inner.run_parts(parts).await
    }

    /// Runs a prompt whose final answer must be JSON valid against
    /// `schema` (see [`agentgate_core::CodingAgent::run_structured`]).
    pub async fn run_structured(
        &self,
        prompt: impl Into<String>,
        schema: &agentgate_core::OutputSchema,
    ) -> Result<agentgate_core::StructuredAnswer, agentgate_core::StructuredError> {
        self.inner.run_structured(prompt, schema).await
    }

    /// The answer decoded into `T`, checked against the schema `schemars`
    /// derives for it (see [`agentgate_core::CodingAgent::run_as`]).
    pub async fn run_as<T>(
        &self,
        prompt: impl Into<String>,
    ) -> Result<T, agentgate_core::StructuredError>
    where
        T: agentgate_core::schemars::JsonSchema + serde::de::DeserializeOwned,
    {
        self.inner.run_as(prompt).await
    }

    /// Streams a prompt's turn (see [`Engine::prompt_stream`]).
    pub fn stream(
        &self,
        prompt: impl Into<String>,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.inner.stream(prompt)
    }

    /// Streams a turn of these user parts with this prompt's agent and
    /// model (a prepared custom command's; see
    /// [`Engine::prepare_command`]).
    pub fn stream_parts(
        &self,
        parts: Vec<agentgate_core::Part>,
        options: agentgate_core::PromptOptions,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.inner.stream_parts(parts, options, cancel)
    }

    /// [`stream`](Self::stream), cancelled when `cancel` is.
    pub fn stream_with(
        &self,
        prompt: impl Into<String>,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.inner.stream_with(prompt, cancel)
    }
}
