//! [`Event`]s: every state change of a session, sent on the engine's
//! [`EventBus`](crate::EventBus) so a host can mirror a session live.

use agentgate_permission::{PermissionEvent, PermissionRequest, Reply};
use serde::{Deserialize, Serialize};

use crate::message::{MessageError, Part, Role};
use crate::stream::FinishReason;
use crate::usage::Usage;

/// What a session is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum SessionStatus {
    /// Waiting for a prompt.
    Idle,
    /// Working on a prompt.
    Busy,
    /// Waiting to retry a failed model call.
    Retry {
        /// The retry number (from 1).
        attempt: u32,
        /// Why (see [`RetryInfo`](crate::retry::RetryInfo)).
        message: String,
        /// When the retry starts, in ms since the Unix epoch.
        next: u64,
    },
}

/// Which text of a part a [`Event::PartDelta`] extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeltaField {
    /// A text part's text.
    Text,
    /// A reasoning part's text.
    Reasoning,
    /// A pending tool part's raw argument text.
    ToolInput,
}

/// A state change, serialised with a `type` tag such as
/// `"message.part.updated"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Event {
    /// A hook failed (crashed, timed out, or gave an answer that is not
    /// one). For `PreToolUse` and `UserPromptSubmit` what it guarded was
    /// refused; for the other events nothing changed.
    #[serde(rename = "hook.failed")]
    HookFailed {
        /// The session.
        session_id: String,
        /// The hook's name (a shell hook's command).
        hook: String,
        /// The event it ran for (`PreToolUse` ...).
        event: String,
        /// What went wrong.
        error: String,
    },
    /// A session's status changed.
    #[serde(rename = "session.status")]
    SessionStatus {
        /// The session.
        session_id: String,
        /// Its new status.
        status: SessionStatus,
    },
    /// A message was created.
    #[serde(rename = "message.created")]
    MessageCreated {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// Who wrote it.
        role: Role,
    },
    /// An assistant message is complete.
    #[serde(rename = "message.completed")]
    MessageCompleted {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// Why the model stopped, if it did.
        finish: Option<FinishReason>,
        /// The error recorded on it, if any.
        error: Option<MessageError>,
    },
    /// A part was added to a message.
    #[serde(rename = "message.part.created")]
    PartCreated {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// The part as created.
        part: Part,
    },
    /// A part changed (text finished, tool state changed, metadata updated).
    #[serde(rename = "message.part.updated")]
    PartUpdated {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// The part as it is now.
        part: Part,
    },
    /// Streamed text was appended to a part.
    #[serde(rename = "message.part.delta")]
    PartDelta {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// The part.
        part_id: String,
        /// Which text grew.
        field: DeltaField,
        /// The appended text.
        delta: String,
    },
    /// A model call (step) finished.
    #[serde(rename = "step.finished")]
    StepFinished {
        /// The session.
        session_id: String,
        /// The assistant message of the step.
        message_id: String,
        /// The step number within the turn (from 1).
        step: u32,
        /// Why the model stopped.
        reason: FinishReason,
        /// Tokens used.
        usage: Usage,
    },
    /// A permission request needs an answer (forwarded from the gate).
    #[serde(rename = "permission.asked")]
    PermissionAsked {
        /// The request.
        request: PermissionRequest,
    },
    /// A permission request was answered (forwarded from the gate).
    #[serde(rename = "permission.replied")]
    PermissionReplied {
        /// The session.
        session_id: String,
        /// The request.
        request_id: String,
        /// The answer.
        reply: Reply,
    },
    /// A failed model call will be retried.
    #[serde(rename = "retry.scheduled")]
    RetryScheduled {
        /// The session.
        session_id: String,
        /// The retry number (from 1).
        attempt: u32,
        /// Why.
        message: String,
        /// How long the loop waits, in ms.
        delay_ms: u64,
        /// How many attempts the retry policy allows in all (the first
        /// one included), when it limits them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_attempts: Option<u32>,
        /// The error being retried, as it reads (`provider error (HTTP
        /// 500): …`), for progress lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Something failed (a model error, a store error); the turn ends.
    #[serde(rename = "session.error")]
    Error {
        /// The session.
        session_id: String,
        /// The message the error was recorded on, if any.
        message_id: Option<String>,
        /// What went wrong.
        error: MessageError,
    },
    /// A sub-agent's session (the task tool's child, new or resumed) is
    /// about to run under `parent_id`: its events that follow belong to
    /// the parent's turn. Emitted before the child's first event, so a
    /// stream following a session learns its descendants in order, without
    /// asking the store.
    #[serde(rename = "session.child")]
    ChildStarted {
        /// The child session.
        session_id: String,
        /// The session whose task tool runs it.
        parent_id: String,
    },
}

impl Event {
    /// The session the event is about.
    pub fn session_id(&self) -> &str {
        match self {
            Event::SessionStatus { session_id, .. }
            | Event::MessageCreated { session_id, .. }
            | Event::MessageCompleted { session_id, .. }
            | Event::PartCreated { session_id, .. }
            | Event::PartUpdated { session_id, .. }
            | Event::PartDelta { session_id, .. }
            | Event::StepFinished { session_id, .. }
            | Event::PermissionReplied { session_id, .. }
            | Event::RetryScheduled { session_id, .. }
            | Event::Error { session_id, .. }
            | Event::HookFailed { session_id, .. }
            | Event::ChildStarted { session_id, .. } => session_id,
            Event::PermissionAsked { request } => &request.session_id,
        }
    }
}

/// The engine's event for a gate event, for hosts that forward
/// [`PermissionGate::events`](agentgate_permission::PermissionGate::events) onto an
/// engine event stream. A kind of gate event this version has no engine event
/// for comes back as the error.
impl TryFrom<PermissionEvent> for Event {
    type Error = PermissionEvent;

    fn try_from(event: PermissionEvent) -> Result<Self, PermissionEvent> {
        match event {
            PermissionEvent::Asked(request) => Ok(Event::PermissionAsked { request }),
            PermissionEvent::Replied {
                session_id,
                request_id,
                reply,
            } => Ok(Event::PermissionReplied {
                session_id,
                request_id,
                reply,
            }),
            other => Err(other),
        }
    }
}
