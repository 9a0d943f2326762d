//! Compaction (§14.2): when the context is full, the head of the
//! conversation is replaced by a model-written summary.
//!
//! The loop compacts when a step's usage reaches
//! [`usable`] tokens (then a synthetic user message,
//! [`CONTINUE_PROMPT`], lets the model go on), when the provider reports a
//! context overflow, or when a prompt starts on a session whose last answer
//! already filled the context (then the last real user message is replayed
//! after the summary). With [`CompactionSettings::auto`] off none of this
//! happens and the turn ends with
//! [`StopReason::ContextOverflow`](crate::StopReason::ContextOverflow).
//!
//! A compaction:
//!
//! 1. keeps the last [`CompactionSettings::tail_turns`] user turns verbatim
//!    when they fit [`preserve_budget`] (tokens estimated as characters ÷ 4);
//!    if the newest turns do not fit, fewer are kept (whole turns only,
//!    unlike opencode, which may split the oldest kept turn);
//! 2. sends everything before that tail — starting with the previous
//!    summary, if any — to the model under the `compaction` agent (its
//!    system prompt if registered, tools declared but not callable), with
//!    tool outputs cut to [`TOOL_OUTPUT_LIMIT`] characters and
//!    [`SUMMARY_PROMPT`] last;
//! 3. stores a user message with a [`Part::Compaction`] listing the kept
//!    message ids, then the summary as an assistant message with
//!    [`Message::summary`] set. From then on
//!    [`history_for_model`] sends the summary (as
//!    a [`SUMMARY_QUESTION`] / answer pair), the kept tail and what follows,
//!    never the summarised head. The transcript itself keeps everything.
//!
//! A summary call that fails (it overflows too, or returns no text) ends
//! the turn with [`StopReason::Error`](crate::StopReason::Error); two
//! compactions without a successful step in between end it with
//! `ContextOverflow` instead of looping. Summary calls do not count as
//! steps and are not part of [`TurnResult::messages`](crate::TurnResult).

pub(crate) mod config;
pub(crate) mod history;
pub(crate) mod overflow;
pub(crate) mod plan;

pub use config::CompactionSettings;
pub use history::history_for_model;
pub(crate) use overflow::{is_overflow, request_output_cap};
pub(crate) use plan::{CONTINUE_PROMPT, plan, preserve_budget};
