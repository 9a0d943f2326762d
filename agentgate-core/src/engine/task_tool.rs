//! The `task` tool: sub-agent sessions (opencode §10).
//!
//! Enable it with [`EngineBuilder::agents`](crate::EngineBuilder::agents)
//! (the agents it may offer) and
//! [`EngineBuilder::task_tool`](crate::EngineBuilder::task_tool). A call
//! `{description, prompt, subagent_type, task_id?}`:
//!
//! 1. fails when the calling session is already `subagent_depth` parent
//!    hops from its root ([`LoopSettings::subagent_depth`](crate::LoopSettings::subagent_depth),
//!    default 1: only root sessions delegate), before asking anything;
//! 2. asks `task` with patterns `[subagent_type]`, always `["*"]` and
//!    metadata `{description, subagent_type}` — a deny goes back to the
//!    model, a plain rejection stops the caller's turn;
//! 3. resumes the child session `task_id` (only a child of the caller; it
//!    keeps the permission it was created with) or creates one: parent =
//!    caller, title `<description> (@<agent> subagent)`, permission =
//!    [`task_child_permission`], model = the sub-agent's own, else the
//!    caller session's;
//! 4. prompts the child through the same engine — same permission gate,
//!    same event bus, events carrying the child's session id — and waits
//!    for its turn to end. Cancelling the caller's call cancels the child;
//!    the child runs on its own tokio task, so its transcript is closed
//!    properly even if the caller gives up waiting;
//! 5. returns [`completed_output`] with the last text part of the child's
//!    final assistant message, or fails with [`error_output`]; metadata
//!    `{parentSessionId, sessionId, model}` (also published live before the
//!    child starts, so a UI can follow the child session at once).
//!
//! The tool holds a weak handle to its engine, so it adds no reference
//! cycle. Its description lists the sub-agents the *calling* agent may use
//! ([`Agents::callable_subagents`] of the caller agent's rules), so each
//! agent sees its own list.
//!
//! Differences from opencode, on purpose: a `task_id` that is not a child
//! of the caller (or does not exist) is refused instead of silently
//! starting a new task; an agent whose mode is `primary` is refused; a
//! child turn ended by a rejected permission stops the caller's turn too
//! (the user said stop).

use std::sync::Weak;

use agentgate_permission::{PermissionError, Ruleset, task_child_permission};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::Instrument;

use super::facade::Engine;
use super::outcome::{PromptError, StopReason, TurnResult};
use super::state::EngineState;
use crate::agents::{Agent, AgentMode, Agents};
use crate::checkpoint::ToolEffects;
use crate::event::Event;
use crate::message::{Part, Role};
use crate::sessions::{Session, SessionStore, SessionStoreError};
use crate::tool::{CallingAgent, Tool, ToolError, ToolOutput, decode_args, schema_of};
use crate::tool_context::ToolContext;

/// The tool's name, and the permission it asks.
pub const TASK_TOOL: &str = "task";

/// Description line of a sub-agent that has none.
pub const NO_DESCRIPTION: &str = "This subagent should only be called manually by the user.";

/// The fixed part of the tool description; the list of sub-agents follows.
pub const TASK_DESCRIPTION: &str = "\
Delegate a self-contained piece of work to a subagent. The subagent runs in its own session \
with its own tools and permissions, works autonomously, and returns one final message.

When to use it:
- Open-ended searches or research that would take many steps.
- Independent units of work that can run in parallel (call the tool several times in one response).

How to use it:
- `description`: 3-5 words saying what the subagent will do.
- `prompt`: everything the subagent needs. It does not see this conversation, so state the goal, \
the relevant context and exactly what it should report back.
- `subagent_type`: one of the agent types listed below.
- `task_id`: leave it out to start a new task; pass the id a previous task returned to continue \
that subagent's session with its history.

The result is wrapped in <task id=\"...\" state=\"...\"> ... </task>. The subagent's answer is \
not shown to the user: summarise what matters for them yourself.";

/// How the task tool builds child sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskSettings {
    /// Tools only primary agents may use (opencode
    /// `experimental.primary_tools`): denied in every child session.
    pub primary_tools: Vec<String>,
}

/// The arguments of a `task` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct TaskArgs {
    /// A short (3-5 words) description of the task.
    pub description: String,
    /// The task for the subagent to perform, with all the context it needs.
    pub prompt: String,
    /// The type of subagent to use (one of the listed agent types).
    pub subagent_type: String,
    /// The id a previous task returned, to continue that subagent session
    /// instead of starting a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

/// Why a `task` call failed before or around running the sub-agent. The
/// message is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The calling session is nested too deep (§10.3).
    #[error(
        "Subagent depth limit reached ({0}). Increase \"subagent_depth\" to allow nested subagents."
    )]
    DepthLimit(u32),
    /// No agent with this name.
    #[error("Unknown agent type: {0} is not a valid agent type")]
    UnknownAgent(String),
    /// The agent is primary-only.
    #[error(
        "Agent type {0} is a primary agent and cannot run as a subagent; choose one of the listed agent types"
    )]
    PrimaryAgent(String),
    /// `task_id` does not name a child session of the caller.
    #[error(
        "task_id {0} is not a task started from this session; omit task_id to start a new task"
    )]
    NotAChild(String),
    /// The engine that owns the tool was dropped.
    #[error("the agent engine is shutting down; the task cannot run")]
    EngineGone,
    /// The session store failed.
    #[error("task session storage failed: {0}")]
    Store(#[from] SessionStoreError),
    /// The child prompt could not start (busy, unknown agent or model).
    #[error("the subagent could not start: {0}")]
    Prompt(#[from] PromptError),
    /// The child prompt panicked.
    #[error("the subagent crashed: {0}")]
    Crashed(String),
}

impl From<TaskError> for ToolError {
    fn from(error: TaskError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

/// The output of a finished task (§10.2, exactly as opencode formats it).
pub fn completed_output(task_id: &str, text: &str) -> String {
    format!(
        "<task id=\"{task_id}\" state=\"completed\">\n<task_result>\n{text}\n</task_result>\n</task>"
    )
}

/// The error text of a failed task.
pub fn error_output(task_id: &str, error: &str) -> String {
    format!(
        "<task id=\"{task_id}\" state=\"error\">\n<task_error>\n{error}\n</task_error>\n</task>"
    )
}

/// The tool description for a caller whose agent rules are `caller`:
/// [`TASK_DESCRIPTION`], then one `- <name>: <description>` line per
/// sub-agent of [`Agents::callable_subagents`] (sorted by name).
pub fn task_description(agents: &Agents, caller: &Ruleset) -> String {
    let mut out = String::from(TASK_DESCRIPTION);
    out.push_str("\n\nAvailable agent types and the tools they have access to:");
    for agent in agents.callable_subagents(caller) {
        let description = agent.description.as_deref().unwrap_or(NO_DESCRIPTION);
        out.push_str(&format!("\n- {}: {description}", agent.name));
    }
    out
}

/// The number of parent hops from `session` to its root.
pub async fn session_depth(
    store: &dyn SessionStore,
    session: &Session,
) -> Result<u32, SessionStoreError> {
    let mut depth = 0u32;
    let mut seen = vec![session.id.clone()];
    let mut parent = session.parent_id.clone();
    while let Some(id) = parent {
        if seen.contains(&id) {
            return Err(SessionStoreError::Io(format!(
                "session {id:?} is its own ancestor: fix the parent_id chain"
            )));
        }
        depth += 1;
        let next = store.session(&id).await?;
        seen.push(id);
        parent = next.parent_id;
    }
    Ok(depth)
}

/// The `task` tool (registered by
/// [`EngineBuilder::task_tool`](crate::EngineBuilder::task_tool)).
pub(crate) struct TaskTool {
    engine: Weak<EngineState>,
    agents: Option<Agents>,
    settings: TaskSettings,
    parameters: Value,
    description: String,
}

impl TaskTool {
    pub(crate) fn new(
        engine: Weak<EngineState>,
        agents: Option<Agents>,
        settings: TaskSettings,
    ) -> Self {
        let description = match &agents {
            Some(agents) => task_description(agents, &Ruleset::default()),
            None => TASK_DESCRIPTION.to_string(),
        };
        TaskTool {
            engine,
            agents,
            settings,
            parameters: schema_of::<TaskArgs>(),
            description,
        }
    }
}

/// The text of the last text part of the turn's final assistant message.
fn last_text(turn: &TurnResult) -> String {
    turn.messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .and_then(|m| {
            m.parts.iter().rev().find_map(|part| match part {
                Part::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
        })
        .unwrap_or_default()
}

#[async_trait]
impl Tool for TaskTool {
    fn id(&self) -> &str {
        TASK_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn description_for(&self, agent: &CallingAgent<'_>) -> Option<String> {
        let agents = self.agents.as_ref()?;
        Some(task_description(agents, agent.permission))
    }

    /// The child's steps keep their own checkpoints; the call adds their
    /// changes to the caller's step ([`record_child_changes`]), so no
    /// whole-project comparison is needed around it.
    fn effects(&self) -> ToolEffects {
        ToolEffects::Declared
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: TaskArgs = decode_args(TASK_TOOL, input)?;
        let engine = Engine::upgrade(&self.engine).ok_or(TaskError::EngineGone)?;
        let store = engine.store();
        let caller = store
            .session(&ctx.session_id)
            .await
            .map_err(TaskError::from)?;

        let limit = engine.config().subagent_depth;
        let depth = session_depth(store.as_ref(), &caller)
            .await
            .map_err(TaskError::from)?;
        if depth >= limit {
            return Err(TaskError::DepthLimit(limit).into());
        }

        ctx.ask(
            TASK_TOOL,
            [args.subagent_type.as_str()],
            ["*"],
            json!({"description": args.description, "subagent_type": args.subagent_type}),
        )
        .await?;

        let agent = self
            .agents
            .as_ref()
            .and_then(|agents| agents.get(&args.subagent_type))
            .ok_or_else(|| TaskError::UnknownAgent(args.subagent_type.clone()))?;
        if agent.mode == AgentMode::Primary {
            return Err(TaskError::PrimaryAgent(agent.name.clone()).into());
        }
        let child = self
            .child_session(store.as_ref(), &caller, &args, agent, ctx)
            .await?;

        engine.state().events.emit(|| Event::ChildStarted {
            session_id: child.id.clone(),
            parent_id: caller.id.clone(),
        });
        let model = engine.model_for(&child).map_err(TaskError::from)?;
        let metadata = json!({
            "parentSessionId": caller.id,
            "sessionId": child.id,
            "model": model.info().full_id(),
        });
        ctx.metadata(Some(&args.description), metadata.clone());

        let turn = run_child(&engine, &child.id, args.prompt, ctx).await?;
        record_child_changes(&engine, ctx, &turn).await;
        let output = child_output(&child.id, &turn)?;
        Ok(output.with_title(args.description).with_metadata(metadata))
    }
}

impl TaskTool {
    /// The session the task runs in: the caller's child `task_id` names,
    /// else a new child of the caller for `agent`, bounded by the caller's
    /// rules.
    async fn child_session(
        &self,
        store: &dyn SessionStore,
        caller: &Session,
        args: &TaskArgs,
        agent: &Agent,
        ctx: &ToolContext,
    ) -> Result<Session, ToolError> {
        if let Some(id) = &args.task_id {
            let child = match store.session(id).await {
                Ok(child) => child,
                Err(SessionStoreError::NotFound(_)) => {
                    return Err(TaskError::NotAChild(id.clone()).into());
                }
                Err(error) => return Err(TaskError::from(error).into()),
            };
            if child.parent_id.as_deref() != Some(caller.id.as_str()) {
                return Err(TaskError::NotAChild(id.clone()).into());
            }
            return Ok(child);
        }
        let mut child = Session::new(agent.name.as_str(), caller.directory.clone());
        child.parent_id = Some(caller.id.clone());
        child.title = format!("{} (@{} subagent)", args.description, agent.name);
        child.permission = task_child_permission(
            &caller.permission,
            &agent.permission,
            &self.settings.primary_tools,
        );
        child.model = agent.model.clone().or_else(|| caller.model.clone());
        // The child never has more power than its parent: the caller's own
        // rules (agent and session, as this call is judged by) and the
        // caller's ceilings bound the child's.
        child.ceilings = caller.ceilings.clone();
        child.ceilings.push(ctx.ruleset().clone());
        store.put_session(&child).await.map_err(TaskError::from)?;
        Ok(child)
    }
}

/// Adds what the child's steps changed to the caller's checkpoint, so
/// reverting the caller's message takes the sub-agent's work back too (as
/// the caller's own step would have, had it made the changes itself).
async fn record_child_changes(engine: &Engine, ctx: &ToolContext, turn: &TurnResult) {
    let Some(checkpoints) = &engine.state().checkpoints else {
        return;
    };
    let changes: Vec<_> = turn
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            Part::Patch { files, .. } => Some(files.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    if changes.is_empty() {
        return;
    }
    let changes = crate::checkpoint::net_changes(changes);
    if let Err(error) = checkpoints
        .record(&ctx.worktree, &ctx.session_id, changes)
        .await
    {
        tracing::warn!(session_id = %ctx.session_id, %error, "checkpoint: the sub-agent's changes were not added to its caller's step");
    }
}

/// Prompts the child session and waits for its turn.
async fn run_child(
    engine: &Engine,
    child_id: &str,
    prompt: String,
    ctx: &ToolContext,
) -> Result<TurnResult, ToolError> {
    // The child runs on its own task: if the caller stops waiting (its
    // grace period after cancellation ran out), the child still sees the
    // cancellation and closes its transcript.
    let id = child_id.to_string();
    let cancel = ctx.cancel.clone();
    let parts = vec![Part::text(prompt)];
    let runner = engine.clone();
    // In the caller's span (its `execute_tool`), so the child's
    // `invoke_agent` span is a child of the call that started it.
    let child = async move { runner.prompt_with(&id, parts, cancel).await };
    let handle = tokio::spawn(child.in_current_span());
    match handle.await {
        Ok(Ok(turn)) => Ok(turn),
        Ok(Err(error)) => {
            let error = TaskError::from(error).to_string();
            Err(ToolError::Failed(error_output(child_id, &error)))
        }
        Err(join) => {
            let error = TaskError::Crashed(join.to_string()).to_string();
            Err(ToolError::Failed(error_output(child_id, &error)))
        }
    }
}

/// What the parent's model reads of the child's turn.
fn child_output(child_id: &str, turn: &TurnResult) -> Result<ToolOutput, ToolError> {
    if let StopReason::Denied { message } = &turn.stop {
        // §10.2 step 8: the parent goes on with the child's result; the
        // model is told that the child was stopped by a rule.
        let text = last_text(turn);
        let note = format!("The subagent was stopped: {message}");
        let result = if text.is_empty() {
            note
        } else {
            format!("{text}\n\n{note}")
        };
        return Ok(ToolOutput::text(completed_output(child_id, &result)));
    }
    let failure = match &turn.stop {
        StopReason::Done { .. } | StopReason::StepLimit => None,
        StopReason::Cancelled => return Err(ToolError::Cancelled),
        StopReason::Rejected => return Err(ToolError::Permission(PermissionError::Rejected)),
        StopReason::ContextOverflow => Some(
            "The subagent's context window is full; start a new task with a narrower prompt."
                .to_string(),
        ),
        StopReason::ContentFilter => {
            Some("The subagent's output was blocked by the provider's content filter.".into())
        }
        StopReason::Error { error } => Some(error.message.clone()),
        StopReason::Denied { message } => Some(message.clone()),
    };
    if let Some(error) = failure {
        return Err(ToolError::Failed(error_output(child_id, &error)));
    }
    Ok(ToolOutput::text(completed_output(
        child_id,
        &last_text(turn),
    )))
}
