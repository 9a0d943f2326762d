//! The compaction step of a turn (§14.2): the summary call under the
//! `compaction` agent and the continuation message (the plan itself is in
//! [`crate::compaction`]).

use std::sync::Arc;

use super::outcome::{PromptError, StopReason, error_of};
use super::processor::{StepEnd, StepInput, run_step};
use super::state::emit_message;
use super::turn::Turn;
use crate::agent_spec::AgentSpec;
use crate::compaction::{self, CONTINUE_PROMPT, history_for_model, preserve_budget};
use crate::event::Event;
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Role};
use crate::model::{ModelMessage, ModelRequest, ToolChoice, ToolSpec};
use crate::usage::Usage;

impl Turn<'_> {
    /// Runs one compaction (see [`crate::compaction`]): the summary call,
    /// then the continuation message (`replay`: the last real user
    /// message; else [`CONTINUE_PROMPT`]), and reloads the history sent to
    /// the model. `Ok(Err(stop))` when the turn must end.
    pub(super) async fn compact(
        &self,
        step: u32,
        replay: bool,
        model_messages: &mut Arc<Vec<ModelMessage>>,
        tools: &Arc<Vec<ToolSpec>>,
        usage: &mut Usage,
    ) -> Result<Result<(), StopReason>, PromptError> {
        let state = self.state;
        let session_id = self.session.id.as_str();
        let config = &state.config.compaction;
        let history = state.store.messages(session_id).await?;
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
        state.store.put_message(&request_message).await?;
        emit_message(state, &request_message);

        let agent = state
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
        emit_message(state, &message);
        let end = run_step(
            StepInput {
                engine: state,
                model: &self.model,
                agent: &agent,
                session_id,
                directory: &self.session.directory,
                ruleset: &ruleset,
                ceilings: &Arc::new(Vec::new()),
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
        state.store.put_message(&message).await?;
        state.events.emit(|| Event::MessageCompleted {
            session_id: message.session_id.clone(),
            message_id: message.id.clone(),
            finish: message.finish,
            error: message.error.clone(),
        });
        if let Err(stop) = outcome {
            if let StopReason::Error { error } = &stop {
                state.events.emit(|| Event::Error {
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
        state.store.put_message(&next).await?;
        emit_message(state, &next);

        let history = state.store.messages(session_id).await?;
        *model_messages = Arc::new(history_for_model(&history));
        Ok(Ok(()))
    }
}

/// The name of the agent whose rules and prompt summary calls use.
pub const COMPACTION_AGENT: &str = "compaction";
