//! The turn driver (§12): one prompt run through as many model calls
//! (steps) as the model needs, until it answers without calling tools, a
//! permission is rejected, the step limit is reached, the prompt is
//! cancelled, or the model fails for good. Compaction between steps is in
//! `turn_compaction.rs`.
//!
//! Each round is *prepare* (the step's request and message), *step* (the
//! model call and its tools, in `processor.rs`), then *decide* (stop,
//! compact, or take another step).

use std::sync::Arc;

use tracing::Instrument;

use super::doom_loop::DOOM_LOOP_THRESHOLD;
use super::outcome::{PromptError, StopReason, TurnResult, error_of};
use super::processor::{StepEnd, StepInput, run_step};
use super::state::{complete_message, emit_message};
use super::step_patch::add_step_patch;
use super::trace_spans;
use super::turn_compaction::{Trigger, compact};
use super::turn_context::TurnContext;
use super::turn_rules::{ExitState, MAX_STEPS_PROMPT, StepMode, should_exit, step_mode};
use crate::compaction::is_overflow;
use crate::error::ModelError;
use crate::event::Event;
use crate::ids::{ascending, now_ms};
use crate::message::{
    Message, MessageError, Part, Role, ToolPart, ToolState, append_model_messages,
};
use crate::model::{History, ModelMessage, ModelRequest, ToolChoice};
use crate::stream::FinishReason;
use crate::usage::Usage;

/// What a turn has done so far.
struct Progress {
    /// The history as the model sees it, grown by every step.
    model_messages: History,
    /// The turn's assistant messages.
    messages: Vec<Message>,
    /// The turn's last tool calls, without their outputs: all the
    /// doom-loop check reads (see [`remember_calls`]).
    calls: Vec<ToolPart>,
    usage: Usage,
    /// Steps begun (the one beyond the limit included).
    step: u32,
    /// A compaction ran and no step has succeeded since (a second one
    /// would loop).
    compacted: bool,
}

/// What the driver does next.
enum Next {
    /// Take another step.
    Step,
    /// Compact the history (`replay`: the last user message again).
    Compact { replay: bool },
    /// End the turn.
    Stop(StopReason),
}

/// What a finished step leaves for the decision.
struct StepFacts {
    end: StepEnd,
    mode: StepMode,
    finish: Option<FinishReason>,
    /// The step's usage fills the context.
    overflow: bool,
    /// The model answered without calling tools.
    exit: bool,
}

/// Runs the turn of `ctx` over `model_messages` (`full`: the context was
/// already full when the prompt started), inside its `invoke_agent` span.
pub(super) async fn run_turn(
    ctx: &TurnContext<'_>,
    full: bool,
    model_messages: History,
) -> Result<TurnResult, PromptError> {
    let info = ctx.model.info();
    let span =
        trace_spans::invoke_agent(&ctx.agent.name, ctx.session_id(), &info.provider, &info.id);
    let result = drive_turn(ctx, full, model_messages)
        .instrument(span.clone())
        .await;
    if let Ok(result) = &result {
        let error = match &result.stop {
            StopReason::Error { error } => Some(error),
            _ => None,
        };
        trace_spans::turn_ended(&span, &result.usage, error);
    }
    result
}

/// The turn itself: prepare, step, decide, until it stops.
async fn drive_turn(
    ctx: &TurnContext<'_>,
    full: bool,
    model_messages: History,
) -> Result<TurnResult, PromptError> {
    let mut turn = Progress {
        model_messages,
        messages: Vec::new(),
        calls: Vec::new(),
        usage: Usage::default(),
        step: 0,
        compacted: false,
    };
    let mut next = if full {
        Next::Compact { replay: true }
    } else {
        Next::Step
    };
    let stop = loop {
        next = match next {
            Next::Stop(stop) => break stop,
            Next::Compact { replay } => {
                let (step, history, usage) = (turn.step, &mut turn.model_messages, &mut turn.usage);
                let trigger = if replay {
                    Trigger::Overflow
                } else {
                    Trigger::Full
                };
                match compact(ctx, step, trigger, history, usage).await? {
                    Ok(()) => {
                        turn.compacted = true;
                        Next::Step
                    }
                    Err(stop) => Next::Stop(stop),
                }
            }
            Next::Step => match begin_step(ctx, &mut turn).await {
                Err(stop) => Next::Stop(stop),
                Ok(mode) => {
                    let facts = step(ctx, &mut turn, mode).await?;
                    decide(ctx, &mut turn, facts)
                }
            },
        };
    };
    Ok(TurnResult {
        stop,
        messages: turn.messages,
        steps: turn.step,
        usage: turn.usage,
    })
}

/// Counts a new step and says what kind it is, or why none may run.
async fn begin_step(ctx: &TurnContext<'_>, turn: &mut Progress) -> Result<StepMode, StopReason> {
    turn.step += 1;
    // Let other sessions on this worker run between steps: a model, store
    // and tools that are always ready (a local server, the memory store)
    // would otherwise keep the thread for the whole turn and starve every
    // other session.
    if turn.step > 1 {
        tokio::task::yield_now().await;
    }
    let mode = step_mode(turn.step, ctx.step_limit);
    if mode == StepMode::Beyond {
        return Err(StopReason::StepLimit);
    }
    if ctx.cancel.is_cancelled() {
        return Err(StopReason::Cancelled);
    }
    Ok(mode)
}

/// The request of a step in `mode`.
fn prepare(ctx: &TurnContext<'_>, turn: &Progress, mode: StepMode) -> ModelRequest {
    let mut request = ctx.request(Arc::clone(&turn.model_messages));
    if mode == StepMode::Last {
        // Hard limit: tools stay declared (some providers reject a history
        // with tool calls otherwise) but may not be called, and any call is
        // refused.
        request.tool_choice = ToolChoice::None;
        Arc::make_mut(&mut request.messages).push(Arc::new(ModelMessage::user(MAX_STEPS_PROMPT)));
    }
    request
}

/// Runs one step and records its message.
async fn step(
    ctx: &TurnContext<'_>,
    turn: &mut Progress,
    mode: StepMode,
) -> Result<StepFacts, PromptError> {
    let request = prepare(ctx, turn, mode);
    let mut message = Message::new(ctx.session_id(), Role::Assistant);
    message.agent = ctx.agent.name.clone();
    message.model = Some(crate::model::ModelRef {
        provider_id: ctx.model.info().provider.clone(),
        model_id: ctx.model.info().id.clone(),
    });
    message.parts.push(Part::StepStart {
        id: ascending("prt"),
    });
    emit_message(ctx.engine, &message);

    let input = StepInput {
        ctx,
        request,
        last_step: mode == StepMode::Last,
        turn_calls: &turn.calls,
        step: turn.step,
    };
    let end = run_step(input, &mut message).await;
    add_step_patch(ctx.engine, &ctx.worktree, &mut message).await;

    message.time.end = Some(now_ms());
    if end == StepEnd::Cancelled && message.error.is_none() {
        message.error = Some(MessageError {
            name: "aborted".into(),
            message: "The prompt was cancelled.".into(),
        });
    }
    turn.usage.accumulate(&message.usage);
    complete_message(ctx.engine, &message).await?;
    let mut added = Vec::new();
    append_model_messages(&message, &mut added);
    Arc::make_mut(&mut turn.model_messages).extend(added.into_iter().map(Arc::new));
    remember_calls(&mut turn.calls, &message);
    let engine = ctx.engine;
    let facts = StepFacts {
        end,
        mode,
        finish: message.finish,
        overflow: is_overflow(
            &message.usage,
            &ctx.model.info().limits,
            &engine.config.compaction,
        ),
        exit: should_exit(&ExitState::of_message(&message)),
    };
    turn.messages.push(message);
    Ok(facts)
}

/// Adds the tool calls of `message` to the turn's `calls`, keeping only
/// what the doom-loop check reads: the last [`DOOM_LOOP_THRESHOLD`] calls
/// (it looks no further back), each with its tool, input and status but
/// not its output or metadata, so the turn does not hold a second copy of
/// every output of its history.
fn remember_calls(calls: &mut Vec<ToolPart>, message: &Message) {
    calls.extend(message.tool_parts().map(|call| ToolPart {
        id: call.id.clone(),
        call_id: call.call_id.clone(),
        tool: call.tool.clone(),
        state: without_output(&call.state),
        provider_metadata: None,
    }));
    let old = calls.len().saturating_sub(DOOM_LOOP_THRESHOLD);
    calls.drain(..old);
}

/// `state` with its input and status only.
fn without_output(state: &ToolState) -> ToolState {
    let input = state.input().clone();
    match state {
        ToolState::Pending { .. } => ToolState::Pending {
            input,
            raw: String::new(),
        },
        ToolState::Running { time, .. } => ToolState::Running {
            input,
            title: None,
            metadata: serde_json::Value::Null,
            time: *time,
        },
        ToolState::Completed { time, .. } => ToolState::Completed {
            input,
            output: String::new(),
            title: String::new(),
            metadata: serde_json::Value::Null,
            time: *time,
            compacted: false,
            attachments: Vec::new(),
        },
        ToolState::Error { time, .. } => ToolState::Error {
            input,
            error: String::new(),
            metadata: serde_json::Value::Null,
            time: *time,
        },
    }
}

/// After a step: stop, compact, or take another step.
fn decide(ctx: &TurnContext<'_>, turn: &mut Progress, facts: StepFacts) -> Next {
    let config = &ctx.engine.config.compaction;
    match facts.end {
        StepEnd::Cancelled => return Next::Stop(StopReason::Cancelled),
        StepEnd::Blocked => return Next::Stop(StopReason::Rejected),
        StepEnd::Denied(message) => return Next::Stop(StopReason::Denied { message }),
        StepEnd::StepLimit => return Next::Stop(StopReason::StepLimit),
        StepEnd::Failed(ModelError::ContextOverflow { .. }) => {
            if !config.auto || turn.compacted {
                return Next::Stop(StopReason::ContextOverflow);
            }
            return Next::Compact { replay: true };
        }
        StepEnd::Failed(error) => {
            let error = error_of(error);
            ctx.engine.events.emit(|| Event::Error {
                session_id: ctx.session.id.clone(),
                message_id: turn.messages.last().map(|m| m.id.clone()),
                error: error.clone(),
            });
            return Next::Stop(StopReason::Error { error });
        }
        StepEnd::Finished => {}
    }
    if facts.finish == Some(FinishReason::ContentFilter) {
        return Next::Stop(StopReason::ContentFilter);
    }
    // §11.4: a step whose usage fills the context compacts now, in this
    // turn, even when it was the final answer (the model then continues
    // from the summary, as opencode does).
    if facts.overflow && !turn.compacted && facts.mode != StepMode::Last {
        return Next::Compact { replay: false };
    }
    if facts.exit || facts.mode == StepMode::Last {
        return Next::Stop(StopReason::Done {
            finish: facts.finish.unwrap_or(FinishReason::Unknown),
        });
    }
    if facts.overflow {
        // Compacted and still full: a second compaction would loop.
        return Next::Stop(StopReason::ContextOverflow);
    }
    turn.compacted = false;
    Next::Step
}
