//! # agentgate-permission
//!
//! The permission engine of the agent SDK, exact to opencode's semantics:
//!
//! - a [`Rule`] is `{permission, pattern, action}` with [`Action`] `allow | deny | ask`;
//! - rulesets are merged by concatenation ([`merge`]) and evaluated **last match
//!   wins**, with `ask` when nothing matches ([`evaluate()`]);
//! - [`disabled`] says which tools vanish from the model's tool list;
//! - [`from_config`] turns opencode's `permission` config into rules;
//! - the [`PermissionGate`] gate makes tools `await` an answer when a rule says
//!   `ask`, from an [`Approver`] (the host's UI) or from `reply` calls driven
//!   by [`PermissionEvent`]s, with "always" approvals kept in an
//!   [`ApprovalStore`]. The [`PermissionGate`] docs show a complete host as a
//!   runnable example. The gate, the approvers and the stores are the
//!   default-on `gate` cargo feature; without it the crate is the pure rules
//!   engine and needs no async runtime (serde and little else).
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
//! use agentgate_permission::{evaluate, from_config_with_home, merge, Action, PermissionConfig};
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

// Private modules, one job each; the items users need are re-exported below
// (this list is the crate's API). `wildcard`, `arity` and `private_files`
// stay namespaces.
mod always;
#[cfg(feature = "gate")]
mod approver;
pub mod arity;
#[cfg(feature = "gate")]
mod ask_span;
#[cfg(feature = "gate")]
mod audit;
mod compiled;
mod config;
mod error;
#[cfg(feature = "gate")]
mod gate;
mod layered;
mod lint;
pub mod private_files;
mod radix;
mod request;
mod rule;
mod ruleset;
#[cfg(feature = "gate")]
mod store;
mod subagent;
pub mod wildcard;

/// The data model: rules, actions and ordered rulesets (§1).
pub use rule::{Action, ParseActionError, Rule, Ruleset};

/// Merging, evaluating (last match wins) and tool disabling (§4, §5).
pub use ruleset::{decide, disabled, evaluate, find_last, is_disabled, merge, tool_permission};

/// opencode's `permission` config and its translation into rules (§3).
pub use config::{
    ConfigError, PermissionConfig, PermissionValue, describe_value, expand_home, from_config,
    from_config_with_home, home_dir,
};

/// Rules kept with their origin, and the explanation of a decision.
pub use layered::{Explanation, Layer, Layered, RuleRef};

/// Findings about rules that can never decide or are out of order.
pub use lint::{
    BUILTIN_PERMISSIONS, Finding, FindingKind, LintOptions, Severity, covers, lint, lint_with,
};

/// The indexed, allocation-free evaluator.
pub use compiled::{CompiledRuleset, Decision};

/// Permissions of sub-agent sessions (§10).
pub use subagent::{derive_subagent_permission, task_child_permission};

/// Requests, replies and why a request failed (§1, §6).
pub use error::PermissionError;
/// Request and reply data shared by the gate and its hosts.
pub use request::{
    Allowed, AskRequest, PermissionRequest, Reply, ReplyKind, SANDBOX_GRANT_KEY, ToolCallRef,
    is_storable_always_pattern,
};

/// What each "always" answer stores, named and said in words.
pub use always::{AlwaysChoice, describe_pattern};

/// The async approval gate (§6), behind the `gate` feature.
#[cfg(feature = "gate")]
pub use gate::{
    AnsweredHook, DEFAULT_EVENT_CAPACITY, DEFAULT_PROJECT, PermissionEvent, PermissionGate,
    PermissionGateBuilder,
};

/// Approval UIs plugged into the gate, behind the `gate` feature.
#[cfg(feature = "gate")]
pub use approver::{
    AllowAll, ApprovalRequest, Approver, ChannelApprover, RejectAll, auto_reject_line,
};

/// The audit trail of the gate's decisions, behind the `gate` feature.
#[cfg(feature = "gate")]
pub use audit::{Answerer, AuditEntry, AuditSink, PatternDecision};

/// The `tracing` target of the gate's `permission` spans, behind the
/// `gate` feature.
#[cfg(feature = "gate")]
pub use ask_span::TARGET as TRACE_TARGET;

/// Where "always" approvals are kept, behind the `gate` feature.
#[cfg(feature = "gate")]
pub use store::{ApprovalStore, JsonFileStore, MemoryStore, StoreError};
