//! [`EngineBuilder`]: assembles an [`Engine`] from a model, tools, agents
//! and the services around them.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};

use agentgate_permission::PermissionGate;

use super::facade::Engine;
use super::non_interactive::NonInteractive;
use super::retry::RetryPolicy;
use super::settings::LoopSettings;
use super::state::EngineState;
use super::task_tool::{TaskSettings, TaskTool};
use super::title_setting::SessionTitles;
use crate::agent_spec::AgentSpec;
use crate::agents::{AgentEnvironment, Agents};
use crate::checkpoint::Checkpoints;
use crate::event_bus::EventBus;
use crate::hooks::Hook;
use crate::model::{LanguageModel, ModelResolver};
use crate::prompts::SystemPrompts;
use crate::sessions::{MemorySessionStore, SessionStore};
use crate::tool::Tool;
use crate::tool_registry::ToolRegistry;

impl Engine {
    /// Starts building an engine around `model`.
    ///
    /// (Defined beside the builder so the facade does not depend on it:
    /// the builder makes the facade, not the other way round.)
    pub fn builder(model: Arc<dyn LanguageModel>) -> EngineBuilder {
        EngineBuilder::new(model)
    }
}

/// Builds an [`Engine`].
pub struct EngineBuilder {
    model: Arc<dyn LanguageModel>,
    tools: ToolRegistry,
    permissions: Option<PermissionGate>,
    events: Option<EventBus>,
    config: LoopSettings,
    worktree: Option<PathBuf>,
    agents: HashMap<String, Arc<AgentSpec>>,
    store: Option<Arc<dyn SessionStore>>,
    catalog: Option<Agents>,
    task: Option<TaskSettings>,
    resolver: Option<Arc<dyn ModelResolver>>,
    environment: Option<AgentEnvironment>,
    prompts: SystemPrompts,
    hooks: Vec<Arc<dyn Hook>>,
    titles: SessionTitles,
    checkpoints: Option<Arc<dyn Checkpoints>>,
}

impl EngineBuilder {
    /// Starts building an engine around `model` (see [`Engine::builder`]).
    pub fn new(model: Arc<dyn LanguageModel>) -> Self {
        EngineBuilder {
            model,
            tools: ToolRegistry::new(),
            permissions: None,
            events: None,
            config: LoopSettings::default(),
            worktree: None,
            agents: HashMap::new(),
            store: None,
            catalog: None,
            task: None,
            resolver: None,
            environment: None,
            prompts: SystemPrompts::default(),
            hooks: Vec::new(),
            titles: SessionTitles::Off,
            checkpoints: None,
        }
    }

    /// Records what each step changes in the project's files in
    /// `checkpoints`, so [`Engine::revert`] can take a turn back (see
    /// [`checkpoint`](crate::checkpoint); default: none, and revert has
    /// nothing to restore). `agentgate-tools`' `FsCheckpoints` keeps them
    /// in a folder beside the session store.
    pub fn checkpoints(mut self, checkpoints: Arc<dyn Checkpoints>) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Titles new sessions with the hidden `title` agent after their first
    /// user message, in the background (see [`SessionTitles`]; default
    /// [`SessionTitles::Off`]). The title call never delays or fails a
    /// turn; [`Engine::wait_for_titles`] waits for those still running.
    pub fn session_titles(mut self, titles: SessionTitles) -> Self {
        self.titles = titles;
        self
    }

    /// Adds a hook (`crate::hooks`): it runs at every hook point of every
    /// session of the engine, sub-agents' included, after the hooks added
    /// before it. Hooks can only make a call stricter (see `docs/hooks.md`).
    pub fn hook(mut self, hook: Arc<dyn Hook>) -> Self {
        self.hooks.push(hook);
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

    /// Adds (or replaces) an agent.
    pub fn agent(mut self, agent: AgentSpec) -> Self {
        self.agents.insert(agent.name.clone(), Arc::new(agent));
        self
    }

    /// Adds (or replaces) every agent of `agents` (as [`AgentSpec`]s) and
    /// keeps the full definitions for the `task` tool (descriptions, modes,
    /// models) — see [`task_tool`](Self::task_tool).
    pub fn agents(mut self, agents: Agents) -> Self {
        for agent in agents.iter() {
            self.agents
                .insert(agent.name.clone(), Arc::new(AgentSpec::from(agent)));
        }
        self.environment = Some(agents.environment().clone());
        self.catalog = Some(agents);
        self
    }

    /// Sets how system prompts are assembled (default
    /// [`SystemPrompts::default`]: the agent's prompt or its model family's,
    /// the environment block and the instruction files of the user's
    /// global config and the project; [`SystemPrompts::disabled`] sends
    /// the agent's sections only).
    pub fn system_prompts(mut self, prompts: SystemPrompts) -> Self {
        self.prompts = prompts;
        self
    }

    /// Sets the agent environment (also taken from [`agents`](Self::agents)):
    /// truncated tool output spills to its
    /// [`spill_dir`](AgentEnvironment::spill_dir), the directory the
    /// built-in rules let every agent read without an ask.
    pub fn environment(mut self, environment: AgentEnvironment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// Registers the `task` tool (§10.2): the model can delegate work to the
    /// sub-agents given with [`agents`](Self::agents), each in a child
    /// session run by this engine (§10.2).
    pub fn task_tool(mut self, settings: TaskSettings) -> Self {
        self.task = Some(settings);
        self
    }

    /// Sets how sessions with their own model (sub-agents with a configured
    /// model) find it. Without a resolver every session runs on the
    /// engine's model, and a session naming another model fails with
    /// [`PromptError::UnknownModel`](crate::PromptError::UnknownModel).
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Sets the permission gate. Attach an approver to it, or answer its
    /// requests with [`PermissionGate::reply`] from the event stream; a gate
    /// without either makes asks wait.
    ///
    /// Default: a fresh gate with the [`NonInteractive`] approver — no one
    /// can answer, so every ask is rejected at once with opencode's
    /// non-interactive warning (a `tracing` warning) and the turn stops
    /// with `StopReason::Rejected`, never a silent wait.
    pub fn permissions(mut self, permissions: PermissionGate) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Sets the session store (default: [`MemorySessionStore`]).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Sets the event bus.
    pub fn events(mut self, events: EventBus) -> Self {
        self.events = Some(events);
        self
    }

    /// Sets the loop settings.
    pub fn config(mut self, config: LoopSettings) -> Self {
        self.config = config;
        self
    }

    /// Retries failed model streams under `policy` (default: the
    /// [`LoopSettings`]' policy, [`RetryPolicy::default`] unless
    /// [`from_config`](Self::from_config) read a `retry` key).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.config.retry = policy;
        self
    }

    /// Records prompt and completion contents on the `chat` trace spans
    /// ([`LoopSettings::trace_contents`]; default: not recorded).
    pub fn trace_contents(mut self, on: bool) -> Self {
        self.config.trace_contents = on;
        self
    }

    /// Ends every turn that runs longer than `limit` with a `timeout`
    /// error ([`LoopSettings::max_turn_time`]; default: no deadline).
    pub fn max_turn_time(mut self, limit: std::time::Duration) -> Self {
        self.config.max_turn_time = Some(limit);
        self
    }

    /// Rejects a permission ask nobody answered within `deadline`, saying
    /// so, and stops the turn ([`LoopSettings::ask_deadline`]; default: asks
    /// wait until answered).
    pub fn ask_deadline(mut self, deadline: std::time::Duration) -> Self {
        self.config.ask_deadline = Some(deadline);
        self
    }

    /// The loop settings the engine will run with.
    pub fn loop_settings(&self) -> &LoopSettings {
        &self.config
    }

    /// The agents given with [`agents`](Self::agents) (or by
    /// [`from_config`](Self::from_config)): a host picks the session's
    /// agent from them before it builds.
    pub fn catalog(&self) -> Option<&Agents> {
        self.catalog.as_ref()
    }

    /// Whether new sessions get titles, and from which model.
    pub fn titles(&self) -> &SessionTitles {
        &self.titles
    }

    /// Sets the project root tools see as `worktree` (default: the
    /// session's directory).
    pub fn worktree(mut self, worktree: impl Into<PathBuf>) -> Self {
        self.worktree = Some(worktree.into());
        self
    }

    /// Builds the engine.
    ///
    /// The `task` tool, when enabled, holds a weak handle to the engine it
    /// belongs to (no reference cycle: dropping every [`Engine`] clone
    /// drops the engine).
    pub fn build(self) -> Engine {
        let EngineBuilder {
            model,
            mut tools,
            permissions,
            events,
            config,
            worktree,
            agents,
            store,
            catalog,
            task,
            resolver,
            environment,
            prompts,
            hooks,
            titles,
            checkpoints,
        } = self;
        let mut config = config;
        if let Some(environment) = &environment {
            config.truncator.spill_dir = environment.spill_dir();
        }
        let kept = catalog.clone();
        let state = Arc::new_cyclic(|engine: &Weak<EngineState>| {
            if let Some(settings) = task {
                tools.register(TaskTool::new(engine.clone(), catalog, settings));
            }
            EngineState {
                model,
                tools,
                permissions: permissions.unwrap_or_else(non_interactive_gate),
                events: events.unwrap_or_default(),
                config,
                worktree,
                prompts,
                agents,
                catalog: kept,
                store: store.unwrap_or_else(|| Arc::new(MemorySessionStore::new())),
                resolver,
                busy: Mutex::new(HashSet::new()),
                forwarding: AtomicBool::new(false),
                hooks,
                titles,
                title_tasks: Mutex::new(Vec::new()),
                checkpoints,
            }
        });
        Engine::from_state(state)
    }
}

/// The gate of an engine built without one: nobody can answer, so every
/// ask is rejected with a warning instead of waiting forever.
fn non_interactive_gate() -> PermissionGate {
    let permissions = PermissionGate::new();
    permissions.set_approver(Arc::new(NonInteractive));
    permissions
}
