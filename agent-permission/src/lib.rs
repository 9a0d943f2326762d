//! # agent-permission
//!
//! The permission engine of the agent SDK, exact to opencode's semantics:
//!
//! - a [`Rule`] is `{permission, pattern, action}` with [`Action`] `allow | deny | ask`;
//! - rulesets are merged by concatenation ([`merge`]) and evaluated **last match
//!   wins**, with `ask` when nothing matches ([`evaluate()`]);
//! - [`disabled`] says which tools vanish from the model's tool list;
//! - [`from_config`] turns opencode's `permission` config into rules;
//! - the [`Permissions`] gate makes tools `await` an answer when a rule says
//!   `ask`, from an [`Approver`] (the host's UI) or from `reply` calls driven
//!   by [`PermissionEvent`]s, with "always" approvals kept in an
//!   [`ApprovalStore`]. The [`gate`] module docs show a complete host as a
//!   runnable example.
//!
//! Beyond opencode, the engine explains itself and goes fast:
//!
//! - [`Layered`] keeps where each rule came from (defaults, agent, user
//!   config, session, approvals); [`Layered::explain`] names the deciding
//!   rule and the earlier rules it overrode;
//! - [`lint()`] finds rules that can never decide, specific rules placed
//!   before generic ones, and unknown permission names;
//! - [`CompiledRuleset`] answers exactly like [`evaluate()`] without
//!   allocating, in time that does not grow with the number of rules;
//! - [`arity::prefix`] and [`derive_subagent_permission`] reproduce the bash
//!   "always" patterns and sub-agent permissions.
//!
//! Deliberate differences from opencode are listed, with reasons, in the
//! repository's `docs/deviations.md`.
//!
//! ```
//! use agent_permission::{evaluate, from_config_with_home, merge, Action, PermissionConfig};
//!
//! let defaults: PermissionConfig = serde_json::from_str(r#"{"*": "allow", "bash": "ask"}"#).unwrap();
//! let user: PermissionConfig = serde_json::from_str(r#"{"bash": {"git *": "allow", "git push *": "deny"}}"#).unwrap();
//! let rules = merge([
//!     &from_config_with_home(&defaults, "/home/me"),
//!     &from_config_with_home(&user, "/home/me"),
//! ]);
//! assert_eq!(evaluate("bash", "git status", &[&rules]).action, Action::Allow);
//! assert_eq!(evaluate("bash", "git push origin", &[&rules]).action, Action::Deny);
//! assert_eq!(evaluate("bash", "rm -rf /", &[&rules]).action, Action::Ask);
//! assert_eq!(evaluate("read", "src/lib.rs", &[&rules]).action, Action::Allow);
//! ```

pub mod approver;
pub mod arity;
pub mod compiled;
pub mod config;
pub mod error;
pub mod gate;
pub mod layered;
pub mod lint;
mod radix;
pub mod request;
pub mod rule;
pub mod ruleset;
pub mod store;
pub mod subagent;
pub mod wildcard;

pub use approver::{AllowAll, ApprovalRequest, Approver, ChannelApprover, RejectAll};
pub use compiled::{CompiledRuleset, Decision};
pub use config::{
    ConfigError, PermissionConfig, PermissionValue, from_config, from_config_with_home,
};
pub use error::PermissionError;
pub use gate::{PermissionEvent, Permissions, PermissionsBuilder};
pub use layered::{Explanation, Layer, Layered, RuleRef};
pub use lint::{BUILTIN_PERMISSIONS, Finding, FindingKind, covers, lint};
pub use request::{AskRequest, PermissionRequest, Reply, ReplyKind, ToolCallRef};
pub use rule::{Action, ParseActionError, Rule, Ruleset};
pub use ruleset::{decide, disabled, evaluate, find_last, is_disabled, merge, tool_permission};
pub use store::{ApprovalStore, JsonFileStore, MemoryStore, StoreError};
pub use subagent::{derive_subagent_permission, task_child_permission};
