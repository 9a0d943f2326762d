//! The step loop (§12): [`Engine`] runs a prompt through as many model
//! calls (steps) as the model needs, until it answers without calling
//! tools, a permission is rejected, the step limit is reached, the prompt
//! is cancelled, or the model fails for good.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agent_permission::{Permissions, Ruleset, merge};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::agent::Agents;
use crate::compaction::{self, CONTINUE_PROMPT, preserve_budget};
use crate::error::ModelError;
use crate::event::{Event, EventBus, SessionStatus};
use crate::ids::{ascending, now_ms};
use crate::message::{
    Message, MessageError, Part, Role, ToolPart, append_model_messages, to_model_messages,
};
use crate::model::{
    LanguageModel, ModelMessage, ModelRequest, ModelResolver, ToolChoice, ToolSpec,
};
use crate::overflow::{CompactionConfig, is_overflow};
use crate::processor::{DEFAULT_TOOL_GRACE, StepEnd, StepInput, run_step};
use crate::registry::ToolRegistry;
use crate::retry::RetryPolicy;
use crate::session::{MemorySessionStore, Session, SessionStore, StoreError};
use crate::steps::{ExitState, MAX_STEPS_PROMPT, StepMode, should_exit, step_mode};
use crate::stream::FinishReason;
use crate::task::{TaskSettings, TaskTool};
use crate::truncate::Truncator;
use crate::usage::Usage;

/// The parts of an agent the loop uses. (The full agent definition, with
/// mode, model and options, lives with the agents; it converts into this.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSpec {
    /// The agent's name (what [`Session::agent`] refers to).
    pub name: String,
    /// The agent's rules; session rules are appended after them.
    pub permission: Ruleset,
    /// The step limit (`None`: the engine's default).
    pub steps: Option<u32>,
    /// System prompt sections.
    pub system: Vec<String>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
}

impl AgentSpec {
    /// An agent with this name, no rules (every permission asks), no step
    /// limit and no system prompt.
    pub fn new(name: impl Into<String>) -> Self {
        AgentSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the rules.
    pub fn with_permission(mut self, permission: Ruleset) -> Self {
        self.permission = permission;
        self
    }

    /// Sets the step limit.
    pub fn with_steps(mut self, steps: u32) -> Self {
        self.steps = Some(steps);
        self
    }

    /// Adds a system prompt section.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system.push(system.into());
        self
    }
}

/// Loop settings.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    /// Retries of failed streams.
    pub retry: RetryPolicy,
    /// Tool output truncation.
    pub truncator: Truncator,
    /// Overflow detection.
    pub compaction: CompactionConfig,
    /// Ask `doom_loop` on the third identical call of a turn.
    pub doom_loop: bool,
    /// How long a cancelled tool may take to stop before it is abandoned.
    pub tool_grace: Duration,
    /// Step limit for agents without their own (`None`: unlimited).
    pub max_steps: Option<u32>,
    /// How deep sub-agents may nest (§10.3, `subagent_depth`, default 1):
    /// the `task` tool refuses to run in a session with this many parent
    /// hops to its root. With 1, only root sessions spawn sub-agents.
    pub subagent_depth: u32,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            retry: RetryPolicy::default(),
            truncator: Truncator::default(),
            compaction: CompactionConfig::default(),
            doom_loop: true,
            tool_grace: DEFAULT_TOOL_GRACE,
            max_steps: None,
            subagent_depth: 1,
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling tools (§12 step 2).
    Done {
        /// Its finish reason.
        finish: FinishReason,
    },
    /// A permission was rejected without feedback (§11.1), or the
    /// doom-loop ask failed (§11.2).
    Rejected,
    /// The step limit was reached and the model still called tools.
    StepLimit,
    /// The prompt was cancelled; every open call was closed (§11.3).
    Cancelled,
    /// The context is full: compact the history before prompting again.
    ContextOverflow,
    /// The output was blocked by a content filter.
    ContentFilter,
    /// The model call failed for good (not retryable, or out of retries).
    Error {
        /// What went wrong.
        error: MessageError,
    },
}

/// The result of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// Why the turn ended.
    pub stop: StopReason,
    /// The turn's assistant messages, in order (one per step).
    pub messages: Vec<Message>,
    /// Steps run.
    pub steps: u32,
    /// Tokens used by all steps.
    pub usage: Usage,
}

impl TurnResult {
    /// The last assistant message's text (the answer).
    pub fn text(&self) -> String {
        self.messages.last().map(Message::text).unwrap_or_default()
    }
}

/// Why a prompt could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// The store failed or does not know the session.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another prompt of the session is running.
    #[error("session {0:?} is busy with another prompt: wait for it or cancel it first")]
    Busy(String),
    /// The session names an agent the engine does not know.
    #[error("unknown agent {0:?}: register it with EngineBuilder::agent")]
    UnknownAgent(String),
    /// The session names a model the engine cannot serve.
    #[error(
        "model {0:?} is not available: register a ModelResolver with EngineBuilder::model_resolver that serves it"
    )]
    UnknownModel(String),
}

/// What every step shares.
pub(crate) struct Shared {
    pub model: Arc<dyn LanguageModel>,
    pub tools: ToolRegistry,
    pub permissions: Permissions,
    pub events: EventBus,
    pub config: LoopConfig,
    pub worktree: Option<PathBuf>,
    agents: HashMap<String, Arc<AgentSpec>>,
    store: Arc<dyn SessionStore>,
    resolver: Option<Arc<dyn ModelResolver>>,
    busy: Mutex<HashSet<String>>,
    forwarding: AtomicBool,
}

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
    /// Sets the tools.
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl crate::tool::Tool + 'static) -> Self {
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
        let shared = Arc::new_cyclic(|engine: &Weak<Shared>| {
            if let Some(settings) = task {
                tools.register(TaskTool::new(engine.clone(), catalog, settings));
            }
            Shared {
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
        Engine { shared }
    }
}

/// Runs sessions: the step loop around the stream processor. Cheap to clone.
///
/// One prompt per session runs at a time; different sessions run
/// concurrently.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("model", &self.shared.model.info().full_id())
            .field("tools", &self.shared.tools)
            .finish_non_exhaustive()
    }
}

/// Removes a session from the busy set when the prompt ends, however it ends.
struct BusyGuard<'a> {
    shared: &'a Shared,
    session_id: String,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.shared
            .busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.session_id);
        let session_id = std::mem::take(&mut self.session_id);
        self.shared.events.emit(|| Event::SessionStatus {
            session_id,
            status: SessionStatus::Idle,
        });
    }
}

impl Engine {
    /// Starts building an engine around `model`.
    pub fn builder(model: Arc<dyn LanguageModel>) -> EngineBuilder {
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

    /// The engine a weak handle (held by the `task` tool) points to, if it
    /// is still alive.
    pub(crate) fn upgrade(shared: &Weak<Shared>) -> Option<Engine> {
        shared.upgrade().map(|shared| Engine { shared })
    }

    /// The loop settings.
    pub fn config(&self) -> &LoopConfig {
        &self.shared.config
    }

    /// The model `session` runs on: the engine's, unless the session names
    /// another one, which the [`ModelResolver`] must serve.
    pub fn model_for(&self, session: &Session) -> Result<Arc<dyn LanguageModel>, PromptError> {
        let Some(wanted) = &session.model else {
            return Ok(Arc::clone(&self.shared.model));
        };
        let own = self.shared.model.info();
        if own.provider == wanted.provider_id && own.id == wanted.model_id {
            return Ok(Arc::clone(&self.shared.model));
        }
        self.shared
            .resolver
            .as_ref()
            .and_then(|resolver| resolver.resolve(wanted))
            .ok_or_else(|| PromptError::UnknownModel(wanted.to_string()))
    }

    /// The permission gate.
    pub fn permissions(&self) -> &Permissions {
        &self.shared.permissions
    }

    /// The session store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.shared.store
    }

    /// The tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.shared.tools
    }

    /// A receiver of every event from now on (permission events of the
    /// gate included).
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.forward_permission_events();
        self.shared.events.subscribe()
    }

    /// Stores a new session.
    pub async fn create_session(&self, session: Session) -> Result<Session, PromptError> {
        self.shared.store.put_session(&session).await?;
        Ok(session)
    }

    /// A session's transcript.
    pub async fn messages(&self, session_id: &str) -> Result<Vec<Message>, PromptError> {
        Ok(self.shared.store.messages(session_id).await?)
    }

    /// Starts forwarding the gate's events to the bus (once, and only
    /// inside a tokio runtime).
    fn forward_permission_events(&self) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.shared.forwarding.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let mut receiver = self.shared.permissions.subscribe();
        let events = self.shared.events.clone();
        tokio::spawn(async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => events.send(event.into()),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "permission events lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }

    /// Prompts a session with text and runs the turn to its end.
    pub async fn prompt(
        &self,
        session_id: &str,
        text: impl Into<String>,
    ) -> Result<TurnResult, PromptError> {
        self.prompt_with(session_id, vec![Part::text(text)], CancellationToken::new())
            .await
    }

    /// Prompts a session with user parts; `cancel` stops the turn (the
    /// stream, running tools), closing every open call (§11.3). The session
    /// can be prompted again as soon as this returns. Dropping the future
    /// also frees the session; calls it left open read
    /// `[Tool execution was interrupted]` in the next request.
    pub async fn prompt_with(
        &self,
        session_id: &str,
        parts: Vec<Part>,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        self.forward_permission_events();
        let shared = &*self.shared;
        let session = shared.store.session(session_id).await?;
        let agent = shared
            .agents
            .get(&session.agent)
            .cloned()
            .ok_or_else(|| PromptError::UnknownAgent(session.agent.clone()))?;
        let model = self.model_for(&session)?;
        if !shared
            .busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.id.clone())
        {
            return Err(PromptError::Busy(session.id.clone()));
        }
        let _guard = BusyGuard {
            shared,
            session_id: session.id.clone(),
        };
        shared.events.emit(|| Event::SessionStatus {
            session_id: session.id.clone(),
            status: SessionStatus::Busy,
        });

        let mut user = Message::new(session.id.as_str(), Role::User);
        user.agent = agent.name.clone();
        user.parts = parts;
        user.time.end = Some(user.time.start);
        shared.store.put_message(&user).await?;
        emit_message(shared, &user);

        let history = shared.store.messages(&session.id).await?;
        let mut model_messages = Arc::new(to_model_messages(&history));
        // §12 step 5: the previous answer already filled the context.
        let full = history
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .is_some_and(|m| {
                !m.summary
                    && m.finish.is_some()
                    && is_overflow(&m.usage, &model.info().limits, &shared.config.compaction)
            });
        drop(history);
        let turn = Turn {
            shared,
            full,
            model,
            agent: &agent,
            session: &session,
            ruleset: Arc::new(merge([&agent.permission, &session.permission])),
            cancel: &cancel,
        };
        turn.run(&mut model_messages).await
    }
}

fn emit_message(shared: &Shared, message: &Message) {
    shared.events.emit(|| Event::MessageCreated {
        session_id: message.session_id.clone(),
        message_id: message.id.clone(),
        role: message.role,
    });
    for part in &message.parts {
        shared.events.emit(|| Event::PartCreated {
            session_id: message.session_id.clone(),
            message_id: message.id.clone(),
            part: part.clone(),
        });
    }
}

/// One turn in progress.
struct Turn<'a> {
    shared: &'a Shared,
    /// The context was already full when the prompt started.
    full: bool,
    model: Arc<dyn LanguageModel>,
    agent: &'a AgentSpec,
    session: &'a Session,
    ruleset: Arc<Ruleset>,
    cancel: &'a CancellationToken,
}

impl Turn<'_> {
    async fn run(
        &self,
        model_messages: &mut Arc<Vec<ModelMessage>>,
    ) -> Result<TurnResult, PromptError> {
        let shared = self.shared;
        let limit = self.agent.steps.or(shared.config.max_steps);
        let mut specs = shared.tools.visible(&self.ruleset);
        for spec in &mut specs {
            if let Some(description) = shared
                .tools
                .get(&spec.name)
                .and_then(|tool| tool.description_for(self.agent))
            {
                spec.description = description;
            }
        }
        let tools = Arc::new(specs);
        let mut messages: Vec<Message> = Vec::new();
        let mut turn_calls: Vec<ToolPart> = Vec::new();
        let mut usage = Usage::default();
        let mut step = 0u32;
        // A compaction ran and no step has succeeded since (a second one
        // would loop).
        let mut compacted = false;
        if self.full {
            if let Err(stop) = self
                .compact(step, true, model_messages, &tools, &mut usage)
                .await?
            {
                return Ok(TurnResult {
                    stop,
                    messages,
                    steps: step,
                    usage,
                });
            }
            compacted = true;
        }
        let stop = loop {
            step += 1;
            let mode = step_mode(step, limit);
            if mode == StepMode::Beyond {
                break StopReason::StepLimit;
            }
            if self.cancel.is_cancelled() {
                break StopReason::Cancelled;
            }
            let mut request = ModelRequest {
                system: self.agent.system.clone(),
                messages: Arc::clone(model_messages),
                tools: Arc::clone(&tools),
                tool_choice: ToolChoice::Auto,
                temperature: self.agent.temperature,
                top_p: self.agent.top_p,
                ..Default::default()
            };
            if mode == StepMode::Last {
                // Hard limit: tools stay declared (some providers reject a
                // history with tool calls otherwise) but may not be called,
                // and any call is refused.
                request.tool_choice = ToolChoice::None;
                Arc::make_mut(&mut request.messages).push(ModelMessage::user(MAX_STEPS_PROMPT));
            }

            let mut message = Message::new(self.session.id.as_str(), Role::Assistant);
            message.agent = self.agent.name.clone();
            message.parts.push(Part::StepStart {
                id: ascending("prt"),
            });
            emit_message(shared, &message);

            let end = run_step(
                StepInput {
                    shared,
                    model: &self.model,
                    agent: self.agent,
                    session_id: &self.session.id,
                    directory: &self.session.directory,
                    ruleset: &self.ruleset,
                    request,
                    last_step: mode == StepMode::Last,
                    turn_calls: &turn_calls,
                    cancel: self.cancel,
                    step,
                },
                &mut message,
            )
            .await;

            message.time.end = Some(now_ms());
            if end == StepEnd::Cancelled && message.error.is_none() {
                message.error = Some(MessageError {
                    name: "aborted".into(),
                    message: "The prompt was cancelled.".into(),
                });
            }
            usage.accumulate(&message.usage);
            shared.store.put_message(&message).await?;
            shared.events.emit(|| Event::MessageCompleted {
                session_id: message.session_id.clone(),
                message_id: message.id.clone(),
                finish: message.finish,
                error: message.error.clone(),
            });
            append_model_messages(&message, Arc::make_mut(model_messages));
            turn_calls.extend(message.tool_parts().cloned());
            let finish = message.finish;
            let overflow = is_overflow(
                &message.usage,
                &self.model.info().limits,
                &shared.config.compaction,
            );
            let exit = should_exit(&ExitState::of_message(&message));
            let error = message.error.clone();
            messages.push(message);

            match end {
                StepEnd::Cancelled => break StopReason::Cancelled,
                StepEnd::Blocked => break StopReason::Rejected,
                StepEnd::StepLimit => break StopReason::StepLimit,
                StepEnd::Failed(error) => {
                    if let ModelError::ContextOverflow { .. } = error {
                        if !shared.config.compaction.auto || compacted {
                            break StopReason::ContextOverflow;
                        }
                        match self
                            .compact(step, true, model_messages, &tools, &mut usage)
                            .await?
                        {
                            Ok(()) => {
                                compacted = true;
                                continue;
                            }
                            Err(stop) => break stop,
                        }
                    }
                    let error = error_of(error);
                    shared.events.emit(|| Event::Error {
                        session_id: self.session.id.clone(),
                        message_id: messages.last().map(|m| m.id.clone()),
                        error: error.clone(),
                    });
                    break StopReason::Error { error };
                }
                StepEnd::Finished => {}
            }
            let _ = error;
            if finish == Some(FinishReason::ContentFilter) {
                break StopReason::ContentFilter;
            }
            if exit || mode == StepMode::Last {
                break StopReason::Done {
                    finish: finish.unwrap_or(FinishReason::Unknown),
                };
            }
            if overflow {
                if compacted {
                    break StopReason::ContextOverflow;
                }
                match self
                    .compact(step, false, model_messages, &tools, &mut usage)
                    .await?
                {
                    Ok(()) => compacted = true,
                    Err(stop) => break stop,
                }
            } else {
                compacted = false;
            }
        };
        Ok(TurnResult {
            stop,
            messages,
            steps: step,
            usage,
        })
    }
}

impl Turn<'_> {
    /// Runs one compaction (see [`crate::compaction`]): the summary call,
    /// then the continuation message (`replay`: the last real user
    /// message; else [`CONTINUE_PROMPT`]), and reloads the history sent to
    /// the model. `Ok(Err(stop))` when the turn must end.
    async fn compact(
        &self,
        step: u32,
        replay: bool,
        model_messages: &mut Arc<Vec<ModelMessage>>,
        tools: &Arc<Vec<ToolSpec>>,
        usage: &mut Usage,
    ) -> Result<Result<(), StopReason>, PromptError> {
        let shared = self.shared;
        let session_id = self.session.id.as_str();
        let config = &shared.config.compaction;
        let history = shared.store.messages(session_id).await?;
        let budget = preserve_budget(&self.model.info().limits, config);
        let Some(plan) = compaction::plan(&history, budget, config.tail_turns, replay) else {
            return Ok(Err(StopReason::ContextOverflow));
        };
        drop(history);

        let mut request_message = Message::new(session_id, Role::User);
        request_message.agent = self.agent.name.clone();
        request_message.parts.push(Part::Compaction {
            id: ascending("prt"),
            auto: true,
            overflow: replay,
            kept: plan.kept,
        });
        request_message.time.end = Some(request_message.time.start);
        shared.store.put_message(&request_message).await?;
        emit_message(shared, &request_message);

        let agent = shared
            .agents
            .get(COMPACTION_AGENT)
            .cloned()
            .unwrap_or_else(|| Arc::new(AgentSpec::new(COMPACTION_AGENT)));
        let ruleset = Arc::new(agent.permission.clone());
        let request = ModelRequest {
            system: agent.system.clone(),
            messages: Arc::new(plan.request),
            // Declared (providers reject tool calls in a history without
            // tools) but not callable.
            tools: Arc::clone(tools),
            tool_choice: ToolChoice::None,
            temperature: agent.temperature,
            top_p: agent.top_p,
            ..Default::default()
        };
        let mut message = Message::new(session_id, Role::Assistant);
        message.agent = agent.name.clone();
        message.summary = true;
        message.parts.push(Part::StepStart {
            id: ascending("prt"),
        });
        emit_message(shared, &message);
        let end = run_step(
            StepInput {
                shared,
                model: &self.model,
                agent: &agent,
                session_id,
                directory: &self.session.directory,
                ruleset: &ruleset,
                request,
                last_step: true,
                turn_calls: &[],
                cancel: self.cancel,
                step,
            },
            &mut message,
        )
        .await;
        message.time.end = Some(now_ms());
        let outcome = match end {
            StepEnd::Cancelled => {
                message.error.get_or_insert_with(|| MessageError {
                    name: "aborted".into(),
                    message: "The prompt was cancelled.".into(),
                });
                Err(StopReason::Cancelled)
            }
            StepEnd::Failed(error) => {
                let error = if error.is_context_overflow() {
                    MessageError {
                        name: "context_overflow".into(),
                        message: format!(
                            "the conversation is too long even to summarise ({error}); lower compaction.tail_turns or start a new session"
                        ),
                    }
                } else {
                    error_of(error)
                };
                message.error = Some(error.clone());
                Err(StopReason::Error { error })
            }
            _ if message.text().trim().is_empty() => {
                let error = MessageError {
                    name: "compaction".into(),
                    message: "the model returned an empty summary; the history was not compacted"
                        .into(),
                };
                message.error = Some(error.clone());
                Err(StopReason::Error { error })
            }
            _ => Ok(()),
        };
        usage.accumulate(&message.usage);
        shared.store.put_message(&message).await?;
        shared.events.emit(|| Event::MessageCompleted {
            session_id: message.session_id.clone(),
            message_id: message.id.clone(),
            finish: message.finish,
            error: message.error.clone(),
        });
        if let Err(stop) = outcome {
            if let StopReason::Error { error } = &stop {
                shared.events.emit(|| Event::Error {
                    session_id: session_id.to_string(),
                    message_id: Some(message.id.clone()),
                    error: error.clone(),
                });
            }
            return Ok(Err(stop));
        }

        let mut next = Message::new(session_id, Role::User);
        next.agent = self.agent.name.clone();
        next.parts = match plan.replay {
            Some(parts) if !parts.is_empty() => parts,
            _ => vec![Part::Text {
                id: ascending("prt"),
                text: CONTINUE_PROMPT.into(),
                synthetic: true,
                provider_metadata: None,
            }],
        };
        next.time.end = Some(next.time.start);
        shared.store.put_message(&next).await?;
        emit_message(shared, &next);

        let history = shared.store.messages(session_id).await?;
        *model_messages = Arc::new(to_model_messages(&history));
        Ok(Ok(()))
    }
}

/// The name of the agent whose rules and prompt summary calls use.
pub const COMPACTION_AGENT: &str = "compaction";

fn error_of(error: ModelError) -> MessageError {
    MessageError {
        name: "model".into(),
        message: error.to_string(),
    }
}
