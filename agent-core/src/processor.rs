//! The stream processor: one model call (a *step*) turned into an assistant
//! message, with retries of the stream and concurrent execution of the
//! step's tool calls (§11).
//!
//! Order of events within a step:
//!
//! 1. The stream is consumed into parts. Events of an attempt are held
//!    back until the attempt *commits* (first text or reasoning delta, or
//!    first complete tool call); only uncommitted attempts are retried
//!    (see [`crate::retry`]).
//! 2. When the stream has finished, the step's complete tool calls run
//!    **concurrently**. Running them only after the stream finished means a
//!    stream that fails half-way never leaves a side effect behind, so the
//!    partial call of a cut stream is never executed.
//! 3. Every call left without a result (cancellation, a cut stream, the
//!    step limit) is closed as §11.3 says, so every call has a result.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agent_permission::Ruleset;
use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::doom_loop;
use crate::error::ModelError;
use crate::event::{DeltaField, Event, SessionStatus};
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Timing, ToolPart, ToolState, interrupted_state};
use crate::model::ModelRequest;
use crate::step_loop::{AgentSpec, Shared};
use crate::stream::{FinishReason, ProviderMetadata, StreamEvent};
use crate::tool::ToolError;

/// Error text of a call refused because the step limit was reached.
pub const STEP_LIMIT_ERROR: &str =
    "Tool unavailable: the maximum number of steps for this turn was reached.";

/// How a step ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StepEnd {
    /// The model finished and every call ran.
    Finished,
    /// A permission was rejected (a tool's ask, or the doom-loop ask).
    Blocked,
    /// The prompt's token fired.
    Cancelled,
    /// The model call failed for good.
    Failed(ModelError),
    /// The model called tools on the last step; they were refused.
    StepLimit,
}

/// What one step needs.
pub(crate) struct StepInput<'a> {
    pub shared: &'a Shared,
    pub model: &'a Arc<dyn crate::model::LanguageModel>,
    pub agent: &'a AgentSpec,
    pub session_id: &'a str,
    pub directory: &'a std::path::Path,
    pub ruleset: &'a Arc<Ruleset>,
    pub request: ModelRequest,
    pub last_step: bool,
    pub turn_calls: &'a [ToolPart],
    pub cancel: &'a CancellationToken,
    pub step: u32,
}

/// Per-attempt streaming state.
struct Attempt<'a> {
    shared: &'a Shared,
    session_id: &'a str,
    held: Vec<Event>,
    committed: bool,
    open: Vec<(String, usize)>,
    tools: Vec<(String, usize)>,
    calls: Vec<usize>,
    finish: Option<(FinishReason, crate::usage::Usage)>,
}

impl<'a> Attempt<'a> {
    fn new(shared: &'a Shared, session_id: &'a str) -> Self {
        Attempt {
            shared,
            session_id,
            held: Vec::new(),
            committed: false,
            open: Vec::new(),
            tools: Vec::new(),
            calls: Vec::new(),
            finish: None,
        }
    }

    fn out(&mut self, make: impl FnOnce() -> Event) {
        if self.committed {
            self.shared.events.emit(make);
        } else if self.shared.events.has_subscribers() {
            self.held.push(make());
        }
    }

    fn commit(&mut self) {
        if !self.committed {
            self.committed = true;
            for event in self.held.drain(..) {
                self.shared.events.send(event);
            }
        }
    }

    fn block(&self, id: &str) -> Option<usize> {
        self.open.iter().find(|(b, _)| b == id).map(|(_, i)| *i)
    }

    fn tool(&self, id: &str) -> Option<usize> {
        self.tools.iter().find(|(c, _)| c == id).map(|(_, i)| *i)
    }

    fn part_event(&self, message: &Message, index: usize, created: bool) -> Event {
        let part = message.parts[index].clone();
        let (session_id, message_id) = (self.session_id.to_string(), message.id.clone());
        if created {
            Event::PartCreated {
                session_id,
                message_id,
                part,
            }
        } else {
            Event::PartUpdated {
                session_id,
                message_id,
                part,
            }
        }
    }

    fn delta_event(
        &self,
        message: &Message,
        index: usize,
        field: DeltaField,
        delta: &str,
    ) -> Event {
        Event::PartDelta {
            session_id: self.session_id.to_string(),
            message_id: message.id.clone(),
            part_id: message.parts[index].id().to_string(),
            field,
            delta: delta.to_string(),
        }
    }

    fn push(&mut self, message: &mut Message, part: Part) -> usize {
        message.parts.push(part);
        let index = message.parts.len() - 1;
        let event = self
            .shared
            .events
            .has_subscribers()
            .then(|| self.part_event(message, index, true));
        if let Some(event) = event {
            self.out(|| event);
        }
        index
    }

    fn updated(&mut self, message: &Message, index: usize) {
        if self.shared.events.has_subscribers() {
            let event = self.part_event(message, index, false);
            self.out(|| event);
        }
    }

    /// Applies one stream event to the message.
    fn apply(&mut self, message: &mut Message, event: StreamEvent) {
        match event {
            StreamEvent::TextStart { id } => {
                let index = self.push(message, Part::text(""));
                self.open.push((id, index));
            }
            StreamEvent::ReasoningStart {
                id,
                provider_metadata,
            } => {
                let part = Part::Reasoning {
                    id: ascending("prt"),
                    text: String::new(),
                    provider_metadata,
                };
                let index = self.push(message, part);
                self.open.push((id, index));
            }
            StreamEvent::TextDelta { id, delta } | StreamEvent::ReasoningDelta { id, delta } => {
                let index = match self.block(&id) {
                    Some(index) => index,
                    None => {
                        let index = self.push(message, Part::text(""));
                        self.open.push((id, index));
                        index
                    }
                };
                let field = match &mut message.parts[index] {
                    Part::Text { text, .. } => {
                        text.push_str(&delta);
                        DeltaField::Text
                    }
                    Part::Reasoning { text, .. } => {
                        text.push_str(&delta);
                        DeltaField::Reasoning
                    }
                    _ => return,
                };
                self.commit();
                if self.shared.events.has_subscribers() {
                    let event = self.delta_event(message, index, field, &delta);
                    self.shared.events.send(event);
                }
            }
            StreamEvent::TextEnd {
                id,
                provider_metadata,
            }
            | StreamEvent::ReasoningEnd {
                id,
                provider_metadata,
            } => {
                if let Some(index) = self.block(&id) {
                    self.open.retain(|(b, _)| *b != id);
                    if let Some(extra) = provider_metadata {
                        match &mut message.parts[index] {
                            Part::Text {
                                provider_metadata, ..
                            }
                            | Part::Reasoning {
                                provider_metadata, ..
                            } => merge_metadata(provider_metadata, extra),
                            _ => {}
                        }
                    }
                    self.updated(message, index);
                }
            }
            StreamEvent::ToolInputStart { id, name } => {
                if self.tool(&id).is_none() {
                    let part = Part::Tool(ToolPart {
                        id: ascending("prt"),
                        call_id: id.clone(),
                        tool: name,
                        state: ToolState::Pending {
                            input: Value::Object(Default::default()),
                            raw: String::new(),
                        },
                        provider_metadata: None,
                    });
                    let index = self.push(message, part);
                    self.tools.push((id, index));
                }
            }
            StreamEvent::ToolInputDelta { id, delta } => {
                if let Some(index) = self.tool(&id) {
                    if let Part::Tool(ToolPart {
                        state: ToolState::Pending { raw, .. },
                        ..
                    }) = &mut message.parts[index]
                    {
                        raw.push_str(&delta);
                        if self.shared.events.has_subscribers() {
                            let event =
                                self.delta_event(message, index, DeltaField::ToolInput, &delta);
                            self.out(|| event);
                        }
                    }
                }
            }
            StreamEvent::ToolCall(call) => {
                let state = ToolState::Running {
                    input: call.input,
                    title: None,
                    metadata: Value::Object(Default::default()),
                    time: Timing {
                        start: now_ms(),
                        end: None,
                    },
                };
                let index = match self.tool(&call.id) {
                    Some(index) => {
                        if let Part::Tool(part) = &mut message.parts[index] {
                            part.tool = call.name;
                            part.state = state;
                            part.provider_metadata = call.provider_metadata;
                        }
                        index
                    }
                    None => {
                        let part = Part::Tool(ToolPart {
                            id: ascending("prt"),
                            call_id: call.id.clone(),
                            tool: call.name,
                            state,
                            provider_metadata: call.provider_metadata,
                        });
                        let index = self.push(message, part);
                        self.tools.push((call.id, index));
                        index
                    }
                };
                if !self.calls.contains(&index) {
                    self.calls.push(index);
                }
                self.commit();
                self.updated(message, index);
            }
            StreamEvent::ProviderMetadata { metadata } => {
                merge_metadata(&mut message.provider_metadata, metadata);
            }
            StreamEvent::Finish { reason, usage, .. } => {
                self.finish = Some((reason, usage));
            }
        }
    }
}

fn merge_metadata(target: &mut Option<ProviderMetadata>, extra: ProviderMetadata) {
    match target {
        Some(existing) => existing.extend(extra),
        None => *target = Some(extra),
    }
}

fn lock(message: &Mutex<Message>) -> MutexGuard<'_, Message> {
    message.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one step into `message` (which already holds its step-start part).
pub(crate) async fn run_step(input: StepInput<'_>, message: &mut Message) -> StepEnd {
    let base = message.parts.len();
    let mut retry_number = 0u32;
    let (calls, finish) = loop {
        message.parts.truncate(base);
        message.provider_metadata = None;
        let mut attempt = Attempt::new(input.shared, input.session_id);
        let result = stream_attempt(&input, message, &mut attempt).await;
        match result {
            Ok(()) => {
                let Some(finish) = attempt.finish else {
                    // Unreachable by construction: Ok means a finish arrived.
                    break (attempt.calls, (FinishReason::Unknown, Default::default()));
                };
                break (attempt.calls, finish);
            }
            Err(ModelError::Cancelled) => {
                close_open_calls(input.shared, input.session_id, message);
                return StepEnd::Cancelled;
            }
            Err(error) => {
                retry_number += 1;
                let plan = if attempt.committed {
                    None
                } else {
                    input.shared.config.retry.next(retry_number, &error)
                };
                let Some((info, wait)) = plan else {
                    close_open_calls(input.shared, input.session_id, message);
                    message.error = Some(MessageError {
                        name: if error.is_context_overflow() {
                            "context_overflow".into()
                        } else {
                            "model".into()
                        },
                        message: error.to_string(),
                    });
                    return StepEnd::Failed(error);
                };
                tracing::debug!(attempt = retry_number, ?wait, %error, "retrying model stream");
                let delay_ms = wait.as_millis() as u64;
                input.shared.events.emit(|| Event::RetryScheduled {
                    session_id: input.session_id.to_string(),
                    attempt: retry_number,
                    message: info.message.clone(),
                    delay_ms,
                });
                input.shared.events.emit(|| Event::SessionStatus {
                    session_id: input.session_id.to_string(),
                    status: SessionStatus::Retry {
                        attempt: retry_number,
                        message: info.message.clone(),
                        next: now_ms() + delay_ms,
                    },
                });
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = input.cancel.cancelled() => {
                        message.parts.truncate(base);
                        return StepEnd::Cancelled;
                    }
                }
                input.shared.events.emit(|| Event::SessionStatus {
                    session_id: input.session_id.to_string(),
                    status: SessionStatus::Busy,
                });
            }
        }
    };

    let (reason, usage) = finish;
    message.finish = Some(reason);
    message.usage = usage;
    // Calls whose arguments never completed cannot run: close them.
    close_calls(input.shared, input.session_id, message, true);

    let end = if calls.is_empty() {
        StepEnd::Finished
    } else if input.last_step {
        refuse_calls(input.shared, input.session_id, message, &calls);
        StepEnd::StepLimit
    } else {
        execute_calls(&input, message, &calls).await
    };

    message.parts.push(Part::StepFinish {
        id: ascending("prt"),
        reason,
        usage,
    });
    let index = message.parts.len() - 1;
    input.shared.events.emit(|| Event::PartCreated {
        session_id: input.session_id.to_string(),
        message_id: message.id.clone(),
        part: message.parts[index].clone(),
    });
    input.shared.events.emit(|| Event::StepFinished {
        session_id: input.session_id.to_string(),
        message_id: message.id.clone(),
        step: input.step,
        reason,
        usage,
    });
    end
}

/// Consumes one attempt's stream. `Ok` once a finish event arrived.
async fn stream_attempt(
    input: &StepInput<'_>,
    message: &mut Message,
    attempt: &mut Attempt<'_>,
) -> Result<(), ModelError> {
    let cancel = input.cancel;
    let mut stream = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(ModelError::Cancelled),
        stream = input.model.stream(input.request.clone(), cancel.child_token()) => stream?,
    };
    loop {
        let item = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            item = stream.next() => item,
        };
        match item {
            Some(Ok(event)) => {
                attempt.apply(message, event);
                if attempt.finish.is_some() {
                    return Ok(());
                }
            }
            Some(Err(error)) => return Err(error),
            None => {
                return Err(ModelError::interrupted(
                    "the stream ended before the model finished (no finish event)",
                ));
            }
        }
    }
}

/// Closes every unfinished call of `message` as interrupted, with events.
fn close_open_calls(shared: &Shared, session_id: &str, message: &mut Message) {
    close_calls(shared, session_id, message, false);
}

/// Closes unfinished calls (only those still pending when `pending_only`).
fn close_calls(shared: &Shared, session_id: &str, message: &mut Message, pending_only: bool) {
    let now = now_ms();
    for part in &mut message.parts {
        if let Part::Tool(tool) = part {
            if pending_only && !matches!(tool.state, ToolState::Pending { .. }) {
                continue;
            }
            if let Some(state) = interrupted_state(&tool.state, now) {
                tool.state = state;
                let part = part.clone();
                shared.events.emit(|| Event::PartUpdated {
                    session_id: session_id.to_string(),
                    message_id: message.id.clone(),
                    part,
                });
            }
        }
    }
}

fn set_state(
    shared: &Shared,
    session_id: &str,
    message: &mut Message,
    index: usize,
    state: ToolState,
) {
    if let Part::Tool(tool) = &mut message.parts[index] {
        tool.state = state;
    }
    shared.events.emit(|| Event::PartUpdated {
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

fn refuse_calls(shared: &Shared, session_id: &str, message: &mut Message, calls: &[usize]) {
    for &index in calls {
        if let Part::Tool(tool) = &message.parts[index] {
            let state = error_state(&tool.state, STEP_LIMIT_ERROR.into());
            set_state(shared, session_id, message, index, state);
        }
    }
}

/// What happened to one call.
enum CallEnd {
    Done,
    Blocked,
}

/// Runs the step's calls concurrently and records their results.
async fn execute_calls(input: &StepInput<'_>, message: &mut Message, calls: &[usize]) -> StepEnd {
    // Doom-loop flags, decided in call order before anything runs.
    let mut doom = Vec::with_capacity(calls.len());
    if input.shared.config.doom_loop {
        for (k, &index) in calls.iter().enumerate() {
            let flagged = match &message.parts[index] {
                Part::Tool(current) => {
                    let this_step = calls[..=k]
                        .iter()
                        .filter_map(|&i| message.parts[i].as_tool());
                    let sequence = input.turn_calls.iter().chain(this_step);
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
        Message::new(input.session_id, crate::message::Role::Assistant),
    )));
    let futures = calls
        .iter()
        .zip(doom)
        .map(|(&index, doom)| run_call(input, Arc::clone(&shared_message), index, doom));
    let ends = futures::future::join_all(futures).await;
    let taken = std::mem::replace(
        &mut *lock(&shared_message),
        Message::new("", crate::message::Role::Assistant),
    );
    *message = taken;

    if input.cancel.is_cancelled() {
        close_open_calls(input.shared, input.session_id, message);
        return StepEnd::Cancelled;
    }
    if ends.iter().any(|end| matches!(end, CallEnd::Blocked)) {
        StepEnd::Blocked
    } else {
        StepEnd::Finished
    }
}

async fn run_call(
    input: &StepInput<'_>,
    message: Arc<Mutex<Message>>,
    index: usize,
    doom: bool,
) -> CallEnd {
    let shared = input.shared;
    let session_id = input.session_id;
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
    let finish = |result: Result<crate::tool::ToolOutput, ToolError>| {
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
        set_state(shared, session_id, &mut guard, index, state);
    };

    if doom {
        let request = doom_loop::ask_request(session_id, &name, &args, &input.agent.permission)
            .tool(message_id.as_str(), call_id.as_str());
        let asked = tokio::select! {
            result = shared.permissions.ask(request) => result,
            () = input.cancel.cancelled() => return CallEnd::Done,
        };
        if let Err(error) = asked {
            // §11.2: a failed doom-loop ask ends the turn, whatever the answer.
            finish(Err(ToolError::Permission(error)));
            return CallEnd::Blocked;
        }
    }

    let Some(tool) = shared.tools.resolve(&name, input.ruleset) else {
        let available: Vec<String> = shared
            .tools
            .visible(input.ruleset)
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
    let events = shared.events.clone();
    let sid = session_id.to_string();
    let ctx = ToolContext::new(
        session_id,
        message_id.as_str(),
        call_id.as_str(),
        shared.permissions.clone(),
    )
    .with_agent(input.agent.name.as_str())
    .with_directories(
        input.directory.to_path_buf(),
        shared
            .worktree
            .clone()
            .unwrap_or_else(|| input.directory.to_path_buf()),
    )
    .with_ruleset(Arc::clone(input.ruleset))
    .with_cancel(input.cancel.child_token())
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

    let execution = tool.execute(args, &ctx);
    tokio::pin!(execution);
    let result = tokio::select! {
        result = &mut execution => Some(result),
        () = ctx.cancel.cancelled() => {
            // Give the tool a moment to stop on its own (it sees its token),
            // as opencode waits 250 ms; then abandon it.
            tokio::time::timeout(shared.config.tool_grace, &mut execution).await.ok()
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
            out.output = shared.config.truncator.apply(&name, out.output).await;
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

/// Grace period tools get to stop after cancellation (opencode: 250 ms).
pub const DEFAULT_TOOL_GRACE: Duration = Duration::from_millis(250);
