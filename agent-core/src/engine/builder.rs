//! [`EngineBuilder`]: assembles an [`Engine`] from a model, tools, agents
//! and the services around them.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};

use agent_permission::Permissions;

use super::facade::Engine;
use super::settings::LoopConfig;
use super::state::EngineState;
use super::task_tool::{TaskSettings, TaskTool};
use crate::agent_spec::AgentSpec;
use crate::agents::Agents;
use crate::event::EventBus;
use crate::model::{LanguageModel, ModelResolver};
use crate::sessions::{MemorySessionStore, SessionStore};
use crate::tool::Tool;
use crate::tool_registry::ToolRegistry;

/// Builds an [`Engine`].
pub struct EngineBuilder {
    model: Arc<dyn LanguageModel>,
    tools: ToolRegistry,
    permissions: Option<Permissions>,
    events: Option<EventBus>,
    config: LoopConfig,
    worktree: Option<PathBuf>,
    agents: HashMap<String, Arc<AgentSpec>>,
    store: Option<Arc<dyn SessionStore>>,
    catalog: Option<Agents>,
    task: Option<TaskSettings>,
    resolver: Option<Arc<dyn ModelResolver>>,
}

impl EngineBuilder {
    /// Starts building an engine around `model` (see [`Engine::builder`]).
    pub fn new(model: Arc<dyn LanguageModel>) -> Self {
        EngineBuilder {
            model,
            tools: ToolRegistry::new(),
            permissions: None,
            events: None,
            config: LoopConfig::default(),
            worktree: None,
            agents: HashMap::new(),
            store: None,
            catalog: None,
            task: None,
            resolver: None,
        }
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
        self.catalog = Some(agents);
        self
    }

    /// Registers the `task` tool (§10.2): the model can delegate work to the
    /// sub-agents given with [`agents`](Self::agents), each in a child
    /// session run by this engine. See [`crate::task`].
    pub fn task_tool(mut self, settings: TaskSettings) -> Self {
        self.task = Some(settings);
        self
    }

    /// Sets how sessions with their own model (sub-agents with a configured
    /// model) find it. Without a resolver every session runs on the
    /// engine's model, and a session naming another model fails with
    /// [`PromptError::UnknownModel`].
    pub fn model_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Sets the permission gate (default: a fresh [`Permissions`] without
    /// an approver, so asks wait for [`Permissions::reply`]).
    pub fn permissions(mut self, permissions: Permissions) -> Self {
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
    pub fn config(mut self, config: LoopConfig) -> Self {
        self.config = config;
        self
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
        } = self;
        let state = Arc::new_cyclic(|engine: &Weak<EngineState>| {
            if let Some(settings) = task {
                tools.register(TaskTool::new(engine.clone(), catalog, settings));
            }
            EngineState {
                model,
                tools,
                permissions: permissions.unwrap_or_default(),
                events: events.unwrap_or_default(),
                config,
                worktree,
                agents,
                store: store.unwrap_or_else(|| Arc::new(MemorySessionStore::new())),
                resolver,
                busy: Mutex::new(HashSet::new()),
                forwarding: AtomicBool::new(false),
            }
        });
        Engine::from_state(state)
    }
}
