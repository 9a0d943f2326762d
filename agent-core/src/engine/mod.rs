//! The engine: everything that runs a turn. The facade ([`Engine`]) and its
//! builder, the turn driver and its pure rules, the stream processor, tool
//! execution, retries, truncation, doom-loop detection and the `task` tool.
//!
//! Files (the turn driver's modules may use each other; nothing outside
//! `engine` is used by the contracts):
//!
//! - `facade.rs`, `builder.rs`, `settings.rs`, `outcome.rs`: the public face;
//! - `state.rs`: what every turn of one engine shares;
//! - `turn.rs`, `turn_compaction.rs`, `turn_rules.rs`: the turn driver;
//! - `processor.rs`, `tool_calls.rs`: one step, and its tool calls;
//! - `retry.rs`, `truncate.rs`, `doom_loop.rs`: the policies steps apply;
//! - `task_tool.rs`: sub-agents (§10).

mod builder;
pub(crate) mod doom_loop;
mod facade;
mod outcome;
mod processor;
pub(crate) mod retry;
mod settings;
mod state;
pub(crate) mod task_tool;
mod tool_calls;
mod truncate;
mod turn;
mod turn_compaction;
pub(crate) mod turn_rules;

pub use builder::EngineBuilder;
pub use facade::Engine;
pub use outcome::{PromptError, StopReason, TurnResult};
pub use retry::{RetryInfo, RetryPolicy};
pub use settings::LoopConfig;
pub use task_tool::{TaskArgs, TaskError, TaskSettings};
pub use tool_calls::{DEFAULT_TOOL_GRACE, STEP_LIMIT_ERROR};
pub use truncate::{TruncationLimits, Truncator};
pub use turn_compaction::COMPACTION_AGENT;
