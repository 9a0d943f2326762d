//! The step loop's pure decisions: when a turn is over (§12 step 2) and
//! what the step limit means.

use serde::{Deserialize, Serialize};

use crate::message::Message;
#[cfg(any(test, feature = "test-util"))]
use crate::message::Role;
use crate::stream::FinishReason;

/// What the loop head looks at in the latest assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitState {
    /// Its finish reason (`None`: the model has not finished a response yet).
    pub finish: Option<FinishReason>,
    /// Whether it holds tool parts, not counting calls closed as
    /// interrupted orphans (`error` with `metadata.interrupted`).
    pub has_tool_parts: bool,
    /// Whether it is newer than the latest user message.
    pub after_last_user: bool,
}

impl ExitState {
    #[cfg(any(test, feature = "test-util"))]
    /// The state of a history: its latest assistant message compared with
    /// its latest user message.
    pub fn of(history: &[Message]) -> ExitState {
        let last_user = history.iter().rposition(|m| m.role == Role::User);
        let last_assistant = history.iter().rposition(|m| m.role == Role::Assistant);
        match last_assistant {
            None => ExitState {
                finish: None,
                has_tool_parts: false,
                after_last_user: false,
            },
            Some(index) => ExitState {
                after_last_user: last_user.is_none_or(|user| index > user),
                ..ExitState::of_message(&history[index])
            },
        }
    }

    /// The state of one assistant message assumed newer than the last user message.
    pub fn of_message(message: &Message) -> ExitState {
        ExitState {
            finish: message.finish,
            has_tool_parts: message.tool_parts().any(|t| !t.state.is_interrupted()),
            after_last_user: true,
        }
    }
}

/// §12 step 2: the turn is over when the latest assistant message is newer
/// than the latest user message, has a finish reason other than
/// `tool-calls`, and holds no tool parts (interrupted orphans ignored).
/// So `stop` with tool calls continues (some providers report it), and
/// `length`, `content-filter`, `unknown` without tool calls end the turn.
pub fn should_exit(state: &ExitState) -> bool {
    state.after_last_user
        && state
            .finish
            .is_some_and(|reason| reason != FinishReason::ToolCalls)
        && !state.has_tool_parts
}

/// How a step runs under a step limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepMode {
    /// An ordinary step, tools available.
    Normal,
    /// The last step: tools are withheld and the model is asked to wrap up.
    Last,
    /// Past the limit: the loop never runs this step.
    Beyond,
}

#[cfg(any(test, feature = "test-util"))]
/// opencode's flag: `step >= limit` (steps count from 1).
pub fn is_last_step(step: u32, limit: Option<u32>) -> bool {
    limit.is_some_and(|limit| step >= limit)
}

/// The SDK's (hard) step limit: steps before the limit are normal, the
/// limit-th step is the last (tools withheld), later steps never run.
/// opencode flags every step from the limit on as "last" but keeps the
/// tools, so its limit is advisory; a limit of 0 behaves as 1.
pub fn step_mode(step: u32, limit: Option<u32>) -> StepMode {
    match limit {
        Some(limit) if step > limit.max(1) => StepMode::Beyond,
        Some(limit) if step >= limit => StepMode::Last,
        _ => StepMode::Normal,
    }
}

/// The reminder appended (as a user message, to the request only) on the
/// last step.
pub const MAX_STEPS_PROMPT: &str = "<system-reminder>\nMAXIMUM STEPS REACHED. Tools are disabled for the rest of this turn. Do not call any tool. Reply with text only: summarise what has been done, what remains, and what the user should do next.\n</system-reminder>";
