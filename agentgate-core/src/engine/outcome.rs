//! What a prompt gives back: [`TurnResult`] with its [`StopReason`], or a
//! [`PromptError`] when the turn could not run at all.

use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::message::{Message, MessageError};
use crate::sessions::SessionStoreError;
use crate::stream::FinishReason;
use crate::usage::Usage;

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling tools (§12 step 2).
    Done {
        /// Its finish reason.
        finish: FinishReason,
    },
    /// A permission was rejected without feedback (§11.1), or the
    /// doom-loop ask failed (§11.2).
    Rejected,
    /// A rule denied the doom-loop check (§11.2): the turn stops, but not
    /// because the user said stop — a sub-agent's parent gets the child's
    /// result with the denial and goes on (§10.2).
    Denied {
        /// The denial as the model sees it.
        message: String,
    },
    /// The step limit was reached and the model still called tools.
    StepLimit,
    /// The prompt was cancelled; every open call was closed (§11.3).
    Cancelled,
    /// The context is full: compact the history before prompting again.
    ContextOverflow,
    /// The output was blocked by a content filter.
    ContentFilter,
    /// The model call failed for good (not retryable, or out of retries).
    Error {
        /// What went wrong.
        error: MessageError,
    },
}

/// The result of a prompt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TurnResult {
    /// Why the turn ended.
    pub stop: StopReason,
    /// The turn's assistant messages, in order (one per step).
    pub messages: Vec<Message>,
    /// Steps run.
    pub steps: u32,
    /// Tokens used by all steps.
    pub usage: Usage,
}

impl TurnResult {
    /// The last assistant message's text (the answer).
    pub fn text(&self) -> String {
        self.messages.last().map(Message::text).unwrap_or_default()
    }

    /// Whether the model answered ([`StopReason::Done`]).
    pub fn is_done(&self) -> bool {
        matches!(self.stop, StopReason::Done { .. })
    }

    /// `Ok(self)` when the model answered, else the reason as a
    /// [`TurnError::Stopped`]: a rejected permission, the step limit, a
    /// cancellation, a full context, a content filter or a model error.
    pub fn into_result(self) -> Result<TurnResult, TurnError> {
        if self.is_done() {
            Ok(self)
        } else {
            Err(TurnError::Stopped(Box::new(self)))
        }
    }
}

/// Why a prompt produced no answer: it could not run, or the turn stopped
/// before the model answered. See [`Engine::run`](crate::Engine::run) and
/// [`TurnResult::into_result`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The prompt could not run at all.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The turn ended without an answer; the result holds what happened.
    #[error("the turn stopped without an answer: {}", describe(&.0.stop))]
    Stopped(Box<TurnResult>),
}

fn describe(stop: &StopReason) -> String {
    match stop {
        StopReason::Done { .. } => "done".into(),
        StopReason::Rejected => {
            "a permission was rejected (with no approver, every ask is rejected)".into()
        }
        StopReason::Denied { message } => {
            format!("a repeated tool call was denied by a rule: {message}")
        }
        StopReason::StepLimit => {
            "the step limit was reached while the model still called tools".into()
        }
        StopReason::Cancelled => "the prompt was cancelled".into(),
        StopReason::ContextOverflow => {
            "the context window is full; compact or start a new session".into()
        }
        StopReason::ContentFilter => "the output was blocked by a content filter".into(),
        StopReason::Error { error } => format!("{} ({})", error.message, error.name),
    }
}

/// Why a prompt could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The store failed or does not know the session.
    #[error(transparent)]
    Store(#[from] SessionStoreError),
    /// Another prompt of the session is running.
    #[error("session {0:?} is busy with another prompt: wait for it or cancel it first")]
    Busy(String),
    /// The session names an agent the engine does not know.
    #[error(
        "unknown agent {0:?}: define it under `agent` in opencode.json or as .opencode/agent/{0}.md (embedders: EngineBuilder::agent)"
    )]
    UnknownAgent(String),
    /// The session names a model the engine cannot serve and no
    /// [`ModelResolver`](crate::ModelResolver) is registered.
    #[error(
        "model {0:?} is not available: only the engine's own model can run (embedders: register a ModelResolver with EngineBuilder::model_resolver)"
    )]
    UnknownModel(String),
    /// The session names a model the registered
    /// [`ModelResolver`](crate::ModelResolver) cannot serve, with its reason.
    #[error("model {model:?} is not available: {reason}")]
    ModelUnavailable {
        /// The `provider/model` asked for.
        model: String,
        /// Why, from [`ModelResolver::resolve_or_explain`](crate::ModelResolver::resolve_or_explain).
        reason: String,
    },
    /// A `UserPromptSubmit` hook refused the prompt (or failed, which
    /// refuses it too); it was not stored or sent.
    #[error("a UserPromptSubmit hook refused the prompt: {0}")]
    HookRefused(String),
    /// The prompt holds an image and the model does not accept images; it
    /// was not stored or sent.
    #[error(
        "model {0} does not accept images: use a model with image input (--model), or declare \
         it in the configuration as provider.<id>.models.<model>.modalities.input = [\"text\", \"image\"]"
    )]
    ImagesNotAccepted(String),
    /// A stored ask cannot be resumed ([`Engine::resume_ask`](crate::Engine::resume_ask)):
    /// its call's message was not saved before the process stopped, or the
    /// call already has its result.
    #[error("ask {request} cannot be resumed: {reason}")]
    NotResumable {
        /// The ask's id.
        request: String,
        /// Why.
        reason: String,
    },
}

/// The error recorded for a model call that failed for good.
pub(super) fn error_of(error: ModelError) -> MessageError {
    MessageError {
        name: "model".into(),
        message: error.to_string(),
    }
}
