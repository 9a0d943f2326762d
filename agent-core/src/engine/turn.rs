//! The turn driver (§12): one prompt run through as many model calls
//! (steps) as the model needs, until it answers without calling tools, a
//! permission is rejected, the step limit is reached, the prompt is
//! cancelled, or the model fails for good. Compaction between steps is in
//! `turn_compaction.rs`.

use std::sync::Arc;

use agent_permission::Ruleset;
use tokio_util::sync::CancellationToken;

use super::model_options::provider_options;
use super::outcome::{PromptError, StopReason, TurnResult, error_of};
use super::processor::{StepEnd, StepInput, run_step};
use super::state::{EngineState, emit_message};
use super::turn_rules::{ExitState, MAX_STEPS_PROMPT, StepMode, should_exit, step_mode};
use crate::agent_spec::AgentSpec;
use crate::compaction::is_overflow;
use crate::error::ModelError;
use crate::event::Event;
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Role, ToolPart, append_model_messages};
use crate::model::{LanguageModel, ModelMessage, ModelRequest, ToolChoice};
use crate::sessions::Session;
use crate::stream::FinishReason;
use crate::tool::CallingAgent;
use crate::usage::Usage;

/// One turn in progress.
pub(super) struct Turn<'a> {
    pub state: &'a EngineState,
    /// The context was already full when the prompt started.
    pub full: bool,
    pub model: Arc<dyn LanguageModel>,
    pub agent: &'a AgentSpec,
    pub session: &'a Session,
    pub ruleset: Arc<Ruleset>,
    /// The session's ceilings (its parents' rules), shared by its calls.
    pub ceilings: Arc<Vec<Ruleset>>,
    pub cancel: &'a CancellationToken,
}

impl Turn<'_> {
    pub(super) async fn run(
        &self,
        model_messages: &mut Arc<Vec<ModelMessage>>,
    ) -> Result<TurnResult, PromptError> {
        let state = self.state;
        let limit = self.agent.steps.or(state.config.max_steps);
        let mut specs = state.tools.visible(&self.ruleset);
        // A tool a parent's rules disable is hidden from its sub-agents too.
        specs.retain(|spec| {
            self.ceilings
                .iter()
                .all(|ceiling| !agent_permission::is_disabled(&spec.name, ceiling))
        });
        for spec in &mut specs {
            if let Some(description) = state.tools.get(&spec.name).and_then(|tool| {
                tool.description_for(&CallingAgent::new(&self.agent.name, &self.agent.permission))
            }) {
                spec.description = description;
            }
        }
        let tools = Arc::new(specs);
        let info = self.model.info();
        let worktree = state
            .worktree
            .clone()
            .unwrap_or_else(|| self.session.directory.clone());
        let system =
            state
                .prompts
                .assemble(&self.agent.system, info, &self.session.directory, &worktree);
        let options = provider_options(info, &self.agent.options, self.agent.variant.as_deref());
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
            // Let other sessions on this worker run between steps: a model,
            // store and tools that are always ready (a local server, the
            // memory store) would otherwise keep the thread for the whole
            // turn and starve every other session.
            if step > 1 {
                tokio::task::yield_now().await;
            }
            let mode = step_mode(step, limit);
            if mode == StepMode::Beyond {
                break StopReason::StepLimit;
            }
            if self.cancel.is_cancelled() {
                break StopReason::Cancelled;
            }
            let mut request = ModelRequest {
                system: system.clone(),
                messages: Arc::clone(model_messages),
                tools: Arc::clone(&tools),
                tool_choice: ToolChoice::Auto,
                temperature: self.agent.temperature,
                top_p: self.agent.top_p,
                options: options.clone(),
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
            emit_message(state, &message);

            let end = run_step(
                StepInput {
                    engine: state,
                    model: &self.model,
                    agent: self.agent,
                    session_id: &self.session.id,
                    directory: &self.session.directory,
                    ruleset: &self.ruleset,
                    ceilings: &self.ceilings,
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
            state.store.put_message(&message).await?;
            state.events.emit(|| Event::MessageCompleted {
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
                &state.config.compaction,
            );
            let exit = should_exit(&ExitState::of_message(&message));
            let error = message.error.clone();
            messages.push(message);

            match end {
                StepEnd::Cancelled => break StopReason::Cancelled,
                StepEnd::Blocked => break StopReason::Rejected,
                StepEnd::Denied(message) => break StopReason::Denied { message },
                StepEnd::StepLimit => break StopReason::StepLimit,
                StepEnd::Failed(error) => {
                    if let ModelError::ContextOverflow { .. } = error {
                        if !state.config.compaction.auto || compacted {
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
                    state.events.emit(|| Event::Error {
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
            // §11.4: a step whose usage fills the context compacts now, in
            // this turn, even when it was the final answer (the model then
            // continues from the summary, as opencode does).
            if overflow && !compacted && mode != StepMode::Last {
                match self
                    .compact(step, false, model_messages, &tools, &mut usage)
                    .await?
                {
                    Ok(()) => {
                        compacted = true;
                        continue;
                    }
                    Err(stop) => break stop,
                }
            }
            if exit || mode == StepMode::Last {
                break StopReason::Done {
                    finish: finish.unwrap_or(FinishReason::Unknown),
                };
            }
            if overflow {
                // Compacted and still full: a second compaction would loop.
                break StopReason::ContextOverflow;
            }
            compacted = false;
        };
        Ok(TurnResult {
            stop,
            messages,
            steps: step,
            usage,
        })
    }
}
