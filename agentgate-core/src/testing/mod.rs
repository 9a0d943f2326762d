//! Test support, behind the `test-util` cargo feature: the
//! [`ScriptedModel`] double, and ([`semantics`]) the engine's pure
//! decisions and texts, which the conformance tests compare with opencode.
//!
//! Delays use `tokio::time::sleep`, so tests under a paused clock
//! (`#[tokio::test(start_paused = true)]`) run instantly and deterministically.

mod scripted;

pub use scripted::{Script, ScriptItem, ScriptedModel};

/// The engine's pure decision functions and fixed texts, exposed for tests
/// only (they are not part of the stable API): the loop's exit rule and
/// step limit (§12), overflow (§14.1), retry schedule and retryable errors
/// (§13), doom-loop detection (§11.2), compaction texts and task output.
pub mod semantics {
    pub use crate::compaction::config::OUTPUT_TOKEN_MAX;
    pub use crate::compaction::history::SUMMARY_QUESTION;
    pub use crate::compaction::overflow::{is_overflow, max_output, usable};
    pub use crate::compaction::plan::{
        CONTINUE_PROMPT, SUMMARY_PROMPT, TOOL_OUTPUT_LIMIT, estimate_tokens, preserve_budget,
    };
    pub use crate::engine::doom_loop::{
        DOOM_LOOP_PERMISSION, DOOM_LOOP_THRESHOLD, ask_request as doom_loop_request,
        canonical_json, check_message as doom_loop_in_message, check_turn as doom_loop_in_turn,
        check_turn_parts as doom_loop_in_turn_parts,
    };
    pub use crate::engine::retry::{
        INITIAL_DELAY_MS, MAX_DELAY_MS, MAX_DELAY_NO_HEADERS_MS, delay as retry_delay,
        delay_at as retry_delay_at, parse_http_date, retryable, retryable_message,
    };
    pub use crate::engine::task_tool::{
        NO_DESCRIPTION, TASK_DESCRIPTION, completed_output, error_output, task_description,
    };
    pub use crate::engine::turn_rules::{
        ExitState, MAX_STEPS_PROMPT, StepMode, is_last_step, should_exit, step_mode,
    };
}
