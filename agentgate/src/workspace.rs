//! [`Workspace`]: a directory's configuration as `agent run` assembles it —
//! the opencode configuration stack, the model it names (through the
//! config's `provider` entries, with their `limit`s, or the environment),
//! the sandbox policy of its `sandbox` key, the built-in tools under that
//! sandbox, its MCP servers, and the approvals remembered for it.
//!
//! [`CodingAgent::builder`](crate::CodingAgent::builder) builds on it; the
//! `agent` CLI does too, so the library and the CLI read a directory the
//! same way. The configuration, skills, commands and approvals are always
//! here; the model clients need feature `providers`, the tools and the
//! sandbox policy feature `tools`, the MCP servers feature `mcp`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(feature = "tools")]
use agentgate_core::ToolRegistry;
use agentgate_core::{AgentEnvironment, Commands, Config, ConfigErrors, ConfigLoader, Skills};
#[cfg(feature = "providers")]
use agentgate_core::{LanguageModel, ModelResolver};
use agentgate_permission::{ApprovalStore, PermissionGate};
#[cfg(feature = "providers")]
use agentgate_providers::{ConfigModelResolver, ProviderError, model_from_config};
#[cfg(feature = "tools")]
use agentgate_tools::{BashTool, Sandbox, SandboxMode, SandboxPolicy, SkillTool};

use crate::trust_policy::{ProjectTrust, TrustPolicy};

/// The record file a policy reads, for a warning.
fn error_file(policy: &TrustPolicy) -> String {
    policy
        .store()
        .map(|s| s.path().display().to_string())
        .unwrap_or_default()
}

/// The model used when the configuration names none but a provider's key
/// is in the environment, per key variable, first match wins.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5"),
    ("GEMINI_API_KEY", "google/gemini-2.5-pro"),
    ("GOOGLE_GENERATIVE_AI_API_KEY", "google/gemini-2.5-pro"),
];

/// The application name of the `agent` CLI's data directory (its sessions,
/// `agentgate.db` and remembered approvals). An embedding program has its
/// own unless it opts in with
/// [`CodingAgentBuilder::share_cli_store`](crate::CodingAgentBuilder::share_cli_store).
pub const CLI_APP: &str = "agent-sdk";

/// Why a workspace, or an agent on it, could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The configuration could not be loaded.
    #[error(transparent)]
    Config(#[from] ConfigErrors),
    /// The named model could not be built.
    #[cfg(feature = "providers")]
    #[error("model {name}: {source}")]
    Model {
        /// `provider/model` as named.
        name: String,
        /// Why.
        #[source]
        source: ProviderError,
    },
    /// The `sandbox` key is not a valid policy.
    #[cfg(feature = "tools")]
    #[error(
        "the config's \"sandbox\" key: {0} (see docs/sandbox.md: mode, network, writable, deny_read, env, limits)"
    )]
    Sandbox(#[source] serde_json::Error),
    /// The built-in tools could not be created.
    #[cfg(feature = "tools")]
    #[error("the built-in tools: {0}")]
    Tools(#[source] agentgate_tools::WebFetchError),
    /// The store of remembered approvals could not be opened.
    #[error("the remembered approvals in {}: {source} (check that the data directory, $XDG_DATA_HOME or ~/.local/share, is writable; a program embedding the library picks another with `CodingAgentBuilder::app`)", path.display())]
    Approvals {
        /// The file or folder of the store.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The record of trusted projects could not be written.
    #[error("recording the project's trust: {0} (check that the data directory is writable)")]
    Trust(#[source] agentgate_core::project_trust::TrustStoreError),
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
    trust: ProjectTrust,
}

impl Workspace {
    /// Loads `directory`'s configuration stack as opencode does
    /// ([`ConfigLoader::new`]), its project trusted only when `agent trust`
    /// recorded it ([`TrustPolicy::recorded_for`] of [`CLI_APP`], the `agent` CLI's).
    pub fn load(directory: impl Into<PathBuf>) -> Result<Self, WorkspaceError> {
        let directory = directory.into();
        let loader = ConfigLoader::new(&directory);
        Self::with_loader(directory, loader)
    }

    /// Loads with `loader` (another home, environment or global folder).
    /// The project is trusted when the loader says so
    /// ([`ConfigLoader::trust_project`]), else as [`load`](Self::load)
    /// decides.
    pub fn with_loader(
        directory: impl Into<PathBuf>,
        loader: ConfigLoader,
    ) -> Result<Self, WorkspaceError> {
        let policy = if loader.project_is_trusted() {
            TrustPolicy::trust_all()
        } else {
            TrustPolicy::recorded_for(CLI_APP)
        };
        Self::with_trust(directory, loader, &policy)
    }

    /// Loads with `loader`, the project's trust decided by `policy`: the
    /// layers are read screened first; when they set something trust would
    /// change and `policy` trusts the project, they are read again as they
    /// are. [`trust_state`](Self::trust_state) says which; an untrusted
    /// project's set-aside parts are in the config's warnings.
    pub fn with_trust(
        directory: impl Into<PathBuf>,
        loader: ConfigLoader,
        policy: &TrustPolicy,
    ) -> Result<Self, WorkspaceError> {
        let mut loader = loader.trust_project(false);
        #[cfg(feature = "providers")]
        if !loader.has_user_keyed_providers() {
            loader =
                loader.user_keyed_providers(|id| agentgate_providers::find_provider(id).is_some());
        }
        let mut config = loader.load()?;
        let root = loader.resolved_worktree();
        let (trust, record_error) = policy.decide(&root, &config.project_risks);
        if let Some(error) = record_error {
            config.warnings.push(agentgate_core::ConfigWarning {
                file: error_file(policy),
                path: String::new(),
                message: format!("the project is treated as untrusted: {error}"),
            });
        }
        let loader = loader.trust_project(matches!(trust, ProjectTrust::Trusted));
        if loader.project_is_trusted() {
            config = loader.load()?;
        }
        Self::assemble(directory.into(), loader, config, trust)
    }

    fn assemble(
        directory: PathBuf,
        loader: ConfigLoader,
        mut config: Config,
        trust: ProjectTrust,
    ) -> Result<Self, WorkspaceError> {
        let (skills, skill_warnings) = Skills::discover(&loader, &config);
        let (mut commands, command_warnings) = Commands::from_config(&config);
        commands.add_skills(&skills);
        config.warnings.extend(skill_warnings);
        config.warnings.extend(command_warnings);
        Ok(Workspace {
            directory,
            loader,
            config,
            skills,
            commands,
            trust,
        })
    }

    /// Whether the project's configuration layers are trusted, and if not,
    /// what they would do ([`ProjectTrust::lines`]).
    pub fn trust_state(&self) -> &ProjectTrust {
        &self.trust
    }

    /// The project directory trust is recorded for: the worktree root.
    pub fn project_root(&self) -> PathBuf {
        self.loader.resolved_worktree()
    }

    /// Records the project as trusted in `store` with what it can do now,
    /// and loads it again trusted. Nothing is recorded when trust would
    /// change nothing.
    pub fn trust_and_reload(
        &self,
        store: &agentgate_core::project_trust::TrustStore,
    ) -> Result<Self, WorkspaceError> {
        if !self.trust.parts().is_empty() {
            store
                .record(&self.project_root(), self.trust.parts())
                .map_err(WorkspaceError::Trust)?;
        }
        Self::with_trust(
            self.directory.clone(),
            self.loader.clone(),
            &TrustPolicy::trust_all(),
        )
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

    #[cfg(feature = "providers")]
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

    #[cfg(feature = "providers")]
    /// Resolves the other names agents use (their own `model`) the same way.
    pub fn resolver(&self) -> Arc<dyn ModelResolver> {
        Arc::new(ConfigModelResolver::new(self.config.providers.clone()))
    }

    /// The config's `sandbox` policy; `workspace-write` when it has none.
    /// Each field of the key changes only what it names.
    #[cfg(feature = "tools")]
    pub fn sandbox_policy(&self) -> Result<SandboxPolicy, WorkspaceError> {
        Self::sandbox_policy_of(self.config.value.get("sandbox"))
    }

    /// The policy a `sandbox` key's value gives (`None`: no key).
    #[cfg(feature = "tools")]
    pub fn sandbox_policy_of(
        value: Option<&serde_json::Value>,
    ) -> Result<SandboxPolicy, WorkspaceError> {
        match value {
            Some(value) => serde_json::from_value::<SandboxPolicy>(value.clone())
                .map_err(WorkspaceError::Sandbox),
            None => Ok(SandboxPolicy::new(SandboxMode::WorkspaceWrite)),
        }
    }

    /// The built-in tools, with bash running under `policy`, and the
    /// `skill` tool when there are skills.
    #[cfg(feature = "tools")]
    pub fn tools(&self, policy: SandboxPolicy) -> Result<ToolRegistry, WorkspaceError> {
        let mut tools = agentgate_tools::builtin().map_err(WorkspaceError::Tools)?;
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
        self.mcp_with(&serde_json::Map::new())
    }

    /// The config's MCP servers with `extra` entries (of the `mcp` key's
    /// shape, taken as given: no `{env:…}` substitution) added; an extra
    /// server of the same name replaces the configured one. `None` when
    /// there are none.
    #[cfg(feature = "mcp")]
    pub fn mcp_with(
        &self,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<agentgate_tools::mcp::McpManager> {
        use agentgate_tools::mcp::{McpConfig, McpManager};
        let mut config =
            McpConfig::from_opencode(&serde_json::Value::Object(self.config.value.clone()))
                .substitute_process_env();
        if !extra.is_empty() {
            let added = McpConfig::from_opencode(&serde_json::json!({ "mcp": extra }));
            config.servers.extend(added.servers);
        }
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

    /// The checkpoints of `app`'s data directory, `<data dir>/checkpoints`
    /// (what [`CodingAgent`](crate::CodingAgent) records each step's file
    /// changes in by default). Each call is a new handle on the same folder.
    #[cfg(feature = "tools")]
    pub fn checkpoints(app: &str) -> agentgate_tools::FsCheckpoints {
        agentgate_tools::FsCheckpoints::new(Self::data_dir(app).join("checkpoints"))
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
        let path = Self::database_path(app);
        let failed = |source: Box<dyn std::error::Error + Send + Sync>| WorkspaceError::Approvals {
            path: path.clone(),
            source,
        };
        let store = agentgate_store::SqliteStore::open(&path).map_err(|e| failed(e.into()))?;
        // The data directory is the SDK's own: only its owner may list it
        // (an older version created it 0755).
        let data_dir = Self::data_dir(app);
        agentgate_permission::private_files::tighten(&data_dir).map_err(|e| failed(e.into()))?;
        store
            .import_json_approvals_once(&Self::data_dir(app).join("approvals"))
            .map_err(|e| failed(e.into()))?;
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
        .map_err(|e| WorkspaceError::Approvals {
            path: Self::data_dir(app),
            source: e.into(),
        })
    }
}
