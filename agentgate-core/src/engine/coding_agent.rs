//! [`CodingAgent`]: a working coding agent for a directory in one call —
//! the directory's configuration, the built-in and configured agents, the
//! caller's tools and model, an approver — ready to run or stream prompts.
//!
//! agentgate-core names no concrete tool or provider: the caller passes the
//! tool set (e.g. agentgate-tools' tools) and the model, or a
//! [`ModelResolver`] that turns the configured `provider/model` into one
//! (e.g. agentgate-providers' resolver).

use std::path::PathBuf;
use std::sync::Arc;

use agentgate_permission::{Approver, PermissionGate};
use futures::Stream;
use tokio_util::sync::CancellationToken;

use super::facade::Engine;
use super::outcome::{PromptError, TurnError, TurnResult};
use super::permission_preset::PermissionPreset;
use super::retry::RetryPolicy;
use super::settings::LoopSettings;
use super::task_tool::TaskSettings;
use super::title_setting::SessionTitles;
use super::turn_stream::TurnEvent;
use crate::agents::{AgentEnvironment, AgentError, Agents};
use crate::config::{Config, ConfigErrors, ConfigLoader};
use crate::message::Part;
use crate::model::{LanguageModel, ModelRef, ModelResolver};
use crate::prompts::SystemPrompts;
use crate::sessions::{Session, SessionStore};
use crate::skills::Skills;
use crate::tool::Tool;
use crate::tool_registry::ToolRegistry;

/// Why a [`CodingAgent`] could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodingAgentError {
    /// The configuration could not be loaded.
    #[error(transparent)]
    Config(#[from] ConfigErrors),
    /// No model was given and none is configured.
    #[error(
        "no model: set \"model\": \"provider/model\" in opencode.json, or pass one with CodingAgentBuilder::model or ::model_name"
    )]
    NoModel,
    /// The model name is not `provider/model`, or the resolver cannot serve it.
    #[error(
        "model {0:?} is not available: name it as provider/model and give a ModelResolver that serves it (CodingAgentBuilder::model_resolver)"
    )]
    UnknownModel(String),
    /// The agent to run is not usable.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The named agent does not exist.
    #[error("agent {0:?} is not configured: choose one of the built-in or configured agents")]
    UnknownAgent(String),
    /// The session could not be created.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The configuration's `retry` key is not a valid retry policy.
    #[error("config: {0} (see docs/agent-loop.md, \"Retries\")")]
    Retry(String),
}

/// Builds a [`CodingAgent`]; see [`CodingAgent::builder`].
pub struct CodingAgentBuilder {
    directory: PathBuf,
    loader: Option<ConfigLoader>,
    loaded: Option<Config>,
    model: Option<Arc<dyn LanguageModel>>,
    model_name: Option<String>,
    resolver: Option<Arc<dyn ModelResolver>>,
    tools: ToolRegistry,
    approver: Option<Arc<dyn Approver>>,
    agent: Option<String>,
    environment: Option<AgentEnvironment>,
    app: String,
    store: Option<Arc<dyn SessionStore>>,
    permissions: Option<PermissionGate>,
    resume: Option<String>,
    session_rules: agentgate_permission::Ruleset,
    sections: Vec<String>,
    preset: PermissionPreset,
    retry: Option<RetryPolicy>,
    max_turn_time: Option<std::time::Duration>,
    skills: Option<Skills>,
    hooks: Vec<Arc<dyn crate::hooks::Hook>>,
    titles: Option<SessionTitles>,
    title: Option<String>,
}

impl CodingAgentBuilder {
    /// Whether (and with which model) new sessions get titles from the
    /// hidden `title` agent ([`SessionTitles`]). Default: on when the
    /// configuration names a model for them — `small_model`, or the
    /// `title` agent's own `model` — that the resolver serves; off
    /// otherwise, and off when the configuration disables the `title`
    /// agent (`"agent": {"title": {"disable": true}}`).
    pub fn session_titles(mut self, titles: SessionTitles) -> Self {
        self.titles = Some(titles);
        self
    }

    /// The title of the session it creates (opencode's `run --title`); a
    /// session with a title gets no generated one.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The skills to offer (listed in the system prompt, their folders
    /// readable without an ask); default: those [`Skills::discover`] finds
    /// for the directory. The `skill` tool that loads them is the
    /// caller's (agentgate-tools' `SkillTool`).
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    /// Loads configuration with this loader (default:
    /// [`ConfigLoader::new`] for the directory).
    pub fn config(mut self, loader: ConfigLoader) -> Self {
        self.loader = Some(loader);
        self
    }

    /// Uses `config`, already loaded with `loader`, instead of loading it
    /// again (an assembly that read the configuration first, for its
    /// providers, MCP servers and sandbox).
    pub fn loaded_config(mut self, loader: ConfigLoader, config: Config) -> Self {
        self.loader = Some(loader);
        self.loaded = Some(config);
        self
    }

    /// Runs on this model (otherwise the configured `model`, through the
    /// resolver).
    pub fn model(mut self, model: Arc<dyn LanguageModel>) -> Self {
        self.model = Some(model);
        self
    }

    /// Runs on the model named `provider/model` instead of the configured one.
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// Turns `provider/model` names into models (the configured model,
    /// agents' own models).
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Sets the tools.
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.tools.register(tool);
        self
    }

    /// Answers permission asks (default: none, so every ask is rejected
    /// with a warning — the agent never hangs waiting).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Runs this agent (default: the configured `default_agent`, else `build`).
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(name.into());
        self
    }

    /// Sets the agent environment (default: [`AgentEnvironment::detect`]
    /// for the application name, see [`app`](Self::app)).
    pub fn environment(mut self, environment: AgentEnvironment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// The application name of the data and temporary directories
    /// (default `agent-sdk`).
    pub fn app(mut self, app: impl Into<String>) -> Self {
        self.app = app.into();
        self
    }

    /// Keeps sessions in this store (default: in memory), e.g. a
    /// [`FileSessionStore`](crate::FileSessionStore) so they can be resumed.
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Uses this permission gate (e.g. one with an approval store that
    /// remembers "always" answers). An [`approver`](Self::approver), if
    /// given, is installed on it.
    pub fn permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Continues the stored session `id` instead of creating one (it keeps
    /// its own agent).
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.resume = Some(session_id.into());
        self
    }

    /// Appends a section to the system prompt's second part, after the
    /// instruction files: MCP servers' `<mcp_instructions>` block (§15,
    /// from agentgate-tools' `McpManager::instructions`), or the host's own.
    pub fn system_section(mut self, section: impl Into<String>) -> Self {
        self.sections.push(section.into());
        self
    }

    /// Session rules for the session it creates, evaluated after the
    /// agent's (opencode's `run` denies `question` this way, §16).
    pub fn session_permission(mut self, rules: agentgate_permission::Ruleset) -> Self {
        self.session_rules = rules;
        self
    }

    /// Layers a named set of permission defaults into every agent (default:
    /// [`PermissionPreset::OpencodeDefaults`], opencode's defaults, which
    /// allow nearly everything, so an approver is only called where the
    /// configuration says `ask`).
    /// [`PermissionPreset::AskBeforeSideEffects`] asks before edits,
    /// commands, the network, MCP tools and custom tools; the
    /// configuration's rules still decide over it.
    ///
    /// ```no_run
    /// # async fn demo(model: std::sync::Arc<dyn agentgate_core::LanguageModel>, approver: std::sync::Arc<dyn agentgate_permission::Approver>) -> Result<(), Box<dyn std::error::Error>> {
    /// use agentgate_core::{CodingAgent, PermissionPreset};
    /// let agent = CodingAgent::builder(".")
    ///     .model(model)
    ///     .approver(approver)
    ///     .permission_preset(PermissionPreset::AskBeforeSideEffects)
    ///     .build()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn permission_preset(mut self, preset: PermissionPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Retries failed model streams under this policy instead of the
    /// configuration's `retry` key (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Ends every turn that runs longer than this with a `timeout` error
    /// ([`LoopSettings::max_turn_time`]); default: no deadline.
    pub fn max_turn_time(mut self, limit: std::time::Duration) -> Self {
        self.max_turn_time = Some(limit);
        self
    }

    /// Adds a hook ([`EngineBuilder::hook`](crate::EngineBuilder::hook));
    /// it runs after the configuration's `hooks` commands.
    pub fn hook(mut self, hook: Arc<dyn crate::hooks::Hook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Loads the configuration, assembles the engine and creates a session
    /// (or loads the one to [`resume`](Self::resume)). The configuration's
    /// `hooks` commands become [`ShellHook`](crate::ShellHook)s.
    pub async fn build(self) -> Result<CodingAgent, CodingAgentError> {
        let loader = self
            .loader
            .unwrap_or_else(|| ConfigLoader::new(&self.directory));
        let config = match self.loaded {
            Some(config) => config,
            None => {
                let config = loader.load()?;
                for warning in &config.warnings {
                    tracing::warn!("{warning}");
                }
                config
            }
        };
        let worktree = loader.resolved_worktree();
        let skills = self
            .skills
            .unwrap_or_else(|| discovered_skills(&loader, &config));
        let environment = self
            .environment
            .unwrap_or_else(|| AgentEnvironment::detect(&self.app, worktree.to_string_lossy()));
        let environment = with_skill_dirs(environment, &skills);
        let permission = config.permission.clone().unwrap_or_default();
        let mut agents = Agents::from_config(
            &environment,
            &permission,
            &config.agents,
            config.default_agent.clone(),
        );
        self.preset.apply(&mut agents, &environment);
        let agent = match self.agent {
            Some(name) => agents
                .get(&name)
                .map(|a| a.name.clone())
                .ok_or(CodingAgentError::UnknownAgent(name))?,
            None => agents.default_agent()?.name.clone(),
        };
        let model = match self.model {
            Some(model) => model,
            None => configured_model(self.model_name, &config, self.resolver.as_ref())?,
        };
        let titles = (self.titles)
            .unwrap_or_else(|| configured_titles(&config, &agents, self.resolver.as_ref()));
        let prompts = system_prompts(&config, &loader, skills, self.sections);
        let settings = loop_settings(self.retry, self.max_turn_time, &config)?;
        let mut builder = Engine::builder(model)
            .config(settings)
            .agents(agents)
            .task_tool(TaskSettings::default())
            .tools(self.tools)
            .worktree(worktree)
            .system_prompts(prompts)
            .session_titles(titles);
        builder = with_extras(builder, self.resolver, self.store, &config, self.hooks);
        if let Some(permissions) = gate(self.permissions, self.approver) {
            builder = builder.permissions(permissions);
        }
        let engine = builder.build();
        let session = match self.resume {
            Some(id) => engine
                .store()
                .session(&id)
                .await
                .map_err(PromptError::from)?,
            None => {
                let mut session = Session::new(agent, self.directory);
                session.permission = self.session_rules;
                if let Some(title) = self.title {
                    session.title = title;
                }
                engine.create_session(session).await?
            }
        };
        Ok(CodingAgent {
            engine,
            session,
            config,
        })
    }
}

/// The skills found for the loaded directory, warnings logged.
fn discovered_skills(loader: &ConfigLoader, config: &Config) -> Skills {
    let (skills, warnings) = Skills::discover(loader, config);
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    skills
}

/// How the agent's system prompts are assembled: the configuration's
/// instructions, the global folder, the skills and the host's sections.
fn system_prompts(
    config: &Config,
    loader: &ConfigLoader,
    skills: Skills,
    sections: Vec<String>,
) -> SystemPrompts {
    let mut prompts = SystemPrompts::default()
        .with_instructions(config.instructions.clone())
        .with_skills(skills);
    for section in sections {
        prompts = prompts.with_section(section);
    }
    if let Some(global) = loader.resolved_global_dir() {
        prompts = prompts.with_global_dir(global);
    }
    prompts
}

/// `environment` with the folders of `skills` readable without an ask.
fn with_skill_dirs(mut environment: AgentEnvironment, skills: &Skills) -> AgentEnvironment {
    for dir in skills.readable_dirs() {
        if !environment.skill_dirs.contains(&dir) {
            environment.skill_dirs.push(dir);
        }
    }
    environment
}

/// `builder` with the model resolver and store given, and the hooks: the
/// configuration's `hooks` commands, then the embedder's.
fn with_extras(
    mut builder: crate::EngineBuilder,
    resolver: Option<Arc<dyn ModelResolver>>,
    store: Option<Arc<dyn SessionStore>>,
    config: &Config,
    hooks: Vec<Arc<dyn crate::hooks::Hook>>,
) -> crate::EngineBuilder {
    if let Some(resolver) = resolver {
        builder = builder.model_resolver(resolver);
    }
    if let Some(store) = store {
        builder = builder.store(store);
    }
    for hook in &config.hooks {
        builder = builder.hook(Arc::new(hook.to_hook()));
    }
    for hook in hooks {
        builder = builder.hook(hook);
    }
    builder
}

/// The titles of a builder that was not told: on with the configuration's
/// `small_model` (or with the prompt's model when only the `title` agent's
/// own `model` is configured, which the engine prefers), when the resolver
/// serves it; off without either, or without a `title` agent.
fn configured_titles(
    config: &Config,
    agents: &Agents,
    resolver: Option<&Arc<dyn ModelResolver>>,
) -> SessionTitles {
    let Some(title_agent) = agents.get(crate::engine::title_setting::TITLE_AGENT) else {
        return SessionTitles::Off;
    };
    let small = config
        .small_model
        .as_deref()
        .and_then(ModelRef::parse)
        .and_then(|reference| resolver.and_then(|r| r.resolve(&reference)));
    match small {
        Some(model) => SessionTitles::Model(model),
        None if title_agent.model.is_some() => SessionTitles::SessionModel,
        None => SessionTitles::Off,
    }
}

/// The loop settings: the builder's retry policy, else the configuration's
/// `retry` key, else the default; the builder's turn deadline.
fn loop_settings(
    retry: Option<RetryPolicy>,
    max_turn_time: Option<std::time::Duration>,
    config: &Config,
) -> Result<LoopSettings, CodingAgentError> {
    let retry = match (retry, config.value.get("retry")) {
        (Some(policy), _) => policy,
        (None, Some(value)) => {
            RetryPolicy::from_config(value, "retry").map_err(CodingAgentError::Retry)?
        }
        (None, None) => RetryPolicy::default(),
    };
    Ok(LoopSettings {
        retry,
        max_turn_time,
        ..LoopSettings::default()
    })
}

/// The model `name` (else the configuration's) names, served by `resolver`.
fn configured_model(
    name: Option<String>,
    config: &Config,
    resolver: Option<&Arc<dyn ModelResolver>>,
) -> Result<Arc<dyn LanguageModel>, CodingAgentError> {
    let name = name
        .or_else(|| config.model.clone())
        .ok_or(CodingAgentError::NoModel)?;
    let reference =
        ModelRef::parse(&name).ok_or_else(|| CodingAgentError::UnknownModel(name.clone()))?;
    resolver
        .and_then(|resolver| resolver.resolve(&reference))
        .ok_or(CodingAgentError::UnknownModel(name))
}

/// The gate to build the engine with: the one given (with `approver`
/// installed on it), a fresh one for `approver`, or none (the engine's
/// default).
fn gate(
    permissions: Option<PermissionGate>,
    approver: Option<Arc<dyn Approver>>,
) -> Option<PermissionGate> {
    match (permissions, approver) {
        (Some(permissions), approver) => {
            if let Some(approver) = approver {
                permissions.set_approver(approver);
            }
            Some(permissions)
        }
        (None, Some(approver)) => {
            let permissions = PermissionGate::new();
            permissions.set_approver(approver);
            Some(permissions)
        }
        (None, None) => None,
    }
}

/// A coding agent for one directory: an engine and a session on it.
///
/// ```no_run
/// # async fn demo(model: std::sync::Arc<dyn agentgate_core::LanguageModel>) -> Result<(), Box<dyn std::error::Error>> {
/// let agent = agentgate_core::CodingAgent::builder(".").model(model).build().await?;
/// let turn = agent.run("What does this project do?").await?;
/// println!("{}", turn.text());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct CodingAgent {
    engine: Engine,
    session: Session,
    config: Config,
}

impl CodingAgent {
    /// Starts building a coding agent for `directory`.
    pub fn builder(directory: impl Into<PathBuf>) -> CodingAgentBuilder {
        CodingAgentBuilder {
            directory: directory.into(),
            loader: None,
            loaded: None,
            model: None,
            model_name: None,
            resolver: None,
            tools: ToolRegistry::new(),
            approver: None,
            agent: None,
            environment: None,
            app: "agent-sdk".to_string(),
            store: None,
            permissions: None,
            resume: None,
            session_rules: agentgate_permission::Ruleset::default(),
            sections: Vec::new(),
            preset: PermissionPreset::default(),
            retry: None,
            max_turn_time: None,
            skills: None,
            hooks: Vec::new(),
            titles: None,
            title: None,
        }
    }

    /// The engine (events, permissions, the session store).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The session prompts go to.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The loaded configuration.
    pub fn config(&self) -> &Config {
        &self.config
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
    /// # async fn demo(agent: agentgate_core::CodingAgent, png: Vec<u8>) -> Result<(), Box<dyn std::error::Error>> {
    /// use agentgate_core::{attach_file, FilePart, Part};
    /// let mut parts = vec![Part::text("Does the chart match the numbers in notes.md?")];
    /// parts.push(Part::File(FilePart::data("image/png", &png).with_filename("chart.png")));
    /// parts.extend(attach_file("notes.md".as_ref())?);
    /// let turn = agent.run_parts(parts).await?;
    /// println!("{}", turn.text());
    /// # Ok(()) }
    /// ```
    pub async fn run_parts(&self, parts: Vec<Part>) -> Result<TurnResult, TurnError> {
        self.engine
            .prompt_with(&self.session.id, parts, CancellationToken::new())
            .await?
            .into_result()
    }

    /// Runs a prompt whose final answer must be JSON valid against
    /// `schema`, retried with what failed (see [`Engine::run_structured`]).
    ///
    /// ```no_run
    /// # async fn demo(agent: agentgate_core::CodingAgent) -> Result<(), Box<dyn std::error::Error>> {
    /// let schema = agentgate_core::OutputSchema::new(serde_json::json!({
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
            .prompt_stream(&self.session.id, vec![Part::text(prompt)], cancel)
    }

    /// Streams a turn of these user parts with this prompt's agent and
    /// model (a custom command's; see [`Engine::prompt_with_options`]).
    pub fn stream_parts(
        &self,
        parts: Vec<Part>,
        options: super::facade::PromptOptions,
        cancel: CancellationToken,
    ) -> impl Stream<Item = TurnEvent> + Send + 'static {
        self.engine
            .prompt_stream_with(&self.session.id, parts, options, cancel)
    }
}
