//! # agent-examples
//!
//! The reference command-line program `agent` (see `src/bin/agent.rs`) and
//! the logic behind it, kept in this library so it can be unit-tested:
//!
//! - [`permission_cli`]: `agent permission check | rules | lint | eval`;
//! - [`jsonc`]: reading `opencode.jsonc` (comments and trailing commas).

pub mod jsonc;
pub mod permission_cli;
