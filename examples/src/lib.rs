//! # agent-examples
//!
//! The reference command-line program `agent` (see `src/bin/agent.rs`) and
//! the logic behind it, kept in this library so it can be unit-tested:
//!
//! - [`permission_cli`]: `agent permission check | rules | lint | eval`, and
//!   the config loading every command shares ([`permission_cli::Project`]:
//!   `opencode.json(c)` plus markdown agents under `.opencode/`);
//! - [`agents_cli`]: `agent agents` and `agent debug agent NAME`;
//! - [`demo_model`]: the offline demo model `agent run` uses when no
//!   provider is configured;
//! - [`run_cli`]: `agent run`, on [`model_choice`] (which model),
//!   [`render`] (printing a turn's events) and [`workspace`] (the data
//!   directory, its session and approval stores);
//! - [`chat_cli`]: `agent chat`, with [`line_reader`] (the line editor)
//!   and [`spinner`] (the progress line);
//! - [`sessions_cli`]: `agent sessions` and `agent approvals`;
//! - [`debug_cli`]: `agent debug config` and `agent debug prompt`;
//! - [`mcp_cli`]: `agent mcp list`.

pub mod agents_cli;
pub mod chat_cli;
pub mod debug_cli;
pub mod demo_model;
pub mod line_reader;
pub mod mcp_cli;
pub mod model_choice;
pub mod permission_cli;
pub mod render;
pub mod run_cli;
pub mod sessions_cli;
pub mod spinner;
pub mod workspace;

/// The code blocks of the repository's `README.md`, compiled and run as
/// doctests so the README cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The code blocks of `docs/*.md`, compiled and run as doctests.
#[cfg(doctest)]
pub mod docs {
    /// `docs/agent-loop.md`.
    #[doc = include_str!("../../docs/agent-loop.md")]
    pub struct AgentLoop;
    /// `docs/approver.md`.
    #[doc = include_str!("../../docs/approver.md")]
    pub struct Approver;
    /// `docs/providers.md`.
    #[doc = include_str!("../../docs/providers.md")]
    pub struct Providers;
    /// `docs/writing-a-tool.md`.
    #[doc = include_str!("../../docs/writing-a-tool.md")]
    pub struct WritingATool;
}
