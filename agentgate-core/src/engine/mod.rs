//! The engine: everything that runs a turn. The facade ([`Engine`]) and its
//! builder, the turn driver and its pure rules, the stream processor, tool
//! execution, retries, truncation, doom-loop detection and the `task` tool.
//!
//! Files (their imports form no cycle, and nothing in `engine` is used by
//! the contracts):
//!
//! - `facade.rs`, `builder.rs`, `settings.rs`, `outcome.rs`: the public face;
//! - `state.rs`: what every turn of one engine shares;
//! - `turn_context.rs`: what one turn's steps and calls read, built once;
//! - `turn.rs`, `turn_compaction.rs`, `turn_rules.rs`: the turn driver;
//! - `processor.rs`, `tool_calls.rs`, `step_size.rs`: one step, its tool
//!   calls, and the ceiling on what it may stream;
//! - `retry.rs`, `doom_loop.rs`: the policies steps apply;
//! - `turn_stream.rs`: a turn as a stream of events ending with its result;
//! - `non_interactive.rs`: the approver of an engine without a gate;
//! - `structured_run.rs`: a prompt whose answer must match a JSON schema;
//! - `from_config.rs`: a loaded configuration mapped to a builder, no IO;
//! - `hook_calls.rs`: running the engine's hooks and combining answers;
//! - `permission_preset.rs`: the named permission defaults it can layer in;
//! - `task_tool.rs`: sub-agents (§10);
//! - `titles.rs`: session titles from the hidden `title` agent
//!   (`title_setting.rs`: whether and with which model);
//! - `user_tool.rs`: a tool run on the user's behalf under the same gate;
//! - `command_run.rs`: a custom command expanded through those tools;
//! - `shell_run.rs`: a user's shell command, recorded and run as a `bash`
//!   call through the step's tool-call path;
//! - `manual_compaction.rs`: a compaction the user asks for;
//! - `step_patch.rs`: a step's checkpoint, taken when it ends;
//! - `trace_spans.rs`: the OpenTelemetry GenAI spans of turns, model calls
//!   and tool calls;
//! - `resume.rs`: a turn stopped at an ask, continued once it is answered
//!   (`abandoned_calls.rs`: the calls a stopped process left open);
//! - `revert.rs`: revert, unrevert and the diff of a message, from those
//!   (`text_diff.rs`: one file's unified diff).

mod abandoned_calls;
mod builder;
mod command_run;
pub(crate) mod doom_loop;
mod facade;
mod from_config;
pub(crate) mod hook_calls;
mod manual_compaction;
mod model_family;
mod model_options;
mod non_interactive;
mod outcome;
mod permission_preset;
mod processor;
mod reminders;
mod resume;
pub(crate) mod retry;
mod revert;
mod settings;
mod shell_run;
mod state;
mod step_patch;
mod step_size;
mod structured_run;
pub(crate) mod task_tool;
mod text_diff;
mod title_setting;
mod titles;
mod tool_calls;
pub(crate) mod trace_spans;
mod turn;
mod turn_compaction;
mod turn_context;
pub(crate) mod turn_rules;
mod turn_stream;
mod user_tool;

pub use builder::EngineBuilder;
pub use command_run::{CommandError, PreparedCommand, SubtaskPlan};
pub use facade::{Engine, PromptOptions};
pub use from_config::{EngineSetup, EngineSetupError};
pub use non_interactive::NonInteractive;
pub use outcome::{PromptError, StopReason, TurnError, TurnResult};
pub use permission_preset::PermissionPreset;
pub use retry::{
    DEFAULT_MAX_DELAY_MS, DEFAULT_MAX_ELAPSED_MS, DEFAULT_MAX_RETRIES, RetryHistory, RetryInfo,
    RetryPlan, RetryPolicy,
};
pub use revert::{RevertError, Rewind};
pub use settings::LoopSettings;
pub use task_tool::{TaskArgs, TaskError, TaskSettings};
pub use text_diff::{DiffStatus, FileDiff};
pub use title_setting::{SessionTitles, TITLE_AGENT};
pub use tool_calls::STEP_LIMIT_ERROR;
pub use turn_compaction::COMPACTION_AGENT;
pub use turn_stream::TurnEvent;
pub use user_tool::RunToolError;
