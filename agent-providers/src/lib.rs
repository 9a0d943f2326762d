//! # agent-providers
//!
//! Streaming model clients (Anthropic, OpenAI, OpenAI-compatible servers)
//! for the agent SDK. This crate is filled by a later milestone; for now it
//! re-exports the crates it builds on.
//!
//! ```
//! use agent_providers::core::permission::Action;
//! assert_eq!(Action::default(), Action::Ask);
//! ```

pub use agent_core as core;
