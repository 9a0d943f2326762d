//! The stream processor: one model call (a *step*) turned into an assistant
//! message, with retries of the stream (§11, §13); the step's tool calls
//! then run through `tool_calls.rs`.
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

use futures::StreamExt;
use serde_json::Value;
use tracing::Instrument;

use super::retry::{RetryHistory, RetryPlan, with_note};
use super::state::EngineState;
use super::step_size::{event_bytes, step_too_large};
use super::tool_calls::{CallsEnd, close_calls, close_open_calls, execute_calls, refuse_calls};
use super::trace_spans;
use super::turn_context::TurnContext;
use crate::error::ModelError;
use crate::event::{DeltaField, Event, SessionStatus};
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Timing, ToolPart, ToolState};
use crate::model::ModelRequest;
use crate::stream::{FinishReason, ProviderMetadata, StreamEvent, ToolCall};
use crate::usage::Usage;

/// How a step ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum StepEnd {
    /// The model finished and every call ran.
    Finished,
    /// A permission was rejected (a tool's ask, or the doom-loop ask).
    Blocked,
    /// A rule denied the doom-loop ask (§11.2).
    Denied(String),
    /// The prompt's token fired.
    Cancelled,
    /// The model call failed for good.
    Failed(ModelError),
    /// The model called tools on the last step; they were refused.
    StepLimit,
}

/// What one step needs beyond its turn's context.
pub(super) struct StepInput<'a> {
    /// The turn's fixed inputs.
    pub ctx: &'a TurnContext<'a>,
    /// This step's request.
    pub request: ModelRequest,
    /// The step limit is reached: calls are refused.
    pub last_step: bool,
    /// The turn's earlier calls (for the doom-loop check).
    pub turn_calls: &'a [ToolPart],
    /// The step's number in its turn.
    pub step: u32,
}

/// Per-attempt streaming state.
struct Attempt<'a> {
    engine: &'a EngineState,
    session_id: &'a str,
    held: Vec<Event>,
    committed: bool,
    open: Vec<(String, usize)>,
    tools: Vec<(String, usize)>,
    calls: Vec<usize>,
    finish: Option<(FinishReason, Usage)>,
    /// Bytes streamed so far, against `LoopSettings::max_step_bytes`.
    bytes: usize,
    /// The ceiling was passed: the step fails without a retry.
    oversized: bool,
}

impl<'a> Attempt<'a> {
    fn new(engine: &'a EngineState, session_id: &'a str) -> Self {
        Attempt {
            engine,
            session_id,
            held: Vec::new(),
            committed: false,
            open: Vec::new(),
            tools: Vec::new(),
            calls: Vec::new(),
            finish: None,
            bytes: 0,
            oversized: false,
        }
    }

    fn out(&mut self, make: impl FnOnce() -> Event) {
        if self.committed {
            self.engine.events.emit(make);
        } else if self.engine.events.has_subscribers() {
            self.held.push(make());
        }
    }

    fn commit(&mut self) {
        if !self.committed {
            self.committed = true;
            for event in self.held.drain(..) {
                self.engine.events.send(event);
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
            .engine
            .events
            .has_subscribers()
            .then(|| self.part_event(message, index, true));
        if let Some(event) = event {
            self.out(|| event);
        }
        index
    }

    fn updated(&mut self, message: &Message, index: usize) {
        if self.engine.events.has_subscribers() {
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
                self.text_delta(message, id, &delta);
            }
            StreamEvent::TextEnd {
                id,
                provider_metadata,
            }
            | StreamEvent::ReasoningEnd {
                id,
                provider_metadata,
            } => self.block_end(message, &id, provider_metadata),
            StreamEvent::ToolInputStart { id, name } => self.tool_input_start(message, id, name),
            StreamEvent::ToolInputDelta { id, delta } => {
                self.tool_input_delta(message, &id, &delta);
            }
            StreamEvent::ToolCall(call) => self.tool_call(message, call),
            StreamEvent::ProviderMetadata { metadata } => {
                merge_metadata(&mut message.provider_metadata, metadata);
            }
            StreamEvent::Finish { reason, usage, .. } => {
                self.finish = Some((reason, usage));
            }
        }
    }

    /// Text or reasoning arrives for block `id` (opened now if unknown);
    /// it commits the attempt.
    fn text_delta(&mut self, message: &mut Message, id: String, delta: &str) {
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
                text.push_str(delta);
                DeltaField::Text
            }
            Part::Reasoning { text, .. } => {
                text.push_str(delta);
                DeltaField::Reasoning
            }
            _ => return,
        };
        self.commit();
        if self.engine.events.has_subscribers() {
            let event = self.delta_event(message, index, field, delta);
            self.engine.events.send(event);
        }
    }

    /// Block `id` ends, with the provider's last metadata for it.
    fn block_end(
        &mut self,
        message: &mut Message,
        id: &str,
        provider_metadata: Option<ProviderMetadata>,
    ) {
        let Some(index) = self.block(id) else {
            return;
        };
        self.open.retain(|(b, _)| b != id);
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

    /// A tool call's arguments start streaming.
    fn tool_input_start(&mut self, message: &mut Message, id: String, name: String) {
        if self.tool(&id).is_some() {
            return;
        }
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

    /// More of a pending call's raw arguments.
    fn tool_input_delta(&mut self, message: &mut Message, id: &str, delta: &str) {
        if let Some(index) = self.tool(id)
            && let Part::Tool(ToolPart {
                state: ToolState::Pending { raw, .. },
                ..
            }) = &mut message.parts[index]
        {
            raw.push_str(delta);
            if self.engine.events.has_subscribers() {
                let event = self.delta_event(message, index, DeltaField::ToolInput, delta);
                self.out(|| event);
            }
        }
    }

    /// A complete call: it runs after the stream; it commits the attempt.
    fn tool_call(&mut self, message: &mut Message, call: ToolCall) {
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
}

fn merge_metadata(target: &mut Option<ProviderMetadata>, extra: ProviderMetadata) {
    match target {
        Some(existing) => existing.extend(extra),
        None => *target = Some(extra),
    }
}

/// Runs one step into `message` (which already holds its step-start part).
pub(super) async fn run_step(input: StepInput<'_>, message: &mut Message) -> StepEnd {
    let (calls, (reason, usage)) = match traced_stream(&input, message).await {
        Ok(streamed) => streamed,
        Err(end) => return end,
    };
    message.finish = Some(reason);
    message.usage = usage;
    let (engine, session_id) = (input.ctx.engine, input.ctx.session_id());
    // Calls whose arguments never completed cannot run: close them.
    close_calls(engine, session_id, message, true);

    let end = if calls.is_empty() {
        StepEnd::Finished
    } else if input.last_step {
        refuse_calls(engine, session_id, message, &calls);
        StepEnd::StepLimit
    } else {
        match execute_calls(input.ctx, input.turn_calls, message, &calls).await {
            CallsEnd::Finished => StepEnd::Finished,
            CallsEnd::Blocked => StepEnd::Blocked,
            CallsEnd::Denied(message) => StepEnd::Denied(message),
            CallsEnd::Cancelled => StepEnd::Cancelled,
        }
    };

    message.parts.push(Part::StepFinish {
        id: ascending("prt"),
        reason,
        usage,
    });
    let index = message.parts.len() - 1;
    engine.events.emit(|| Event::PartCreated {
        session_id: session_id.to_string(),
        message_id: message.id.clone(),
        part: message.parts[index].clone(),
    });
    engine.events.emit(|| Event::StepFinished {
        session_id: session_id.to_string(),
        message_id: message.id.clone(),
        step: input.step,
        reason,
        usage,
    });
    end
}

/// The step's complete calls (part indexes) and how the model finished.
type Streamed = (Vec<usize>, (FinishReason, Usage));

/// [`stream_with_retries`] inside the model call's `chat` span.
async fn traced_stream(input: &StepInput<'_>, message: &mut Message) -> Result<Streamed, StepEnd> {
    let info = input.ctx.model.info();
    let contents = input.ctx.engine.config.trace_contents;
    let span = trace_spans::chat(&info.provider, &info.id, &input.request, contents);
    let streamed = stream_with_retries(input, message)
        .instrument(span.clone())
        .await;
    let outcome = match &streamed {
        Ok((_, (reason, usage))) => Ok((*reason, usage)),
        Err(StepEnd::Failed(error)) => Err(error),
        Err(_) => Err(&ModelError::Cancelled),
    };
    trace_spans::chat_ended(&span, &info.id, outcome, message, contents);
    streamed
}

/// Streams the step into `message`, retrying an attempt that failed before
/// it committed; `Err` with the step's end when it cannot go on.
async fn stream_with_retries(
    input: &StepInput<'_>,
    message: &mut Message,
) -> Result<Streamed, StepEnd> {
    let (engine, session_id) = (input.ctx.engine, input.ctx.session_id());
    let base = message.parts.len();
    let mut history = RetryHistory::start();
    loop {
        message.parts.truncate(base);
        message.provider_metadata = None;
        let mut attempt = Attempt::new(engine, session_id);
        let error = match stream_attempt(input, message, &mut attempt).await {
            Ok(()) => {
                // Ok means a finish arrived; the fallback is never used.
                let finish = attempt
                    .finish
                    .unwrap_or((FinishReason::Unknown, Usage::default()));
                return Ok((attempt.calls, finish));
            }
            Err(ModelError::Cancelled) => {
                close_open_calls(engine, session_id, message);
                return Err(StepEnd::Cancelled);
            }
            Err(error) => error,
        };
        let plan = if attempt.committed || attempt.oversized {
            Err(None)
        } else {
            engine.config.retry.plan(&mut history, &error)
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(note) => {
                let error = match note {
                    Some(note) => with_note(error, &note),
                    None => error,
                };
                close_open_calls(engine, session_id, message);
                message.error = Some(MessageError {
                    name: if error.is_context_overflow() {
                        "context_overflow".into()
                    } else {
                        "model".into()
                    },
                    message: error.to_string(),
                });
                return Err(StepEnd::Failed(error));
            }
        };
        let wait = plan.wait;
        tracing::info!(session_id = %session_id, attempt = plan.retry, ?wait, %error, "retrying the model stream");
        announce_retry(input, &plan, &error);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = input.ctx.cancel.cancelled() => {
                message.parts.truncate(base);
                return Err(StepEnd::Cancelled);
            }
        }
        engine.events.emit(|| Event::SessionStatus {
            session_id: session_id.to_string(),
            status: SessionStatus::Busy,
        });
    }
}

/// Tells subscribers a retry is scheduled, and when.
fn announce_retry(input: &StepInput<'_>, plan: &RetryPlan, error: &ModelError) {
    let (engine, session_id) = (input.ctx.engine, input.ctx.session_id());
    let delay_ms = plan.wait.as_millis() as u64;
    engine.events.emit(|| Event::RetryScheduled {
        session_id: session_id.to_string(),
        attempt: plan.retry,
        message: plan.info.message.clone(),
        delay_ms,
        max_attempts: plan.max_attempts,
        error: Some(error.to_string()),
    });
    engine.events.emit(|| Event::SessionStatus {
        session_id: session_id.to_string(),
        status: SessionStatus::Retry {
            attempt: plan.retry,
            message: plan.info.message.clone(),
            next: now_ms() + delay_ms,
        },
    });
}

/// Consumes one attempt's stream. `Ok` once a finish event arrived.
async fn stream_attempt(
    input: &StepInput<'_>,
    message: &mut Message,
    attempt: &mut Attempt<'_>,
) -> Result<(), ModelError> {
    let cancel = input.ctx.cancel;
    let mut stream = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(ModelError::Cancelled),
        stream = input.ctx.model.stream(input.request.clone(), cancel.child_token()) => stream?,
    };
    loop {
        let item = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            item = stream.next() => item,
        };
        match item {
            Some(Ok(event)) => {
                let limit = input.ctx.engine.config.max_step_bytes;
                attempt.bytes = attempt.bytes.saturating_add(event_bytes(&event));
                if attempt.bytes > limit {
                    attempt.oversized = true;
                    return Err(step_too_large(limit));
                }
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
