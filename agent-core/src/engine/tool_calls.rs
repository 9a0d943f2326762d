//! Tool execution for one step: the step's complete calls run
//! concurrently after the stream finished, each through the doom-loop
//! check, the registry and the tool; results (truncated per §7.1) are
//! recorded on the assistant message with events. Calls left without a
//! result are closed as §11.3 says.

use std::sync::{Arc, Mutex, MutexGuard};

use agent_permission::PermissionError;
use futures::FutureExt;
use serde_json::Value;

use super::doom_loop;
use super::state::EngineState;
use super::turn_context::TurnContext;
use crate::event::Event;
use crate::ids::now_ms;
use crate::message::{Message, Part, Role, Timing, ToolPart, ToolState, interrupted_state};
use crate::tool::{ToolError, ToolOutput};
use crate::tool_context::ToolContext;

/// Error text of a call refused because the step limit was reached.
pub const STEP_LIMIT_ERROR: &str =
    "Tool unavailable: the maximum number of steps for this turn was reached.";

/// How the calls of a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CallsEnd {
    /// Every call has a result.
    Finished,
    /// A permission was rejected (a tool's ask, or the doom-loop ask).
    Blocked,
    /// A rule denied the doom-loop ask (§11.2); the message says which.
    Denied(String),
    /// The prompt's token fired; open calls were closed.
    Cancelled,
}

fn lock(message: &Mutex<Message>) -> MutexGuard<'_, Message> {
    message.lock().unwrap_or_else(|e| e.into_inner())
}

/// Closes every unfinished call of `message` as interrupted, with events.
pub(super) fn close_open_calls(engine: &EngineState, session_id: &str, message: &mut Message) {
    close_calls(engine, session_id, message, false);
}

/// Closes unfinished calls (only those still pending when `pending_only`).
pub(super) fn close_calls(
    engine: &EngineState,
    session_id: &str,
    message: &mut Message,
    pending_only: bool,
) {
    let now = now_ms();
    for part in &mut message.parts {
        if let Part::Tool(tool) = part {
            if pending_only && !matches!(tool.state, ToolState::Pending { .. }) {
                continue;
            }
            if let Some(state) = interrupted_state(&tool.state, now) {
                tool.state = state;
                let part = part.clone();
                engine.events.emit(|| Event::PartUpdated {
                    session_id: session_id.to_string(),
                    message_id: message.id.clone(),
                    part,
                });
            }
        }
    }
}

fn set_state(
    engine: &EngineState,
    session_id: &str,
    message: &mut Message,
    index: usize,
    state: ToolState,
) {
    if let Part::Tool(tool) = &mut message.parts[index] {
        tool.state = state;
    }
    engine.events.emit(|| Event::PartUpdated {
        session_id: session_id.to_string(),
        message_id: message.id.clone(),
        part: message.parts[index].clone(),
    });
}

fn error_state(state: &ToolState, error: String) -> ToolState {
    let (input, metadata, start) = match state {
        ToolState::Running {
            input,
            metadata,
            time,
            ..
        } => (input.clone(), metadata.clone(), time.start),
        other => (
            other.input().clone(),
            Value::Object(Default::default()),
            now_ms(),
        ),
    };
    ToolState::Error {
        input,
        error,
        metadata,
        time: Timing {
            start,
            end: Some(now_ms()),
        },
    }
}

pub(super) fn refuse_calls(
    engine: &EngineState,
    session_id: &str,
    message: &mut Message,
    calls: &[usize],
) {
    for &index in calls {
        if let Part::Tool(tool) = &message.parts[index] {
            let state = error_state(&tool.state, STEP_LIMIT_ERROR.into());
            set_state(engine, session_id, message, index, state);
        }
    }
}

/// What happened to one call.
enum CallEnd {
    Done,
    Blocked,
    Denied(String),
}

/// Runs the step's calls concurrently and records their results.
pub(super) async fn execute_calls(
    ctx: &TurnContext<'_>,
    turn_calls: &[ToolPart],
    message: &mut Message,
    calls: &[usize],
) -> CallsEnd {
    // Doom-loop flags, decided in call order before anything runs.
    let mut doom = Vec::with_capacity(calls.len());
    if ctx.engine.config.doom_loop {
        for (k, &index) in calls.iter().enumerate() {
            let flagged = match &message.parts[index] {
                Part::Tool(current) => {
                    let this_step = calls[..=k]
                        .iter()
                        .filter_map(|&i| message.parts[i].as_tool());
                    let sequence = turn_calls.iter().chain(this_step);
                    doom_loop::check_turn(sequence, &current.tool, current.state.input())
                }
                _ => false,
            };
            doom.push(flagged);
        }
    } else {
        doom.resize(calls.len(), false);
    }

    let shared_message = Arc::new(Mutex::new(std::mem::replace(
        message,
        Message::new(ctx.session_id(), Role::Assistant),
    )));
    let futures = calls
        .iter()
        .zip(doom)
        .map(|(&index, doom)| run_call(ctx, Arc::clone(&shared_message), index, doom));
    let ends = futures::future::join_all(futures).await;
    let taken = std::mem::replace(
        &mut *lock(&shared_message),
        Message::new("", Role::Assistant),
    );
    *message = taken;

    if ctx.cancel.is_cancelled() {
        close_open_calls(ctx.engine, ctx.session_id(), message);
        return CallsEnd::Cancelled;
    }
    if ends.iter().any(|end| matches!(end, CallEnd::Blocked)) {
        return CallsEnd::Blocked;
    }
    match ends.into_iter().find_map(|end| match end {
        CallEnd::Denied(message) => Some(message),
        _ => None,
    }) {
        Some(message) => CallsEnd::Denied(message),
        None => CallsEnd::Finished,
    }
}

async fn run_call(
    ctx: &TurnContext<'_>,
    message: Arc<Mutex<Message>>,
    index: usize,
    doom: bool,
) -> CallEnd {
    let engine = ctx.engine;
    let session_id = ctx.session_id();
    let (message_id, call_id, name, args) = {
        let guard = lock(&message);
        let Some(tool) = guard.parts[index].as_tool() else {
            return CallEnd::Done;
        };
        if !matches!(tool.state, ToolState::Running { .. }) {
            return CallEnd::Done;
        }
        (
            guard.id.clone(),
            tool.call_id.clone(),
            tool.tool.clone(),
            tool.state.input().clone(),
        )
    };
    let finish = |result: Result<ToolOutput, ToolError>| {
        let mut guard = lock(&message);
        let Some(tool) = guard.parts[index].as_tool() else {
            return;
        };
        let state = match result {
            Ok(out) => {
                let (input_value, start) = match &tool.state {
                    ToolState::Running { input, time, .. } => (input.clone(), time.start),
                    other => (other.input().clone(), now_ms()),
                };
                ToolState::Completed {
                    input: input_value,
                    output: out.output,
                    title: out.title,
                    metadata: out.metadata,
                    time: Timing {
                        start,
                        end: Some(now_ms()),
                    },
                    compacted: false,
                }
            }
            Err(error) => error_state(&tool.state, error.to_string()),
        };
        set_state(engine, session_id, &mut guard, index, state);
    };

    if doom {
        let request = doom_loop::ask_request(session_id, &name, &args, &ctx.agent.permission)
            .tool(message_id.as_str(), call_id.as_str());
        let asked = tokio::select! {
            result = engine.permissions.ask(request) => result,
            () = ctx.cancel.cancelled() => return CallEnd::Done,
        };
        if let Err(error) = asked {
            // §11.2: a failed doom-loop ask ends the turn, whatever the
            // answer; a rule's denial is not the user saying stop.
            let end = match &error {
                PermissionError::Denied { .. } => CallEnd::Denied(error.to_string()),
                _ => CallEnd::Blocked,
            };
            finish(Err(ToolError::Permission(error)));
            return end;
        }
    }

    let Some(tool) = engine.tools.resolve(&name, &ctx.ruleset) else {
        let available: Vec<String> = engine
            .tools
            .visible(&ctx.ruleset)
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        finish(Err(ToolError::failed(format!(
            "Model tried to call unavailable tool '{name}'. Available tools: {}.",
            available.join(", ")
        ))));
        return CallEnd::Done;
    };

    let metadata_target = Arc::clone(&message);
    let events = engine.events.clone();
    let sid = session_id.to_string();
    let ctx = ToolContext::new(
        session_id,
        message_id.as_str(),
        call_id.as_str(),
        engine.permissions.clone(),
    )
    .with_agent(ctx.agent.name.as_str())
    .with_directories(ctx.directory().to_path_buf(), ctx.worktree.clone())
    .with_ruleset(Arc::clone(&ctx.ruleset))
    .with_ceilings(Arc::clone(&ctx.ceilings))
    .with_truncator(engine.config.truncator.clone())
    .with_cancel(ctx.cancel.child_token())
    .on_metadata(Arc::new(move |title, metadata| {
        let mut guard = lock(&metadata_target);
        let updated = match &mut guard.parts[index] {
            Part::Tool(ToolPart {
                state:
                    ToolState::Running {
                        title: current_title,
                        metadata: current,
                        ..
                    },
                ..
            }) => {
                if title.is_some() {
                    *current_title = title;
                }
                *current = metadata;
                true
            }
            _ => false,
        };
        if updated {
            events.emit(|| Event::PartUpdated {
                session_id: sid.clone(),
                message_id: guard.id.clone(),
                part: guard.parts[index].clone(),
            });
        }
    }));

    tracing::debug!(session_id = %session_id, tool = %name, call_id = %call_id, "running tool");
    // A tool that panics fails its own call, not the whole prompt: the
    // unwind is caught here and the call is closed with an error.
    let execution = std::panic::AssertUnwindSafe(tool.execute(args, &ctx))
        .catch_unwind()
        .map(|outcome| outcome.unwrap_or_else(|panic| Err(panicked(&name, &*panic))));
    tokio::pin!(execution);
    let result = tokio::select! {
        result = &mut execution => Some(result),
        () = ctx.cancel.cancelled() => {
            // Give the tool a moment to stop on its own (it sees its token),
            // as opencode waits 250 ms; then abandon it.
            tokio::time::timeout(engine.config.tool_grace, &mut execution).await.ok()
        }
    };
    let Some(result) = result else {
        // Closed as interrupted by the caller (close_open_calls).
        return CallEnd::Done;
    };
    if result.is_err() && ctx.cancel.is_cancelled() {
        // The turn was cancelled and the tool gave up because of it (it saw
        // its token, or its permission ask was withdrawn). That is an
        // interruption, not a failure or a user's rejection: leave the call
        // running so close_open_calls closes it as §11.3 says ("Tool
        // execution aborted", metadata.interrupted, partial output kept).
        return CallEnd::Done;
    }
    let stops = matches!(&result, Err(error) if error.stops_loop());
    let result = match result {
        Ok(mut out) if out.metadata.get("truncated").is_none() => {
            out.output = engine.config.truncator.apply(&name, out.output).await;
            Ok(out)
        }
        other => other,
    };
    finish(result);
    if stops {
        CallEnd::Blocked
    } else {
        CallEnd::Done
    }
}

/// The error a call gets when its tool panicked, with the panic's message
/// when it is a string.
fn panicked(tool: &str, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    ToolError::failed(format!(
        "The {tool} tool failed unexpectedly (it panicked: {detail})."
    ))
}
