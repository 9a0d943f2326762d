//! # agentgate-examples
//!
//! Programs that embed the SDK, under `examples/` (run by `cargo test`:
//! a minimal agent with a custom approver, a typed tool that asks, a custom
//! `LanguageModel`, a host answering asks from another task), and the code
//! blocks of the README and the guides, compiled and run as doctests here.
//! The `agent` command-line program is the `agentgate-cli` package.

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
    /// `docs/stores.md`.
    #[doc = include_str!("../../docs/stores.md")]
    pub struct Stores;
    /// `docs/writing-a-tool.md`.
    #[doc = include_str!("../../docs/writing-a-tool.md")]
    pub struct WritingATool;
}
