//! Tool execution for one step: the step's complete calls run
//! concurrently after the stream finished, each through the doom-loop
//! check, the registry and the tool; results (truncated per §7.1) are
//! recorded on the assistant message with events. Calls left without a
//! result are closed as §11.3 says.

use std::sync::Arc;

use agentgate_permission::{Action, AskRequest, PermissionError, PermissionEvent, Rule, Ruleset};
use futures::FutureExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::doom_loop;
use super::hook_calls::{run_hooks, tool_response, with_context};
use super::state::EngineState;
use super::trace_spans;
use super::turn_context::TurnContext;
use crate::checkpoint::{ChangeScope, ToolEffects};
use crate::event::Event;
use crate::hooks::{HookDecision, HookEvent, HookEventName};
use crate::ids::now_ms;
use crate::message::{Message, Part, Timing, ToolPart, ToolState, interrupted_state};
use crate::tool::{Tool, ToolError, ToolOutput};
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
    emit_part(engine, session_id, message, index);
}

/// Announces the part at `index` as updated.
fn emit_part(engine: &EngineState, session_id: &str, message: &Message, index: usize) {
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

/// A call as its task sees it: a copy of what it needs from the message,
/// so no task reads or writes the message itself.
struct CallSpec {
    call_id: String,
    name: String,
    args: Value,
    /// The doom-loop check flagged it: ask before running.
    doom: bool,
}

/// A change a running call reports to its step, which alone writes the
/// assistant message (and announces the change).
enum CallUpdate {
    /// The tool's live title and metadata while it runs.
    Metadata {
        call_id: String,
        title: Option<String>,
        metadata: Value,
    },
    /// The call's result.
    Finished {
        call_id: String,
        result: Result<ToolOutput, ToolError>,
    },
}

/// Where a call reports its changes.
type Updates = mpsc::UnboundedSender<CallUpdate>;

/// Runs the step's calls concurrently and records their results.
pub(super) async fn execute_calls(
    ctx: &TurnContext<'_>,
    turn_calls: &[ToolPart],
    message: &mut Message,
    calls: &[usize],
) -> CallsEnd {
    let doom = doom_flags(ctx, turn_calls, message, calls);
    let specs: Vec<CallSpec> = calls
        .iter()
        .zip(doom)
        .filter_map(|(&index, doom)| call_spec(message, index, doom))
        .collect();
    let (updates, mut received) = mpsc::unbounded_channel();
    // Subscribed before any call runs, so no ask of this step is missed.
    let asks = ctx.engine.permissions.subscribe();
    let message_id = message.id.clone();
    let running = futures::future::join_all(
        specs
            .into_iter()
            .map(|call| run_call(ctx, &message_id, call, updates.clone())),
    );
    drop(updates);
    let ends = record_while(ctx, message, (&mut received, asks), running).await;

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

/// Doom-loop flags of `calls`, decided in call order before anything runs.
fn doom_flags(
    ctx: &TurnContext<'_>,
    turn_calls: &[ToolPart],
    message: &Message,
    calls: &[usize],
) -> Vec<bool> {
    if !ctx.engine.config.doom_loop {
        return vec![false; calls.len()];
    }
    calls
        .iter()
        .enumerate()
        .map(|(k, &index)| match &message.parts[index] {
            Part::Tool(current) => {
                let this_step = calls[..=k]
                    .iter()
                    .filter_map(|&i| message.parts[i].as_tool());
                let sequence = turn_calls.iter().chain(this_step);
                doom_loop::check_turn(sequence, &current.tool, current.state.input())
            }
            _ => false,
        })
        .collect()
}

/// The call at `index`, if it is a tool call ready to run.
fn call_spec(message: &Message, index: usize, doom: bool) -> Option<CallSpec> {
    let tool = message.parts.get(index)?.as_tool()?;
    if !matches!(tool.state, ToolState::Running { .. }) {
        return None;
    }
    Some(CallSpec {
        call_id: tool.call_id.clone(),
        name: tool.tool.clone(),
        args: tool.state.input().clone(),
        doom,
    })
}

/// Drives `running` (the step's calls) to its end while writing every
/// change they report into `message`, in the order they reported them.
/// When the gate asks about one of them, the message is stored as it is
/// then: the ask is a durable point the turn can be resumed from
/// ([`Engine::resume_ask`](super::Engine::resume_ask)), by this process or
/// another one after a crash.
async fn record_while<T>(
    ctx: &TurnContext<'_>,
    message: &mut Message,
    (received, mut asks): (
        &mut mpsc::UnboundedReceiver<CallUpdate>,
        tokio::sync::broadcast::Receiver<PermissionEvent>,
    ),
    running: impl Future<Output = T>,
) -> T {
    let mut running = std::pin::pin!(running);
    let mut asking = true;
    let out = loop {
        tokio::select! {
            biased;
            Some(update) = received.recv() => record(ctx, message, update),
            event = asks.recv(), if asking => match event {
                Ok(PermissionEvent::Asked(request)) if asks_about(&request, message) => {
                    if let Err(error) = ctx.engine.store.put_message(message).await {
                        tracing::warn!(session_id = %message.session_id, %error, "the message of an asked call could not be stored; the ask will not survive a restart");
                    }
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => asking = false,
            },
            out = &mut running => break out,
        }
    };
    // Changes reported as the last calls ended.
    while let Ok(update) = received.try_recv() {
        record(ctx, message, update);
    }
    out
}

/// Whether `request` asks about a call of `message`.
fn asks_about(request: &agentgate_permission::PermissionRequest, message: &Message) -> bool {
    request
        .tool
        .as_ref()
        .is_some_and(|tool| tool.message_id == message.id)
}

/// Writes one reported change into `message`, with its event.
fn record(ctx: &TurnContext<'_>, message: &mut Message, update: CallUpdate) {
    let call_id = match &update {
        CallUpdate::Metadata { call_id, .. } | CallUpdate::Finished { call_id, .. } => call_id,
    };
    let Some(index) = message
        .parts
        .iter()
        .position(|part| part.as_tool().is_some_and(|tool| &tool.call_id == call_id))
    else {
        return;
    };
    match update {
        CallUpdate::Metadata {
            title, metadata, ..
        } => {
            let Part::Tool(ToolPart {
                state:
                    ToolState::Running {
                        title: current_title,
                        metadata: current,
                        ..
                    },
                ..
            }) = &mut message.parts[index]
            else {
                return;
            };
            if title.is_some() {
                *current_title = title;
            }
            *current = metadata;
            emit_part(ctx.engine, ctx.session_id(), message, index);
        }
        CallUpdate::Finished { result, .. } => {
            let Part::Tool(tool) = &message.parts[index] else {
                return;
            };
            let state = finished_state(&tool.state, result);
            set_state(ctx.engine, ctx.session_id(), message, index, state);
        }
    }
}

/// The state of a call that ended with `result`.
fn finished_state(state: &ToolState, result: Result<ToolOutput, ToolError>) -> ToolState {
    match result {
        Ok(out) => {
            let (input, start) = match state {
                ToolState::Running { input, time, .. } => (input.clone(), time.start),
                other => (other.input().clone(), now_ms()),
            };
            // The output is kept for the rest of the session (transcript,
            // history, store): without the slack of however it was built.
            let mut output = out.output;
            output.shrink_to_fit();
            ToolState::Completed {
                input,
                output,
                title: out.title,
                metadata: out.metadata,
                time: Timing {
                    start,
                    end: Some(now_ms()),
                },
                compacted: false,
                attachments: out.attachments,
            }
        }
        Err(error) => error_state(state, error.to_string()),
    }
}

/// Runs one call inside its `execute_tool` span.
async fn run_call(
    ctx: &TurnContext<'_>,
    message_id: &str,
    call: CallSpec,
    updates: Updates,
) -> CallEnd {
    let span = trace_spans::execute_tool(&call.name, &call.call_id);
    run_call_traced(ctx, message_id, call, updates)
        .instrument(span)
        .await
}

/// Runs one call and reports its result on `updates` (and on its span).
async fn run_call_traced(
    ctx: &TurnContext<'_>,
    message_id: &str,
    call: CallSpec,
    updates: Updates,
) -> CallEnd {
    let call_id = call.call_id.clone();
    let report = |result: Result<ToolOutput, ToolError>| {
        trace_spans::tool_ended(&result);
        // The step ends only after every call did, so it is still
        // listening; a failed send would mean the step is gone.
        let _ = updates.send(CallUpdate::Finished {
            call_id: call_id.clone(),
            result,
        });
    };
    if call.doom
        && let Some(end) = ask_doom_loop(ctx, message_id, &call, &report).await
    {
        return end;
    }
    let engine = ctx.engine;
    let Some(tool) = engine.tools.resolve(&call.name, &ctx.ruleset) else {
        let available: Vec<String> = engine
            .tools
            .visible(&ctx.ruleset)
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        report(Err(ToolError::failed(format!(
            "Model tried to call unavailable tool '{}'. Available tools: {}.",
            call.name,
            available.join(", ")
        ))));
        return CallEnd::Done;
    };
    if let Some(end) = pre_tool_hooks(ctx, message_id, &call, &report).await {
        return end;
    }
    let tool_ctx = tool_context(ctx, message_id, &call_id, updates.clone());
    let CallSpec { name, args, .. } = call;
    let hook_input = (!engine.hooks.is_empty()).then(|| args.clone());
    tracing::debug!(session_id = %ctx.session_id(), tool = %name, call_id = %call_id, "running tool");
    let Some(result) = execute(ctx, &*tool, &name, args, &tool_ctx).await else {
        // Cancelled: closed as interrupted by the step (close_open_calls).
        return CallEnd::Done;
    };
    let stops = matches!(&result, Err(error) if error.stops_loop());
    let result = match result {
        Ok(mut out) if out.metadata.get("truncated").is_none() => {
            out.output = engine.config.truncator.apply(&name, out.output).await;
            Ok(out)
        }
        other => other,
    };
    let result = match (result, hook_input) {
        (Ok(out), Some(input)) => Ok(post_tool_hooks(ctx, &name, input, &call_id, out).await),
        (other, _) => other,
    };
    report(result);
    if stops {
        CallEnd::Blocked
    } else {
        CallEnd::Done
    }
}

/// The `PreToolUse` hooks of a call: `None` when it may run (its own
/// permission asks still to come), else how it ended (its error
/// reported). A hook can only make the call stricter: a denial (or a hook
/// that failed) refuses it, an `ask` asks the user under the `hook`
/// permission whatever the rules allow (a rule denying `hook` denies),
/// and anything else leaves the decision to the rules.
async fn pre_tool_hooks(
    ctx: &TurnContext<'_>,
    message_id: &str,
    call: &CallSpec,
    report: &impl Fn(Result<ToolOutput, ToolError>),
) -> Option<CallEnd> {
    let engine = ctx.engine;
    if engine.hooks.is_empty() {
        return None;
    }
    let event = HookEvent::new(
        HookEventName::PreToolUse,
        ctx.session_id(),
        ctx.directory(),
        ctx.agent.name.as_str(),
    )
    .with_tool(call.name.as_str(), call.args.clone(), call.call_id.as_str());
    let combined = tokio::select! {
        combined = run_hooks(engine, &engine.hooks, &event) => combined,
        () = ctx.cancel.cancelled() => return Some(CallEnd::Done),
    };
    match combined.decision {
        HookDecision::Continue => None,
        HookDecision::Deny => {
            report(Err(ToolError::failed(format!(
                "A hook refused this call, so it did not run: {}",
                combined.reason()
            ))));
            Some(CallEnd::Done)
        }
        HookDecision::Ask => {
            let mut ceilings = (*ctx.ceilings).clone();
            ceilings.push(Ruleset::from(vec![Rule::new("hook", "*", Action::Ask)]));
            let request = AskRequest::new(ctx.session_id(), "hook", [call.name.as_str()])
                .metadata(serde_json::json!({
                    "tool": call.name,
                    "input": call.args,
                    "reason": combined.reason(),
                }))
                .ruleset((*ctx.ruleset).clone())
                .ceilings(ceilings)
                .tool(message_id, call.call_id.as_str());
            let asked = tokio::select! {
                result = engine.permissions.ask(request) => result,
                () = ctx.cancel.cancelled() => return Some(CallEnd::Done),
            };
            let error = asked.err()?;
            let error = ToolError::Permission(error);
            let stops = error.stops_loop();
            report(Err(error));
            Some(if stops {
                CallEnd::Blocked
            } else {
                CallEnd::Done
            })
        }
    }
}

/// `out` with what the `PostToolUse` hooks add for the model.
async fn post_tool_hooks(
    ctx: &TurnContext<'_>,
    name: &str,
    input: Value,
    call_id: &str,
    mut out: ToolOutput,
) -> ToolOutput {
    let mut event = HookEvent::new(
        HookEventName::PostToolUse,
        ctx.session_id(),
        ctx.directory(),
        ctx.agent.name.as_str(),
    )
    .with_tool(name, input, call_id);
    event.tool_response = Some(tool_response(&out.title, &out.output, &out.metadata));
    let combined = run_hooks(ctx.engine, &ctx.engine.hooks, &event).await;
    // A `block` after the fact cannot undo the call: its reason is
    // context for the model, as Claude Code gives it.
    let mut context = combined.reasons;
    context.extend(combined.context);
    out.output = with_context(out.output, &context);
    out
}

/// The doom-loop ask of a flagged call: `None` when the call may run,
/// else how it ended (its error reported).
async fn ask_doom_loop(
    ctx: &TurnContext<'_>,
    message_id: &str,
    call: &CallSpec,
    report: &impl Fn(Result<ToolOutput, ToolError>),
) -> Option<CallEnd> {
    let request = doom_loop::ask_request(
        ctx.session_id(),
        &call.name,
        &call.args,
        &ctx.agent.permission,
    )
    .tool(message_id, call.call_id.as_str());
    let asked = tokio::select! {
        result = ctx.engine.permissions.ask(request) => result,
        () = ctx.cancel.cancelled() => return Some(CallEnd::Done),
    };
    let error = asked.err()?;
    // §11.2: a failed doom-loop ask ends the turn, whatever the answer; a
    // rule's denial is not the user saying stop.
    let end = match &error {
        PermissionError::Denied { .. } => CallEnd::Denied(error.to_string()),
        _ => CallEnd::Blocked,
    };
    report(Err(ToolError::Permission(error)));
    Some(end)
}

/// The context a call's tool runs with; its metadata goes to `updates`.
fn tool_context(
    ctx: &TurnContext<'_>,
    message_id: &str,
    call_id: &str,
    updates: Updates,
) -> ToolContext {
    let engine = ctx.engine;
    let reported_id = call_id.to_string();
    let tool_ctx = ToolContext::new(
        ctx.session_id(),
        message_id,
        call_id,
        engine.permissions.clone(),
    )
    .with_agent(ctx.agent.name.as_str())
    .with_directories(ctx.directory().to_path_buf(), ctx.worktree.clone())
    .with_ruleset(Arc::clone(&ctx.ruleset))
    .with_ceilings(Arc::clone(&ctx.ceilings))
    .with_truncator(engine.config.truncator.clone())
    .with_ask_deadline(engine.config.ask_deadline)
    .with_images(ctx.model.info().capabilities.images)
    .with_cancel(ctx.cancel.child_token())
    .on_metadata(Arc::new(move |title, metadata| {
        // Metadata after the step stopped listening is of a call already
        // closed: nothing to update.
        let _ = updates.send(CallUpdate::Metadata {
            call_id: reported_id.clone(),
            title,
            metadata,
        });
    }));
    match &engine.checkpoints {
        Some(checkpoints) => tool_ctx.with_checkpoints(Arc::clone(checkpoints)),
        None => tool_ctx,
    }
}

/// Runs the tool; `None` when the turn was cancelled and the call is left
/// for the step to close as interrupted.
async fn execute(
    ctx: &TurnContext<'_>,
    tool: &dyn Tool,
    name: &str,
    args: Value,
    tool_ctx: &ToolContext,
) -> Option<Result<ToolOutput, ToolError>> {
    // A tool that panics fails its own call, not the whole prompt: the
    // unwind is caught here and the call is closed with an error.
    let execution = std::panic::AssertUnwindSafe(checkpointed(tool, args, tool_ctx))
        .catch_unwind()
        .map(|outcome| outcome.unwrap_or_else(|panic| Err(panicked(name, &*panic))));
    tokio::pin!(execution);
    let result = tokio::select! {
        result = &mut execution => Some(result),
        () = tool_ctx.cancel.cancelled() => {
            // Give the tool a moment to stop on its own (it sees its token),
            // as opencode waits 250 ms; then abandon it.
            tokio::time::timeout(ctx.engine.config.tool_grace, &mut execution).await.ok()
        }
    };
    let result = result?;
    if result.is_err() && tool_ctx.cancel.is_cancelled() {
        // The turn was cancelled and the tool gave up because of it (it saw
        // its token, or its permission ask was withdrawn). That is an
        // interruption, not a failure or a user's rejection: leave the call
        // running so close_open_calls closes it as §11.3 says ("Tool
        // execution aborted", metadata.interrupted, partial output kept).
        return None;
    }
    Some(result)
}

/// Runs the tool; one that does not report its own file changes
/// ([`ToolEffects::Unknown`]) has the whole project compared around it, so
/// its changes are in the step's checkpoint too.
async fn checkpointed(
    tool: &dyn Tool,
    args: Value,
    tool_ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let watched = tool_ctx.keeps_checkpoints() && tool.effects() == ToolEffects::Unknown;
    if watched && let Err(error) = tool_ctx.before_change(ChangeScope::Project).await {
        tracing::warn!(tool = tool.id(), %error, "checkpoint: the project's state before the call was not noted; its changes may not be revertible");
    }
    let result = tool.execute(args, tool_ctx).await;
    if watched && let Err(error) = tool_ctx.after_change(ChangeScope::Project).await {
        tracing::warn!(tool = tool.id(), %error, "checkpoint: the call's file changes were not recorded; they cannot be reverted");
    }
    result
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
