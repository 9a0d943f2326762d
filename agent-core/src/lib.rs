//! # agent-core
//!
//! The engine of the agent SDK: messages, the provider-agnostic streaming
//! [`LanguageModel`](https://docs.rs/agent-core) trait, the `Tool` trait and
//! registry, agents, sessions and the step/stream loop. It depends on
//! [`agent_permission`] for every permission decision.
//!
//! ```
//! // The permission engine is re-exported for convenience.
//! use agent_core::permission::{Action, evaluate, Ruleset};
//! let rules: Ruleset = serde_json::from_str(r#"[{"permission":"bash","pattern":"*","action":"allow"}]"#).unwrap();
//! assert_eq!(evaluate("bash", "ls", &[&rules]).action, Action::Allow);
//! ```

pub mod agent;

pub use agent_permission as permission;
