//! [`Workspace`]: a directory's configuration as `agent run` assembles it —
//! the opencode configuration stack, the model it names (through the
//! config's `provider` entries, with their `limit`s, or the environment),
//! the sandbox policy of its `sandbox` key, the built-in tools under that
//! sandbox, its MCP servers, and the approvals remembered for it.
//!
//! [`CodingAgent::builder`](crate::CodingAgent::builder) builds on it; the
//! `agent` CLI does too, so the library and the CLI read a directory the
//! same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_core::{
    AgentEnvironment, Commands, Config, ConfigErrors, ConfigLoader, LanguageModel, ModelResolver,
    Skills, ToolRegistry,
};
use agentgate_permission::{ApprovalStore, PermissionGate};
use agentgate_providers::{ConfigModelResolver, ProviderError, model_from_config};
use agentgate_tools::{BashTool, Sandbox, SandboxMode, SandboxPolicy, SkillTool};

/// The model used when the configuration names none but a provider's key
/// is in the environment, per key variable, first match wins.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5"),
    ("GEMINI_API_KEY", "google/gemini-2.5-pro"),
    ("GOOGLE_GENERATIVE_AI_API_KEY", "google/gemini-2.5-pro"),
];

/// The application name of the data directory (sessions, approvals) the
/// `agent` CLI and, by default, the library use.
pub const DEFAULT_APP: &str = "agent-sdk";

/// Why a workspace, or an agent on it, could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The configuration could not be loaded.
    #[error(transparent)]
    Config(#[from] ConfigErrors),
    /// No model was given, none is configured and no provider key is set.
    #[error(
        "no model: set \"model\": \"provider/model\" in opencode.json, set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), or pass a model to the builder"
    )]
    NoModel,
    /// The named model could not be built.
    #[error("model {name}: {source}")]
    Model {
        /// `provider/model` as named.
        name: String,
        /// Why.
        #[source]
        source: ProviderError,
    },
    /// The `sandbox` key is not a valid policy.
    #[error(
        "the config's \"sandbox\" key: {0} (see docs/sandbox.md: mode, network, writable, deny_read, env, limits)"
    )]
    Sandbox(String),
    /// The built-in tools could not be created.
    #[error("the built-in tools: {0}")]
    Tools(String),
    /// The store of remembered approvals could not be opened.
    #[error("the remembered approvals: {0}")]
    Approvals(String),
    /// The agent could not be assembled.
    #[error(transparent)]
    Agent(#[from] agentgate_core::CodingAgentError),
}

/// A directory's loaded configuration and what is assembled from it.
///
/// ```no_run
/// # fn demo() -> Result<(), agentgate::WorkspaceError> {
/// let workspace = agentgate::Workspace::load(".")?;
/// let policy = workspace.sandbox_policy()?;
/// let tools = workspace.tools(policy)?;
/// if let Some(name) = workspace.model_name() {
///     let model = workspace.model(&name)?;
///     println!("{name}: context {}", model.info().limits.context);
/// }
/// # let _ = tools; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Workspace {
    directory: PathBuf,
    loader: ConfigLoader,
    config: Config,
    skills: Skills,
    commands: Commands,
}

impl Workspace {
    /// Loads `directory`'s configuration stack as opencode does
    /// ([`ConfigLoader::new`]).
    pub fn load(directory: impl Into<PathBuf>) -> Result<Self, WorkspaceError> {
        let directory = directory.into();
        let loader = ConfigLoader::new(&directory);
        Self::with_loader(directory, loader)
    }

    /// Loads with `loader` (another home, environment or global folder).
    pub fn with_loader(
        directory: impl Into<PathBuf>,
        loader: ConfigLoader,
    ) -> Result<Self, WorkspaceError> {
        let mut config = loader.load()?;
        let (skills, skill_warnings) = Skills::discover(&loader, &config);
        let (mut commands, command_warnings) = Commands::from_config(&config);
        commands.add_skills(&skills);
        config.warnings.extend(skill_warnings);
        config.warnings.extend(command_warnings);
        Ok(Workspace {
            directory: directory.into(),
            loader,
            config,
            skills,
            commands,
        })
    }

    /// The project directory.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The loaded configuration (its `warnings` say what was ignored).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The skills found for the directory (`SKILL.md` files; see
    /// [`Skills::discover`]): the `skill` tool loads them, the system
    /// prompt lists them, agents read their folders without asking.
    pub fn skills(&self) -> &Skills {
        &self.skills
    }

    /// The custom commands (the config's `command` map, the markdown files
    /// of `.opencode/command(s)/`, and each skill under its name).
    pub fn commands(&self) -> &Commands {
        &self.commands
    }

    /// The loader it was read with.
    pub fn loader(&self) -> &ConfigLoader {
        &self.loader
    }

    /// The model to run on when none is given: the config's `model`, else
    /// the default model of the first provider whose key is set
    /// ([`DEFAULT_MODELS`]).
    pub fn model_name(&self) -> Option<String> {
        self.model_name_with(|var| std::env::var(var).ok())
    }

    /// [`model_name`](Self::model_name) with `env` reading the variables.
    pub fn model_name_with(&self, env: impl Fn(&str) -> Option<String>) -> Option<String> {
        self.config.model.clone().or_else(|| {
            DEFAULT_MODELS
                .iter()
                .find(|(var, _)| env(var).is_some_and(|v| !v.trim().is_empty()))
                .map(|(_, model)| model.to_string())
        })
    }

    /// The client for `name` (`provider/model`): the config's entry for its
    /// provider (base URL, key, headers, the model's `limit`), else the
    /// environment.
    pub fn model(&self, name: &str) -> Result<Arc<dyn LanguageModel>, WorkspaceError> {
        let model_error = |source| WorkspaceError::Model {
            name: name.to_string(),
            source,
        };
        let reference = agentgate_providers::parse_model_name(name).map_err(model_error)?;
        model_from_config(&reference, &self.config.providers).map_err(model_error)
    }

    /// Resolves the other names agents use (their own `model`) the same way.
    pub fn resolver(&self) -> Arc<dyn ModelResolver> {
        Arc::new(ConfigModelResolver::new(self.config.providers.clone()))
    }

    /// The config's `sandbox` policy; `workspace-write` when it has none.
    /// Each field of the key changes only what it names.
    pub fn sandbox_policy(&self) -> Result<SandboxPolicy, WorkspaceError> {
        Self::sandbox_policy_of(self.config.value.get("sandbox"))
    }

    /// The policy a `sandbox` key's value gives (`None`: no key).
    pub fn sandbox_policy_of(
        value: Option<&serde_json::Value>,
    ) -> Result<SandboxPolicy, WorkspaceError> {
        match value {
            Some(value) => serde_json::from_value::<SandboxPolicy>(value.clone())
                .map_err(|e| WorkspaceError::Sandbox(e.to_string())),
            None => Ok(SandboxPolicy::new(SandboxMode::WorkspaceWrite)),
        }
    }

    /// The built-in tools, with bash running under `policy`, and the
    /// `skill` tool when there are skills.
    pub fn tools(&self, policy: SandboxPolicy) -> Result<ToolRegistry, WorkspaceError> {
        let mut tools =
            agentgate_tools::builtin().map_err(|e| WorkspaceError::Tools(e.to_string()))?;
        tools.register(BashTool::new().with_sandbox(Sandbox::new(policy)));
        if !self.skills.is_empty() {
            tools.register(SkillTool::new(self.skills.clone()));
        }
        Ok(tools)
    }

    /// The config's MCP servers (`mcp` key, `{env:…}` substituted), not
    /// started yet; `None` when it names none.
    #[cfg(feature = "mcp")]
    pub fn mcp(&self) -> Option<agentgate_tools::mcp::McpManager> {
        use agentgate_tools::mcp::{McpConfig, McpManager};
        let config =
            McpConfig::from_opencode(&serde_json::Value::Object(self.config.value.clone()))
                .substitute_process_env();
        if config.servers.is_empty() {
            return None;
        }
        Some(McpManager::new(config, &self.directory))
    }

    /// The data directory of `app` (`$XDG_DATA_HOME/<app>`, else
    /// `~/.local/share/<app>`).
    pub fn data_dir(app: &str) -> PathBuf {
        PathBuf::from(AgentEnvironment::detect(app, ".").data_dir)
    }

    /// The SQLite database of `app`'s data directory,
    /// `<data dir>/agentgate.db` (the `agent` CLI's sessions and approvals).
    pub fn database_path(app: &str) -> PathBuf {
        Self::data_dir(app).join("agentgate.db")
    }

    /// Opens [`database_path`](Self::database_path), creating it if needed;
    /// the first time, the approvals an earlier version kept as JSON files
    /// in `approvals/` are imported (the files are left in place).
    #[cfg(feature = "sqlite")]
    pub fn database(app: &str) -> Result<agentgate_store::SqliteStore, WorkspaceError> {
        let store = agentgate_store::SqliteStore::open(Self::database_path(app))
            .map_err(|e| WorkspaceError::Approvals(e.to_string()))?;
        // The data directory is the SDK's own: only its owner may list it
        // (an older version created it 0755).
        let data_dir = Self::data_dir(app);
        agentgate_permission::private_files::tighten(&data_dir).map_err(|e| {
            WorkspaceError::Approvals(format!("cannot make {} private: {e}", data_dir.display()))
        })?;
        store
            .import_json_approvals_once(&Self::data_dir(app).join("approvals"))
            .map_err(|e| WorkspaceError::Approvals(e.to_string()))?;
        Ok(store)
    }

    /// Where `app` remembers "always" approvals: with feature `sqlite` (on
    /// by default) the SQLite [`database`](Self::database); without it,
    /// JSON files in `<data dir>/approvals/`.
    pub fn approval_store(app: &str) -> Result<Arc<dyn ApprovalStore>, WorkspaceError> {
        #[cfg(feature = "sqlite")]
        {
            Ok(Arc::new(Self::database(app)?))
        }
        #[cfg(not(feature = "sqlite"))]
        {
            Ok(Arc::new(agentgate_permission::JsonFileStore::new(
                Self::data_dir(app).join("approvals"),
            )))
        }
    }

    /// A permission gate with the "always" approvals remembered for this
    /// directory in `app`'s [`approval_store`](Self::approval_store): they
    /// count for what the rules leave to ask, and an "always" answer is
    /// added there.
    pub fn approvals(&self, app: &str) -> Result<PermissionGate, WorkspaceError> {
        PermissionGate::with_store(
            Self::approval_store(app)?,
            self.directory.display().to_string(),
        )
        .map_err(|e| WorkspaceError::Approvals(e.to_string()))
    }
}
