//! [`Engine`]: the facade hosts hold — sessions, prompts, events. A prompt
//! runs as a turn (see the turn driver in `turn.rs`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use agentgate_permission::PermissionGate;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::hook_calls::run_hooks;
use super::outcome::{PromptError, StopReason, TurnError, TurnResult};
use super::reminders::model_history;
use super::settings::LoopSettings;
use super::state::{BusyGuard, EngineState, emit_message};
use super::turn::run_turn;
use super::turn_context::TurnContext;
use crate::agent_spec::AgentSpec;
use crate::compaction::is_overflow;
use crate::event::{Event, SessionStatus};
use crate::hooks::{HookDecision, HookEvent, HookEventName};
use crate::message::{Message, MessageError, Part, Role};
use crate::model::{LanguageModel, ModelRef};
use crate::sessions::{Session, SessionStore};
use crate::tool_registry::ToolRegistry;

/// Which agent and model one prompt runs with instead of the session's
/// (see [`Engine::prompt_with_options`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptOptions {
    /// The agent (by name).
    pub agent: Option<String>,
    /// The model.
    pub model: Option<ModelRef>,
}

impl PromptOptions {
    /// Runs the prompt with agent `name`.
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(name.into());
        self
    }

    /// Runs the prompt on `model`.
    pub fn model(mut self, model: ModelRef) -> Self {
        self.model = Some(model);
        self
    }
}

/// Runs sessions: the step loop around the stream processor. Cheap to clone.
///
/// One prompt per session runs at a time; different sessions run
/// concurrently.
#[derive(Clone)]
pub struct Engine {
    state: Arc<EngineState>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("model", &self.state.model.info().full_id())
            .field("tools", &self.state.tools)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// The engine around built state (see [`EngineBuilder::build`]).
    pub(super) fn from_state(state: Arc<EngineState>) -> Engine {
        Engine { state }
    }

    /// The engine a weak handle (held by the `task` tool) points to, if it
    /// is still alive.
    pub(crate) fn upgrade(state: &Weak<EngineState>) -> Option<Engine> {
        state.upgrade().map(|state| Engine { state })
    }

    /// The shared state, for the engine's other files.
    pub(super) fn state(&self) -> &EngineState {
        &self.state
    }

    /// The loop settings.
    pub fn config(&self) -> &LoopSettings {
        &self.state.config
    }

    /// Agent `name` as this engine runs it: its ruleset (every layer
    /// concatenated), model, steps and prompt. `None` for an unknown name.
    pub fn agent(&self, name: &str) -> Option<&AgentSpec> {
        self.state.agents.get(name).map(AsRef::as_ref)
    }

    /// The full agent definitions (modes, descriptions), when the engine
    /// was built with [`EngineBuilder::agents`](crate::EngineBuilder::agents).
    pub fn agents(&self) -> Option<&crate::agents::Agents> {
        self.state.catalog.as_ref()
    }

    /// The model `session` runs on: the session's own model, else its
    /// agent's configured model, else the engine's; a model other than the
    /// engine's must be served by the [`ModelResolver`](crate::ModelResolver).
    pub fn model_for(&self, session: &Session) -> Result<Arc<dyn LanguageModel>, PromptError> {
        let agent_model = self
            .state
            .agents
            .get(&session.agent)
            .and_then(|agent| agent.model.clone());
        self.model_named(session.model.as_ref().or(agent_model.as_ref()))
    }

    /// The model `wanted` names (`None`: the engine's own).
    pub(super) fn model_named(
        &self,
        wanted: Option<&ModelRef>,
    ) -> Result<Arc<dyn LanguageModel>, PromptError> {
        let Some(wanted) = wanted else {
            return Ok(Arc::clone(&self.state.model));
        };
        let own = self.state.model.info();
        if own.provider == wanted.provider_id && own.id == wanted.model_id {
            return Ok(Arc::clone(&self.state.model));
        }
        let Some(resolver) = self.state.resolver.as_ref() else {
            return Err(PromptError::UnknownModel(wanted.to_string()));
        };
        resolver
            .resolve_or_explain(wanted)
            .map_err(|reason| PromptError::ModelUnavailable {
                model: wanted.to_string(),
                reason,
            })
    }

    /// The permission gate.
    pub fn permissions(&self) -> &PermissionGate {
        &self.state.permissions
    }

    /// The session store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.state.store
    }

    /// The tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.state.tools
    }

    /// A receiver of every event from now on (permission events of the
    /// gate included).
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.forward_permission_events();
        self.state.events.subscribe()
    }

    /// Stores a new session.
    pub async fn create_session(&self, session: Session) -> Result<Session, PromptError> {
        self.state.store.put_session(&session).await?;
        Ok(session)
    }

    /// Waits until the session titles being written in the background
    /// (see [`EngineBuilder::session_titles`](crate::EngineBuilder::session_titles))
    /// are stored or have failed: a host about to exit calls it so that a
    /// title still on its way is not lost.
    pub async fn wait_for_titles(&self) {
        let tasks = std::mem::take(
            &mut *self
                .state
                .title_tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for task in tasks {
            let _ = task.await;
        }
    }

    /// Renames a session (see [`SessionStore::rename_session`]).
    pub async fn rename_session(&self, id: &str, title: &str) -> Result<Session, PromptError> {
        Ok(self.state.store.rename_session(id, title).await?)
    }

    /// Forks a session: a new one with the messages before `before` (all
    /// when `None`), see [`SessionStore::fork_session`].
    pub async fn fork_session(
        &self,
        id: &str,
        before: Option<&str>,
    ) -> Result<Session, PromptError> {
        Ok(self.state.store.fork_session(id, before).await?)
    }

    /// Deletes a session and its messages; refused while a prompt of it
    /// runs ([`PromptError::Busy`]).
    pub async fn delete_session(&self, id: &str) -> Result<(), PromptError> {
        if self
            .state
            .busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(id)
        {
            return Err(PromptError::Busy(id.to_string()));
        }
        Ok(self.state.store.delete_session(id).await?)
    }

    /// A session's transcript.
    pub async fn messages(&self, session_id: &str) -> Result<Vec<Message>, PromptError> {
        Ok(self.state.store.messages(session_id).await?)
    }

    /// Starts forwarding the gate's events to the bus (once, and only
    /// inside a tokio runtime).
    pub(super) fn forward_permission_events(&self) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.state.forwarding.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let mut receiver = self.state.permissions.subscribe();
        let events = self.state.events.clone();
        tokio::spawn(async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => match Event::try_from(event) {
                        Ok(event) => events.send(event),
                        Err(other) => tracing::debug!(?other, "gate event not forwarded"),
                    },
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

    /// Prompts a session with text and fails unless the model answers: a
    /// prompt that cannot run and a turn that stops without an answer
    /// (rejected permission, step limit, cancellation, full context,
    /// content filter, model error) are both an `Err`.
    pub async fn run(
        &self,
        session_id: &str,
        text: impl Into<String>,
    ) -> Result<TurnResult, TurnError> {
        self.prompt(session_id, text).await?.into_result()
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
        self.prompt_with_options(session_id, parts, PromptOptions::default(), cancel)
            .await
    }

    /// [`prompt_with`](Self::prompt_with) with this prompt's agent and
    /// model instead of the session's (a custom command's `agent` and
    /// `model`): the user message records the agent; the session keeps its
    /// own for the next prompt. Without a model, an agent given here runs
    /// on its configured model, else the session's.
    pub async fn prompt_with_options(
        &self,
        session_id: &str,
        parts: Vec<Part>,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        self.forward_permission_events();
        let state = &*self.state;
        let session = state.store.session(session_id).await?;
        let (agent, model) = self.agent_and_model(&session, &options)?;
        if !model.info().capabilities.images && crate::attachment::has_images(&parts) {
            return Err(PromptError::ImagesNotAccepted(model.info().full_id()));
        }
        let _guard = self.mark_busy(&session.id)?;
        let session = self.clean_up_revert(session).await?;
        let parts = self.user_prompt_hooks(&session, &agent.name, parts).await?;
        let mut user = Message::new(session.id.as_str(), Role::User);
        user.agent = agent.name.clone();
        user.parts = parts;
        user.time.end = Some(user.time.start);
        state.store.put_message(&user).await?;
        emit_message(state, &user);

        let mut history = state.store.messages(&session.id).await?;
        super::abandoned_calls::close_abandoned_calls(state, &mut history).await?;
        self.start_title(&session, &history, &model);
        let model_messages = crate::model::share_messages(model_history(&agent.name, &history));
        // §12 step 5: the previous answer already filled the context.
        let full = history
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .is_some_and(|m| {
                !m.summary
                    && m.finish.is_some()
                    && is_overflow(&m.usage, &model.info().limits, &state.config.compaction)
            });
        drop(history);
        let result = match state.config.max_turn_time {
            None => {
                let ctx = TurnContext::new(state, model, &agent, &session, &cancel);
                run_turn(&ctx, full, model_messages).await
            }
            Some(limit) => {
                // The deadline stops the turn the way a cancel does (the
                // stream, the tools, open calls closed); the stop is then
                // reported as the timeout it was.
                let turn_cancel = cancel.child_token();
                let deadline = tokio::spawn({
                    let turn_cancel = turn_cancel.clone();
                    async move {
                        tokio::time::sleep(limit).await;
                        turn_cancel.cancel();
                    }
                });
                let ctx = TurnContext::new(state, model, &agent, &session, &turn_cancel);
                let result = run_turn(&ctx, full, model_messages).await;
                deadline.abort();
                let mut result = result?;
                if result.stop == StopReason::Cancelled && !cancel.is_cancelled() {
                    result.stop = self.turn_timed_out(&session.id, &result, limit);
                }
                Ok(result)
            }
        };
        if let Ok(turn) = &result {
            self.stop_hooks(&session, &agent.name, turn).await;
        }
        result
    }

    /// Marks `session_id` busy until the guard drops; fails when it is.
    pub(super) fn mark_busy(&self, session_id: &str) -> Result<BusyGuard<'_>, PromptError> {
        let state = &*self.state;
        if !state
            .busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session_id.to_string())
        {
            return Err(PromptError::Busy(session_id.to_string()));
        }
        state.events.emit(|| Event::SessionStatus {
            session_id: session_id.to_string(),
            status: SessionStatus::Busy,
        });
        Ok(BusyGuard {
            state,
            session_id: session_id.to_string(),
        })
    }

    /// The `Stop` hooks of a turn that ended with an answer: a
    /// notification (failures are announced, answers change nothing).
    async fn stop_hooks(&self, session: &Session, agent: &str, turn: &TurnResult) {
        let state = &*self.state;
        if state.hooks.is_empty() || !matches!(turn.stop, StopReason::Done { .. }) {
            return;
        }
        let mut event = HookEvent::new(
            HookEventName::Stop,
            session.id.as_str(),
            session.directory.as_path(),
            agent,
        );
        event.last_assistant_message = Some(turn.text());
        run_hooks(state, &state.hooks, &event).await;
    }

    /// The prompt's parts after the `UserPromptSubmit` hooks: refused (a
    /// denial, or a hook that failed), or with their context added.
    async fn user_prompt_hooks(
        &self,
        session: &Session,
        agent: &str,
        mut parts: Vec<Part>,
    ) -> Result<Vec<Part>, PromptError> {
        let state = &*self.state;
        if state.hooks.is_empty() {
            return Ok(parts);
        }
        let prompt: Vec<&str> = parts
            .iter()
            .filter_map(|part| match part {
                Part::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let mut event = HookEvent::new(
            HookEventName::UserPromptSubmit,
            session.id.as_str(),
            session.directory.as_path(),
            agent,
        );
        event.prompt = Some(prompt.join("\n"));
        let combined = run_hooks(state, &state.hooks, &event).await;
        if combined.decision == HookDecision::Deny {
            return Err(PromptError::HookRefused(combined.reason()));
        }
        for context in combined.context {
            parts.push(Part::text(format!(
                "<hook_context>\n{}\n</hook_context>",
                context.trim()
            )));
        }
        Ok(parts)
    }

    /// The agent and model a prompt of `session` runs with under `options`.
    pub(super) fn agent_and_model(
        &self,
        session: &Session,
        options: &PromptOptions,
    ) -> Result<(Arc<AgentSpec>, Arc<dyn LanguageModel>), PromptError> {
        let name = options.agent.as_deref().unwrap_or(&session.agent);
        let agent = self
            .state
            .agents
            .get(name)
            .cloned()
            .ok_or_else(|| PromptError::UnknownAgent(name.to_string()))?;
        let model = match (&options.model, &options.agent) {
            (Some(wanted), _) => self.model_named(Some(wanted))?,
            (None, Some(_)) => self.model_named(agent.model.as_ref().or(session.model.as_ref()))?,
            (None, None) => self.model_for(session)?,
        };
        Ok((agent, model))
    }

    /// The stop of a turn that ran past `limit`, announced to subscribers.
    fn turn_timed_out(&self, session_id: &str, result: &TurnResult, limit: Duration) -> StopReason {
        let error = MessageError {
            name: "timeout".into(),
            message: format!(
                "the turn did not finish within its time limit of {}; raise it with \
                 `agent run --max-time` (a program embedding the library: \
                 `LoopSettings::max_turn_time`)",
                super::retry::seconds(limit)
            ),
        };
        self.state.events.emit(|| Event::Error {
            session_id: session_id.to_string(),
            message_id: result.messages.last().map(|m| m.id.clone()),
            error: error.clone(),
        });
        StopReason::Error { error }
    }
}
