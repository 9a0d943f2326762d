//! [`CodingAgent`]: the one coding agent for a directory, assembled as
//! `agent run` assembles it ([`Workspace`]). With no other call: the
//! configured model (with feature `providers`, through the config's
//! `provider` entries or the environment), the built-in tools with bash
//! under the config's `sandbox` policy (feature `tools`), the config's MCP
//! servers (feature `mcp`), the "always" approvals remembered for the
//! directory in the program's own data directory, and no approver: every
//! ask is rejected at once with opencode's warning.
//!
//! The engine's own knobs are not repeated here: [`CodingAgentBuilder::engine`]
//! hands the [`EngineBuilder`] that agentgate-core's
//! [`EngineBuilder::from_config`] made from the configuration to the host.

use std::path::PathBuf;
use std::sync::Arc;

use agentgate_core::{
    AgentEnvironment, Config, ConfigLoader, Engine, EngineBuilder, EngineSetup, LanguageModel,
    ModelResolver, NonInteractive, PermissionPreset, Session, SessionStore, Skills, Tool,
    ToolRegistry, TurnError, TurnEvent, TurnResult,
};
use agentgate_permission::{Approver, PermissionGate, Ruleset};
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::coding_agent_error::CodingAgentError;
use crate::trust_policy::TrustPolicy;
use crate::workspace::{CLI_APP, Workspace};

/// A change to the engine builder, applied after the configuration's.
type EngineEdit = Box<dyn FnOnce(EngineBuilder) -> EngineBuilder + Send>;

/// Builds a [`CodingAgent`]; see [`CodingAgent::builder`].
#[must_use = "a builder does nothing until .build().await"]
pub struct CodingAgentBuilder {
    directory: PathBuf,
    loader: Option<ConfigLoader>,
    workspace: Option<Workspace>,
    trust: Option<TrustPolicy>,
    model: Option<Arc<dyn LanguageModel>>,
    model_name: Option<String>,
    resolver: Option<Arc<dyn ModelResolver>>,
    tools: Option<ToolRegistry>,
    added: Vec<Arc<dyn Tool>>,
    #[cfg(feature = "tools")]
    sandbox: Option<agentgate_tools::SandboxPolicy>,
    #[cfg(feature = "mcp")]
    mcp: crate::coding_agent_mcp::McpChoice,
    app: Option<String>,
    approver: Option<Arc<dyn Approver>>,
    permissions: Option<PermissionGate>,
    store: Option<Arc<dyn SessionStore>>,
    agent: Option<String>,
    environment: Option<AgentEnvironment>,
    resume: Option<String>,
    session_rules: Ruleset,
    title: Option<String>,
    preset: PermissionPreset,
    sections: Vec<String>,
    edits: Vec<EngineEdit>,
    checkpoints: CheckpointChoice,
}

/// Where a [`CodingAgent`]'s steps record their file changes.
enum CheckpointChoice {
    /// `<data dir>/checkpoints` with feature `tools` (none without).
    Default,
    /// The host's.
    Given(Arc<dyn agentgate_core::Checkpoints>),
    /// None: revert hides messages but restores no file.
    Off,
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

    /// Decides whether the project's configuration layers are trusted
    /// (see [`TrustPolicy`]). Default: trusted only when this program
    /// recorded the project as trusted ([`TrustPolicy::recorded_for`] of
    /// its [`app`](Self::app)), or when the [`config`](Self::config)
    /// loader says so (`ConfigLoader::trust_project(true)`); until then the
    /// project may add `deny` and `ask` rules, agents, prompts, commands
    /// and skills, but starts no process, redirects no provider, sends no
    /// outside secret and allows nothing its user's configuration does not.
    pub fn trust(mut self, policy: TrustPolicy) -> Self {
        self.trust = Some(policy);
        self
    }

    /// Runs on this model instead of the configured one.
    pub fn model(mut self, model: Arc<dyn LanguageModel>) -> Self {
        self.model = Some(model);
        self
    }

    /// Runs on the model named `provider/model` instead of the configured
    /// one, built as the configured one would be (feature `providers`),
    /// else served by the [`model_resolver`](Self::model_resolver).
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// Resolves the other model names (agents' own `model`, `small_model`
    /// for titles), and the configured model when no client for it is
    /// built in (default, with feature `providers`: the config's providers,
    /// then the environment).
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Uses these tools instead of the built-in ones (MCP servers' tools
    /// are still added, with feature `mcp`, unless
    /// `without_mcp`).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Adds a tool to the set (one of the same id is replaced).
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.added.push(Arc::new(tool));
        self
    }

    /// Runs bash under this policy instead of the config's `sandbox` key.
    #[cfg(feature = "tools")]
    pub fn sandbox(mut self, policy: agentgate_tools::SandboxPolicy) -> Self {
        self.sandbox = Some(policy);
        self
    }

    /// Uses this manager for the MCP servers (one the host made with
    /// [`Workspace::mcp`] and may have started, to show progress).
    #[cfg(feature = "mcp")]
    pub fn mcp(mut self, manager: agentgate_tools::mcp::McpManager) -> Self {
        self.mcp = crate::coding_agent_mcp::McpChoice::Given(manager);
        self
    }

    /// Adds MCP servers to the config's, as entries of its `mcp` key taken
    /// as given (no `{env:…}` substitution); one of the same name replaces
    /// the configured one. An ACP client's servers arrive this way.
    #[cfg(feature = "mcp")]
    pub fn mcp_servers(mut self, entries: serde_json::Map<String, serde_json::Value>) -> Self {
        self.mcp.add(entries);
        self
    }

    /// Leaves the MCP servers out.
    #[cfg(feature = "mcp")]
    pub fn without_mcp(mut self) -> Self {
        self.mcp = crate::coding_agent_mcp::McpChoice::Off;
        self
    }

    /// Answers permission asks. Default: none, so every ask that the
    /// rules and the remembered approvals leave open is rejected at once
    /// with opencode's warning (`permission requested: …; auto-rejecting`,
    /// through `tracing`) — the agent never waits on nobody.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Uses this permission gate instead of one with the approvals
    /// remembered for the directory. The host answers its asks: through
    /// the gate's approver (an [`approver`](Self::approver) given here is
    /// installed on it) or with [`PermissionGate::reply`] from the event
    /// stream, as `agent serve` does. A gate with neither waits.
    pub fn permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// The application name of the data directory (sessions, remembered
    /// approvals, spilled tool output) and the temporary directory:
    /// `$XDG_DATA_HOME/<app>`, else `~/.local/share/<app>`. Default: the
    /// program's own, named after its executable, so an embedding program
    /// never shares the `agent` CLI's approvals by accident; see
    /// [`share_cli_store`](Self::share_cli_store).
    pub fn app(mut self, app: impl Into<String>) -> Self {
        self.app = Some(app.into());
        self
    }

    /// Shares the `agent` CLI's data directory ([`CLI_APP`]): an "always"
    /// answered in `agent chat` for this directory then counts here too,
    /// and the other way round.
    pub fn share_cli_store(self) -> Self {
        self.app(CLI_APP)
    }

    /// Keeps sessions in this store (default: in memory).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Runs this agent (default: the configured `default_agent`, else `build`).
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(name.into());
        self
    }

    /// Sets the agent environment (default: [`AgentEnvironment::detect`]
    /// for the [`app`](Self::app) and the project's worktree).
    pub fn environment(mut self, environment: AgentEnvironment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// Continues the stored session `id` instead of creating one (it keeps
    /// its own agent).
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.resume = Some(session_id.into());
        self
    }

    /// Session rules for the session it creates, evaluated after the
    /// agent's (opencode's `run` denies `question` this way, §16).
    pub fn session_permission(mut self, rules: Ruleset) -> Self {
        self.session_rules = rules;
        self
    }

    /// The title of the session it creates (opencode's `run --title`); a
    /// session with a title gets no generated one.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Layers a named set of permission defaults into every agent (default:
    /// [`PermissionPreset::OpencodeDefaults`], which allow nearly
    /// everything). [`PermissionPreset::AskBeforeSideEffects`] asks before
    /// edits, commands, the network, MCP tools and custom tools; the
    /// configuration's rules still decide over it.
    pub fn permission_preset(mut self, preset: PermissionPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Appends a section to the system prompt (after the instruction files
    /// and the MCP servers' instructions).
    pub fn system_section(mut self, section: impl Into<String>) -> Self {
        self.sections.push(section.into());
        self
    }

    /// Changes the engine: `edit` gets the [`EngineBuilder`] the
    /// configuration made ([`EngineBuilder::from_config`]) and returns it
    /// changed — retries, a turn deadline, hooks, titles, loop settings.
    /// Edits run in the order given, before the builder's tools, gate and
    /// store are set.
    ///
    /// ```no_run
    /// # async fn demo(hook: std::sync::Arc<dyn agentgate::Hook>) -> Result<(), agentgate::CodingAgentError> {
    /// use std::time::Duration;
    /// let agent = agentgate::CodingAgent::builder(".")
    ///     .engine(move |e| e.max_turn_time(Duration::from_secs(600)).hook(hook))
    ///     .build()
    ///     .await?;
    /// # let _ = agent; Ok(()) }
    /// ```
    pub fn engine(
        mut self,
        edit: impl FnOnce(EngineBuilder) -> EngineBuilder + Send + 'static,
    ) -> Self {
        self.edits.push(Box::new(edit));
        self
    }

    /// Records each step's file changes here (see
    /// [`checkpoint`](agentgate_core::checkpoint)). Default, with feature
    /// `tools`: [`FsCheckpoints`](agentgate_tools::FsCheckpoints) in
    /// `<data dir>/checkpoints` ([`Workspace::checkpoints`]), capped at
    /// 1 GiB with the oldest contents pruned first, so
    /// [`Engine::revert`](crate::Engine::revert) and `/undo` restore files.
    pub fn checkpoints(mut self, checkpoints: Arc<dyn agentgate_core::Checkpoints>) -> Self {
        self.checkpoints = CheckpointChoice::Given(checkpoints);
        self
    }

    /// Keeps no checkpoints: a revert hides the later messages but
    /// restores no file.
    pub fn without_checkpoints(mut self) -> Self {
        self.checkpoints = CheckpointChoice::Off;
        self
    }

    /// Loads the configuration, assembles the model, tools, MCP servers and
    /// gate, and creates (or loads) the session.
    ///
    /// # Errors
    /// [`CodingAgentError::Workspace`] for a broken configuration or
    /// `sandbox` key, a model that cannot be built or an approval store
    /// that cannot be opened; [`CodingAgentError::NoModel`] when no model
    /// is given, configured or keyed in the environment;
    /// [`CodingAgentError::Setup`] for a bad `retry` key;
    /// [`CodingAgentError::UnknownAgent`] for an agent that does not
    /// exist; [`CodingAgentError::Session`] when the session cannot be
    /// created or loaded.
    pub async fn build(self) -> Result<CodingAgent, CodingAgentError> {
        let app = self.app.unwrap_or_else(program_app);
        let workspace = match self.workspace {
            Some(workspace) => workspace,
            None => load_workspace(&self.directory, self.loader, self.trust, &app)?,
        };
        let resolver = self.resolver.or_else(|| default_resolver(&workspace));
        let model = match self.model {
            Some(model) => model,
            None => configured_model(&workspace, self.model_name, resolver.as_ref())?,
        };
        #[cfg(feature = "tools")]
        let mut sandbox = None;
        #[cfg(feature = "tools")]
        let mut tools = match self.tools {
            Some(tools) => tools,
            None => {
                let policy = match self.sandbox {
                    Some(policy) => policy,
                    None => workspace.sandbox_policy()?,
                };
                sandbox = Some(policy.clone());
                workspace.tools(policy)?
            }
        };
        #[cfg(not(feature = "tools"))]
        let mut tools = self.tools.unwrap_or_default();
        for tool in self.added {
            tools.register_arc(tool);
        }
        let mut sections = Vec::new();
        #[cfg(feature = "mcp")]
        let mcp = self.mcp.start(&workspace, &mut tools, &mut sections).await;
        sections.extend(self.sections);
        let permissions = gate(self.permissions, self.approver, &workspace, &app)?;
        let loader = workspace.loader();
        let environment = self.environment.unwrap_or_else(|| {
            AgentEnvironment::detect(&app, loader.resolved_worktree().to_string_lossy())
        });
        let setup = engine_setup(model, environment, resolver, workspace.skills(), sections)
            .preset(self.preset);
        let setup = match loader.resolved_global_dir() {
            Some(global) => setup.global_dir(global),
            None => setup,
        };
        let mut builder = EngineBuilder::from_config(workspace.config(), setup)?;
        for edit in self.edits {
            builder = edit(builder);
        }
        let agent = chosen_agent(&builder, self.agent)?;
        let mut builder = builder.tools(tools).permissions(permissions);
        if let Some(store) = self.store {
            builder = builder.store(store);
        }
        if let Some(checkpoints) = chosen_checkpoints(self.checkpoints, &app) {
            builder = builder.checkpoints(checkpoints);
        }
        let engine = builder.build();
        let shared = Arc::new(AgentShared {
            #[cfg(feature = "tools")]
            sandbox,
            trust: workspace.trust_state().clone(),
            project_root: workspace.project_root(),
            commands: workspace.commands().clone(),
            config: workspace.config().clone(),
            directory: self.directory,
            session_rules: self.session_rules,
            #[cfg(feature = "mcp")]
            mcp,
        });
        let session = match self.resume {
            Some(id) => stored_session(&engine, &id).await?,
            None => new_session(&engine, &shared, agent, self.title).await?,
        };
        Ok(CodingAgent {
            engine,
            session,
            shared,
        })
    }
}

/// The directory's workspace, its project trusted as `trust` decides
/// (default: as `app` recorded it, or as the loader says), its warnings
/// logged.
fn load_workspace(
    directory: &std::path::Path,
    loader: Option<ConfigLoader>,
    trust: Option<TrustPolicy>,
    app: &str,
) -> Result<Workspace, CodingAgentError> {
    let loader = loader.unwrap_or_else(|| ConfigLoader::new(directory));
    let policy = match trust {
        Some(policy) => policy,
        None if loader.project_is_trusted() => TrustPolicy::trust_all(),
        None => TrustPolicy::recorded_for(app),
    };
    let workspace = Workspace::with_trust(directory, loader, &policy)?;
    for warning in &workspace.config().warnings {
        tracing::warn!("{warning}");
    }
    Ok(workspace)
}

/// The checkpoints a build gets.
fn chosen_checkpoints(
    choice: CheckpointChoice,
    app: &str,
) -> Option<Arc<dyn agentgate_core::Checkpoints>> {
    match choice {
        CheckpointChoice::Given(checkpoints) => Some(checkpoints),
        CheckpointChoice::Off => None,
        #[cfg(feature = "tools")]
        CheckpointChoice::Default => Some(Arc::new(Workspace::checkpoints(app))),
        #[cfg(not(feature = "tools"))]
        CheckpointChoice::Default => {
            let _ = app;
            None
        }
    }
}

/// What the configuration does not say, for [`EngineBuilder::from_config`].
fn engine_setup(
    model: Arc<dyn LanguageModel>,
    environment: AgentEnvironment,
    resolver: Option<Arc<dyn ModelResolver>>,
    skills: &Skills,
    sections: Vec<String>,
) -> EngineSetup {
    let mut setup = EngineSetup::new(model, environment).skills(skills.clone());
    if let Some(resolver) = resolver {
        setup = setup.resolver(resolver);
    }
    for section in sections {
        setup = setup.system_section(section);
    }
    setup
}

/// The resolver of the workspace's providers (feature `providers`).
#[cfg(feature = "providers")]
fn default_resolver(workspace: &Workspace) -> Option<Arc<dyn ModelResolver>> {
    Some(workspace.resolver())
}

/// Without feature `providers` no client is built in: only a resolver the
/// host gives serves model names.
#[cfg(not(feature = "providers"))]
fn default_resolver(_: &Workspace) -> Option<Arc<dyn ModelResolver>> {
    None
}

/// The model named (else configured, else keyed in the environment): the
/// workspace's client for it with feature `providers`, else the
/// resolver's.
fn configured_model(
    workspace: &Workspace,
    name: Option<String>,
    resolver: Option<&Arc<dyn ModelResolver>>,
) -> Result<Arc<dyn LanguageModel>, CodingAgentError> {
    let name = name
        .or_else(|| workspace.model_name())
        .ok_or(CodingAgentError::NoModel)?;
    #[cfg(feature = "providers")]
    {
        let _ = resolver;
        Ok(workspace.model(&name)?)
    }
    #[cfg(not(feature = "providers"))]
    {
        agentgate_core::ModelRef::parse(&name)
            .and_then(|reference| resolver.and_then(|r| r.resolve(&reference)))
            .ok_or(CodingAgentError::UnknownModel(name))
    }
}

/// Stored session `id`.
async fn stored_session(engine: &Engine, id: &str) -> Result<Session, CodingAgentError> {
    engine
        .store()
        .session(id)
        .await
        .map_err(|e| CodingAgentError::Session(e.into()))
}

/// A new session in `agent` with the shared session rules, stored.
async fn new_session(
    engine: &Engine,
    shared: &AgentShared,
    agent: String,
    title: Option<String>,
) -> Result<Session, CodingAgentError> {
    let mut session = Session::new(agent, shared.directory.clone());
    session.permission = shared.session_rules.clone();
    if let Some(title) = title {
        session.title = title;
    }
    engine
        .create_session(session)
        .await
        .map_err(CodingAgentError::Session)
}

/// The agent new sessions start in: the one named, if the configuration
/// has it, else the default agent.
fn chosen_agent(
    builder: &EngineBuilder,
    named: Option<String>,
) -> Result<String, CodingAgentError> {
    let Some(agents) = builder.catalog() else {
        return Err(CodingAgentError::UnknownAgent {
            name: named.unwrap_or_default(),
            available: String::new(),
        });
    };
    known_agent(agents, named)
}

/// `named` if `agents` has it, else the default agent.
fn known_agent(
    agents: &agentgate_core::Agents,
    named: Option<String>,
) -> Result<String, CodingAgentError> {
    match named {
        Some(name) if agents.get(&name).is_some() => Ok(name),
        Some(name) => Err(CodingAgentError::UnknownAgent {
            name,
            available: agents
                .list()
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        None => Ok(agents.default_agent()?.name.clone()),
    }
}

/// The gate: the host's (its approver installed), else one with the
/// approvals `app` remembers for the directory, answered by the approver
/// given or, without one, by [`NonInteractive`] — rejected at once,
/// never a wait on nobody.
fn gate(
    given: Option<PermissionGate>,
    approver: Option<Arc<dyn Approver>>,
    workspace: &Workspace,
    app: &str,
) -> Result<PermissionGate, CodingAgentError> {
    let (permissions, approver) = match given {
        Some(permissions) => (permissions, approver),
        None => (
            workspace.approvals(app)?,
            Some(approver.unwrap_or_else(|| Arc::new(NonInteractive))),
        ),
    };
    if let Some(approver) = approver {
        permissions.set_approver(approver);
    }
    Ok(permissions)
}

/// The application name of a program that names none: its executable's
/// file name (letters, digits, `.`, `_` and `-` kept), so each embedding
/// program has its own data directory. The `agent` CLI's own name
/// ([`CLI_APP`]) and a name that cannot be read give `agentgate-app`.
fn program_app() -> String {
    let name: String = std::env::current_exe()
        .ok()
        .and_then(|path| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() || name == CLI_APP {
        "agentgate-app".to_string()
    } else {
        name.to_string()
    }
}

/// A coding agent for one directory, assembled from its configuration:
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
///
/// Many sessions can share one agent's engine, tools, sandbox and MCP
/// servers: [`new_session`](Self::new_session) and
/// [`open_session`](Self::open_session) give another `CodingAgent` on the
/// same engine at the cost of a session record (what `agent serve` does
/// for every session after the first).
#[derive(Debug, Clone)]
pub struct CodingAgent {
    engine: Engine,
    session: Session,
    shared: Arc<AgentShared>,
}

/// What every session opened from one built agent shares.
#[derive(Debug)]
struct AgentShared {
    config: Config,
    /// The policy the built-in bash tool runs under (`None`: the tools
    /// were the embedder's own).
    #[cfg(feature = "tools")]
    sandbox: Option<agentgate_tools::SandboxPolicy>,
    trust: crate::ProjectTrust,
    project_root: PathBuf,
    commands: agentgate_core::Commands,
    /// A new session's directory and its session rules.
    directory: PathBuf,
    session_rules: Ruleset,
    #[cfg(feature = "mcp")]
    mcp: Option<crate::coding_agent_mcp::McpGuard>,
}

impl CodingAgent {
    /// Starts building a coding agent for `directory`.
    pub fn builder(directory: impl Into<PathBuf>) -> CodingAgentBuilder {
        CodingAgentBuilder {
            directory: directory.into(),
            loader: None,
            workspace: None,
            trust: None,
            model: None,
            model_name: None,
            resolver: None,
            tools: None,
            added: Vec::new(),
            #[cfg(feature = "tools")]
            sandbox: None,
            #[cfg(feature = "mcp")]
            mcp: crate::coding_agent_mcp::McpChoice::default(),
            app: None,
            approver: None,
            permissions: None,
            store: None,
            agent: None,
            environment: None,
            resume: None,
            session_rules: Ruleset::default(),
            title: None,
            preset: PermissionPreset::default(),
            sections: Vec::new(),
            edits: Vec::new(),
            checkpoints: CheckpointChoice::Default,
        }
    }

    /// The engine (events, permissions, the session store, the agents).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The session prompts go to.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A new session on this agent's engine — its tools, sandbox, MCP
    /// servers, permissions and store — as the builder would have created
    /// it (its session rules included), in agent `agent` or the default
    /// agent. Only the session record is new: opening many sessions costs
    /// one engine.
    ///
    /// ```no_run
    /// # async fn demo(agent: agentgate::CodingAgent) -> Result<(), agentgate::CodingAgentError> {
    /// let planning = agent.new_session(Some("plan")).await?;
    /// assert_ne!(planning.session().id, agent.session().id);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`CodingAgentError::UnknownAgent`] when the configuration has no
    /// agent `agent`; [`CodingAgentError::Session`] when the store cannot
    /// create the session.
    pub async fn new_session(&self, agent: Option<&str>) -> Result<CodingAgent, CodingAgentError> {
        let agent = match self.engine.agents() {
            Some(agents) => known_agent(agents, agent.map(str::to_string))?,
            None => {
                return Err(CodingAgentError::UnknownAgent {
                    name: agent.unwrap_or_default().to_string(),
                    available: String::new(),
                });
            }
        };
        let session = new_session(&self.engine, &self.shared, agent, None).await?;
        Ok(self.on(session))
    }

    /// Stored session `id` on this agent's engine (as the builder's
    /// [`resume`](CodingAgentBuilder::resume) would open it).
    ///
    /// # Errors
    /// [`CodingAgentError::Session`] when the store has no session `id` or
    /// cannot be read.
    pub async fn open_session(&self, id: &str) -> Result<CodingAgent, CodingAgentError> {
        let session = stored_session(&self.engine, id).await?;
        Ok(self.on(session))
    }

    /// This agent on `session`.
    fn on(&self, session: Session) -> CodingAgent {
        CodingAgent {
            engine: self.engine.clone(),
            session,
            shared: Arc::clone(&self.shared),
        }
    }

    /// The loaded configuration.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Whether the project's configuration was loaded trusted, and if not,
    /// what it was not allowed to do ([`ProjectTrust::lines`](crate::ProjectTrust::lines)).
    pub fn trust(&self) -> &crate::ProjectTrust {
        &self.shared.trust
    }

    /// The sandbox policy the built-in bash tool runs commands under (the
    /// builder's [`sandbox`](CodingAgentBuilder::sandbox), else the
    /// config's `sandbox` key); `None` when the embedder supplied its own
    /// [`tools`](CodingAgentBuilder::tools), whose policy it knows. A
    /// front end shows its [`mode`](agentgate_tools::SandboxPolicy::mode)
    /// in its status line (`agent tui` does).
    #[cfg(feature = "tools")]
    pub fn sandbox(&self) -> Option<&agentgate_tools::SandboxPolicy> {
        self.shared.sandbox.as_ref()
    }

    /// The project directory trust is recorded for (the worktree root).
    pub fn project_root(&self) -> &std::path::Path {
        &self.shared.project_root
    }

    /// The project's custom commands (the config's `command` map, the
    /// markdown files of `.opencode/command(s)/`, and each skill); run one
    /// with [`prepare_command`](Self::prepare_command).
    pub fn commands(&self) -> &agentgate_core::Commands {
        &self.shared.commands
    }

    /// The MCP servers, when there are any (and they were not left out).
    #[cfg(feature = "mcp")]
    pub fn mcp(&self) -> Option<&agentgate_tools::mcp::McpManager> {
        self.shared.mcp.as_ref().map(|guard| &guard.0)
    }

    /// Runs a prompt; a turn without an answer is an `Err` (see
    /// [`Engine::run`]).
    pub async fn run(&self, prompt: impl Into<String>) -> Result<TurnResult, TurnError> {
        self.engine.run(&self.session.id, prompt).await
    }

    /// Runs a prompt made of parts: text and attached files (see
    /// [`attach_file`](crate::attach_file) for a file on disk, or
    /// [`FilePart::data`](crate::FilePart::data) for bytes in memory). A
    /// prompt holding an image fails with
    /// [`PromptError::ImagesNotAccepted`](crate::PromptError) on a model
    /// whose [`ModelCapabilities::images`](crate::ModelCapabilities) is off.
    ///
    /// ```no_run
    /// # async fn demo(agent: agentgate::CodingAgent, png: Vec<u8>) -> Result<(), Box<dyn std::error::Error>> {
    /// use agentgate::{attach_file, FilePart, Part};
    /// let mut parts = vec![Part::text("Does the chart match the numbers in notes.md?")];
    /// parts.push(Part::File(FilePart::data("image/png", &png).with_filename("chart.png")));
    /// parts.extend(attach_file("notes.md".as_ref())?);
    /// let turn = agent.run_parts(parts).await?;
    /// println!("{}", turn.text());
    /// # Ok(()) }
    /// ```
    pub async fn run_parts(&self, parts: Vec<crate::Part>) -> Result<TurnResult, TurnError> {
        self.engine
            .prompt_with(&self.session.id, parts, CancellationToken::new())
            .await?
            .into_result()
    }

    /// Runs a prompt whose final answer must be JSON valid against
    /// `schema`, retried with what failed (see [`Engine::run_structured`]).
    ///
    /// ```no_run
    /// # async fn demo(agent: agentgate::CodingAgent) -> Result<(), Box<dyn std::error::Error>> {
    /// let schema = agentgate::OutputSchema::new(agentgate::serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"todo": {"type": "array", "items": {"type": "string"}}},
    ///     "required": ["todo"]
    /// }))?;
    /// let answer = agent.run_structured("List the TODOs of src/", &schema).await?;
    /// println!("{}", answer.value["todo"]);
    /// # Ok(()) }
    /// ```
    pub async fn run_structured(
        &self,
        prompt: impl Into<String>,
        schema: &crate::OutputSchema,
    ) -> Result<crate::StructuredAnswer, crate::StructuredError> {
        self.engine
            .run_structured(&self.session.id, prompt, schema)
            .await
    }

    /// [`run_structured`](Self::run_structured) with the schema `schemars`
    /// derives for `T`, the answer decoded into `T`.
    pub async fn run_as<T>(&self, prompt: impl Into<String>) -> Result<T, crate::StructuredError>
    where
        T: schemars::JsonSchema + serde::de::DeserializeOwned,
    {
        let schema = crate::OutputSchema::of::<T>()
            .map_err(|e| crate::StructuredError::Schema(e.to_string()))?;
        let answer = self.run_structured(prompt, &schema).await?;
        serde_json::from_value(answer.value.clone()).map_err(|e| crate::StructuredError::Invalid {
            message: format!("the answer does not decode: {e}"),
            retries: answer.retries,
            answer: answer.value.to_string(),
        })
    }

    /// Streams a prompt's turn (see [`Engine::prompt_stream`]).
    pub fn stream(
        &self,
        prompt: impl Into<String>,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.stream_with(prompt, CancellationToken::new())
    }

    /// [`stream`](Self::stream), cancelled when `cancel` is (Ctrl-C in a
    /// chat: the turn ends, the session stays usable).
    pub fn stream_with(
        &self,
        prompt: impl Into<String>,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.engine
            .prompt_stream(&self.session.id, vec![crate::Part::text(prompt)], cancel)
    }

    /// Streams a turn of these user parts with this prompt's agent and
    /// model (a prepared custom command's; see
    /// [`Engine::prepare_command`]).
    pub fn stream_parts(
        &self,
        parts: Vec<crate::Part>,
        options: crate::PromptOptions,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.engine
            .prompt_stream_with(&self.session.id, parts, options, cancel)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_program_gets_a_data_directory_of_its_own() {
        let app = program_app();
        assert!(!app.is_empty());
        assert_ne!(app, CLI_APP);
        assert!(!app.contains('/'), "{app}");
    }
}
