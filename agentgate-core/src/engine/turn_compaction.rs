//! The compaction step of a turn (§14.2): the summary call under the
//! `compaction` agent and the continuation message (the plan itself is in
//! [`crate::compaction`]).

use std::sync::Arc;

use super::outcome::{PromptError, StopReason, error_of};
use super::processor::{StepEnd, StepInput, run_step};
use super::reminders::model_history;
use super::state::{complete_message, emit_message};
use super::turn_context::TurnContext;
use crate::agent_spec::AgentSpec;
use crate::compaction::{self, CONTINUE_PROMPT, preserve_budget};
use crate::event::Event;
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Role};
use crate::model::{History, ModelMessage, ToolChoice, share_messages};
use crate::usage::Usage;

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// The context overflowed: the last real user message is replayed
    /// after the summary.
    Overflow,
    /// A step's usage filled the context: the model continues from
    /// [`CONTINUE_PROMPT`].
    Full,
    /// The user asked for it ([`Engine::compact`](super::facade::Engine)):
    /// no continuation message, as opencode's manual compaction adds none.
    Manual,
}

/// Runs one compaction (see [`crate::compaction`]): the summary call, then
/// the continuation message (the last real user message after an
/// overflow, [`CONTINUE_PROMPT`] after a full step, none when asked for by
/// hand), and reloads the history sent to the model. `Ok(Err(stop))` when
/// the turn must end.
pub(super) async fn compact(
    ctx: &TurnContext<'_>,
    step: u32,
    trigger: Trigger,
    model_messages: &mut History,
    usage: &mut Usage,
) -> Result<Result<(), StopReason>, PromptError> {
    let engine = ctx.engine;
    let session_id = ctx.session_id();
    let config = &engine.config.compaction;
    let history = engine.store.messages(session_id).await?;
    let budget = preserve_budget(&ctx.model.info().limits, config);
    let replay = trigger == Trigger::Overflow;
    let Some(plan) = compaction::plan(&history, budget, config.tail_turns, replay) else {
        return Ok(Err(nothing_to_summarise(trigger, config.tail_turns)));
    };
    drop(history);

    let mut request_message = Message::new(session_id, Role::User);
    request_message.agent = ctx.agent.name.clone();
    request_message.parts.push(Part::Compaction {
        id: ascending("prt"),
        auto: trigger != Trigger::Manual,
        overflow: replay,
        kept: plan.kept,
    });
    request_message.time.end = Some(request_message.time.start);
    engine.store.put_message(&request_message).await?;
    emit_message(engine, &request_message);

    if let Err(stop) = summarise(ctx, step, plan.request, usage).await? {
        return Ok(Err(stop));
    }
    if trigger != Trigger::Manual {
        continue_after(ctx, plan.replay).await?;
    }
    let history = engine.store.messages(session_id).await?;
    *model_messages = share_messages(model_history(&ctx.agent.name, &history));
    Ok(Ok(()))
}

/// Why a compaction with nothing to summarise stops: a full context
/// cannot be helped, a compaction asked for by hand is merely early.
fn nothing_to_summarise(trigger: Trigger, tail_turns: u32) -> StopReason {
    if trigger != Trigger::Manual {
        return StopReason::ContextOverflow;
    }
    StopReason::Error {
        error: MessageError {
            name: "compaction".into(),
            message: format!(
                "nothing to summarise yet: the last {tail_turns} user turns are kept verbatim \
                 (compaction.tail_turns); compact once the session is longer"
            ),
        },
    }
}

/// The summary call over `history`, stored and announced; `Ok(Err(stop))`
/// when it failed and the turn must end.
async fn summarise(
    ctx: &TurnContext<'_>,
    step: u32,
    history: Vec<ModelMessage>,
    usage: &mut Usage,
) -> Result<Result<(), StopReason>, PromptError> {
    let engine = ctx.engine;
    let agent = engine
        .agents
        .get(COMPACTION_AGENT)
        .cloned()
        .unwrap_or_else(|| Arc::new(AgentSpec::new(COMPACTION_AGENT)));
    let summary = ctx.for_summary(&agent);
    let mut request = summary.request(share_messages(history));
    request.tool_choice = ToolChoice::None;
    let mut message = Message::new(ctx.session_id(), Role::Assistant);
    message.agent = agent.name.clone();
    message.model = Some(crate::model::ModelRef {
        provider_id: summary.model.info().provider.clone(),
        model_id: summary.model.info().id.clone(),
    });
    message.summary = true;
    message.parts.push(Part::StepStart {
        id: ascending("prt"),
    });
    emit_message(engine, &message);
    let input = StepInput {
        ctx: &summary,
        request,
        last_step: true,
        turn_calls: &[],
        step,
    };
    let end = run_step(input, &mut message).await;
    message.time.end = Some(now_ms());
    let outcome = summary_outcome(end, &mut message);
    usage.accumulate(&message.usage);
    complete_message(engine, &message).await?;
    if let Err(StopReason::Error { error }) = &outcome {
        engine.events.emit(|| Event::Error {
            session_id: ctx.session.id.clone(),
            message_id: Some(message.id.clone()),
            error: error.clone(),
        });
    }
    Ok(outcome)
}

/// How a summary step ended, its error recorded on `message`.
fn summary_outcome(end: StepEnd, message: &mut Message) -> Result<(), StopReason> {
    match end {
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
    }
}

/// Stores the user message the model continues from after the summary:
/// the replayed parts, else [`CONTINUE_PROMPT`].
async fn continue_after(
    ctx: &TurnContext<'_>,
    replay: Option<Vec<Part>>,
) -> Result<(), PromptError> {
    let mut next = Message::new(ctx.session_id(), Role::User);
    next.agent = ctx.agent.name.clone();
    next.parts = match replay {
        Some(parts) if !parts.is_empty() => parts,
        _ => vec![Part::Text {
            id: ascending("prt"),
            text: CONTINUE_PROMPT.into(),
            synthetic: true,
            provider_metadata: None,
        }],
    };
    next.time.end = Some(next.time.start);
    ctx.engine.store.put_message(&next).await?;
    emit_message(ctx.engine, &next);
    Ok(())
}

/// The name of the agent whose rules and prompt summary calls use.
pub const COMPACTION_AGENT: &str = "compaction";
