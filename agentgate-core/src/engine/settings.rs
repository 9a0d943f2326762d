//! [`LoopSettings`]: the engine's settings for every turn.

use std::time::Duration;

use super::retry::RetryPolicy;
use super::step_size::DEFAULT_MAX_STEP_BYTES;
use crate::compaction::CompactionSettings;
use crate::truncate::Truncator;

/// Grace period tools get to stop after cancellation (opencode: 250 ms).
pub const DEFAULT_TOOL_GRACE: Duration = Duration::from_millis(250);

/// Loop settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoopSettings {
    /// Retries of failed streams.
    pub retry: RetryPolicy,
    /// Tool output truncation.
    pub truncator: Truncator,
    /// Overflow detection.
    pub compaction: CompactionSettings,
    /// Ask `doom_loop` on the third identical call of a turn.
    pub doom_loop: bool,
    /// How long a cancelled tool may take to stop before it is abandoned.
    /// Default 250 ms, as opencode.
    pub tool_grace: Duration,
    /// Step limit for agents without their own (`None`: unlimited).
    pub max_steps: Option<u32>,
    /// How deep sub-agents may nest (§10.3, `subagent_depth`, default 1):
    /// the `task` tool refuses to run in a session with this many parent
    /// hops to its root. With 1, only root sessions spawn sub-agents.
    pub subagent_depth: u32,
    /// A deadline for a whole turn (model calls, retries, tools): when it
    /// passes, the turn is stopped as if cancelled and ends with
    /// [`StopReason::Error`](crate::StopReason::Error) named `timeout`.
    /// `None` (the default): no deadline. `agent run --max-time` sets it.
    pub max_turn_time: Option<Duration>,
    /// How long a permission ask waits for an answer: past it the call is
    /// not run and the turn stops, saying nobody answered
    /// ([`PermissionError::Expired`](agentgate_permission::PermissionError::Expired)).
    /// `None` (the default): asks wait until answered. `agent serve
    /// --ask-deadline` sets it, so unattended work always ends.
    pub ask_deadline: Option<Duration>,
    /// The most one model step may stream (text, reasoning, tool
    /// arguments), in bytes; past it the step fails with an error saying
    /// so. Default 32 MB.
    pub max_step_bytes: usize,
    /// Record prompt and completion contents on the trace spans: the
    /// OpenTelemetry GenAI conventions' opt-in attributes
    /// `gen_ai.system_instructions`, `gen_ai.input.messages` and
    /// `gen_ai.output.messages` of each `chat` span. Off by default: the
    /// spans then carry names, ids, models, token counts and errors only.
    pub trace_contents: bool,
}

impl Default for LoopSettings {
    fn default() -> Self {
        LoopSettings {
            retry: RetryPolicy::default(),
            truncator: Truncator::default(),
            compaction: CompactionSettings::default(),
            doom_loop: true,
            tool_grace: DEFAULT_TOOL_GRACE,
            max_steps: None,
            subagent_depth: 1,
            max_turn_time: None,
            trace_contents: false,
            ask_deadline: None,
            max_step_bytes: DEFAULT_MAX_STEP_BYTES,
        }
    }
}
