//! The audit trail of the gate: what [`PermissionGate`](crate::PermissionGate)
//! tells an installed [`AuditSink`] about every decision it takes — each
//! ask raised, each answer and who gave it, each automatic allow or deny
//! with the rule and the layer that decided it.
//!
//! The gate calls [`AuditSink::record`] synchronously, in the order things
//! happen, sometimes while holding its own lock: a sink must return at once
//! (queue the entry, write it elsewhere). Without a sink the gate builds
//! no entry at all.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use agentgate_permission::{Action, AskRequest, AuditEntry, AuditSink, PermissionGate, Rule, Ruleset};
//!
//! #[derive(Default)]
//! struct Collect(Mutex<Vec<AuditEntry>>);
//! impl AuditSink for Collect {
//!     fn record(&self, entry: AuditEntry) {
//!         self.0.lock().unwrap().push(entry);
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let audit = Arc::new(Collect::default());
//! let gate = PermissionGate::builder().audit(audit.clone()).build().unwrap();
//! let rules = Ruleset::from(vec![Rule::new("bash", "git *", Action::Allow)]);
//! gate.ask(AskRequest::new("s1", "bash", ["git status"]).ruleset(rules)).await.unwrap();
//! let entries = audit.0.lock().unwrap();
//! let AuditEntry::Decided { decisions, .. } = &entries[0] else { panic!() };
//! assert_eq!(decisions[0].layer, "ruleset");
//! assert_eq!(decisions[0].rule, Some(Rule::new("bash", "git *", Action::Allow)));
//! # }
//! ```

use serde::{Deserialize, Serialize};

use crate::request::{AskRequest, PermissionRequest, Reply, ReplyKind, ToolCallRef};
use crate::rule::{Action, Rule, Ruleset};
use crate::ruleset::find_last;

/// Where the gate sends its [`AuditEntry`]s.
///
/// `record` is called on the gate's path, possibly under its lock: it must
/// not block on I/O (queue the entry and write it on a worker, as the
/// stores of `agentgate-store` do).
pub trait AuditSink: Send + Sync {
    /// Takes one entry, in the order the gate decided.
    fn record(&self, entry: AuditEntry);
}

/// Who answered an ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Answerer {
    /// A person at the terminal (`agent chat`, `agent attach`).
    Terminal,
    /// An approver that allows every ask (`agent run --auto`,
    /// [`AllowAll`](crate::AllowAll)).
    Auto,
    /// Nobody could answer, so the ask was rejected at once (the
    /// non-interactive default, [`RejectAll`](crate::RejectAll)).
    NonInteractive,
    /// The client of an Agent Client Protocol connection.
    Acp {
        /// The client's name, as it introduced itself, if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// An HTTP client of `agent serve`.
    Http {
        /// The client's address as the server's socket saw it, if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remote: Option<String>,
    },
    /// A reply given in another process sharing the store, relayed here.
    Relayed,
    /// The answer to another ask of the same session: its `reject` rejects
    /// the session's other pending asks, its `always` allows those its new
    /// rules cover.
    Cascade {
        /// The ask whose answer cascaded.
        request_id: String,
    },
    /// The ask's own timeout.
    Timeout,
    /// The answer given to the same question before the process that asked
    /// it stopped, applied when its turn was resumed
    /// ([`PermissionGate::answer_next`](crate::PermissionGate::answer_next)).
    Resumed {
        /// The id of the ask that was answered.
        request_id: String,
    },
    /// An approver that does not say who it is (its type name).
    Approver {
        /// The approver's Rust type.
        name: String,
    },
    /// A host calling [`PermissionGate::reply`](crate::PermissionGate::reply)
    /// without naming who answered.
    Host,
}

/// How one pattern of a request was decided without an ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternDecision {
    /// The pattern.
    pub pattern: String,
    /// `allow` or `deny` (or `ask`, for a pattern that alone would have
    /// been asked while another pattern was denied).
    pub action: Action,
    /// The rule that decided, `None` when none matched.
    pub rule: Option<Rule>,
    /// The layer holding the rule: `ruleset` (the caller's rules: the
    /// agent's merged with the session's), `ceiling:N` (the rules of the
    /// N-th session above a sub-agent), `approved` (an "always" approval
    /// remembered in the store), or `default` (no rule matched).
    pub layer: String,
}

/// One audited decision of the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditEntry {
    /// Decided by the rules, no ask raised: every pattern allowed, or one
    /// denied.
    Decided {
        /// The session asking.
        session_id: String,
        /// The permission.
        permission: String,
        /// `allow` when every pattern was allowed, else `deny`.
        action: Action,
        /// How each pattern was decided.
        decisions: Vec<PatternDecision>,
        /// The tool call, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<ToolCallRef>,
    },
    /// An ask was raised (`permission.asked`).
    Asked {
        /// The request as shown to whoever answers (its metadata is what
        /// the approval UI shows).
        request: PermissionRequest,
    },
    /// An ask was answered.
    Answered {
        /// The session of the ask.
        session_id: String,
        /// The ask.
        request_id: String,
        /// `once`, `always`, `always_exact`, `reject` or `grant`.
        reply: ReplyKind,
        /// The feedback of a `reject`, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
        /// The rules an `always` answer stored.
        #[serde(default, skip_serializing_if = "Ruleset::is_empty")]
        stored: Ruleset,
        /// Who answered.
        answered_by: Answerer,
    },
    /// An ask ended without an answer: its asker gave up (the turn was
    /// cancelled) or the gate shut down.
    Withdrawn {
        /// The session of the ask.
        session_id: String,
        /// The ask.
        request_id: String,
        /// `cancelled` or `shutdown`.
        reason: String,
    },
    /// A project trust decision (`agent trust`).
    Trust {
        /// The project directory.
        directory: String,
        /// `trusted`, `untrusted` or `forgotten`.
        decision: String,
        /// Who decided (`terminal` for `agent trust` at a terminal).
        decided_by: String,
    },
}

impl AuditEntry {
    /// The session the entry belongs to (`None` for a trust decision).
    pub fn session_id(&self) -> Option<&str> {
        match self {
            AuditEntry::Decided { session_id, .. }
            | AuditEntry::Answered { session_id, .. }
            | AuditEntry::Withdrawn { session_id, .. } => Some(session_id),
            AuditEntry::Asked { request } => Some(&request.session_id),
            AuditEntry::Trust { .. } => None,
        }
    }

    /// The entry's kind, as its `kind` field says: `decided`, `asked`,
    /// `answered`, `withdrawn` or `trust`.
    pub fn kind(&self) -> &'static str {
        match self {
            AuditEntry::Decided { .. } => "decided",
            AuditEntry::Asked { .. } => "asked",
            AuditEntry::Answered { .. } => "answered",
            AuditEntry::Withdrawn { .. } => "withdrawn",
            AuditEntry::Trust { .. } => "trust",
        }
    }

    /// The entry for `reply` to `request`, which stored `stored`.
    pub(crate) fn answered(
        request: &PermissionRequest,
        reply: &Reply,
        stored: Ruleset,
        answered_by: Answerer,
    ) -> Self {
        let feedback = match reply {
            Reply::Reject { feedback } => feedback.clone().filter(|f| !f.is_empty()),
            _ => None,
        };
        AuditEntry::Answered {
            session_id: request.session_id.clone(),
            request_id: request.id.clone(),
            reply: reply.kind(),
            feedback,
            stored,
            answered_by,
        }
    }
}

/// How `req`'s patterns were decided by the rules alone (the caller's
/// ruleset, its ceilings, then `approved`): one [`PatternDecision`] each.
/// Only called when a sink is installed.
pub(crate) fn decisions(req: &AskRequest, approved: Option<&Ruleset>) -> Vec<PatternDecision> {
    req.patterns
        .iter()
        .map(|pattern| decide_pattern(req, pattern, approved))
        .collect()
}

/// The layered decision of one pattern: the strictest layer wins (as the
/// gate bounds the caller's rules by its ceilings), and `approved` counts
/// only for what the rules leave to ask.
fn decide_pattern(req: &AskRequest, pattern: &str, approved: Option<&Ruleset>) -> PatternDecision {
    let mut best = PatternDecision {
        pattern: pattern.to_string(),
        action: Action::Allow,
        rule: None,
        layer: "default".to_string(),
    };
    let layers = std::iter::once(("ruleset".to_string(), &req.ruleset)).chain(
        req.ceilings
            .iter()
            .enumerate()
            .map(|(i, rules)| (format!("ceiling:{}", i + 1), rules)),
    );
    let mut first = true;
    for (layer, rules) in layers {
        let rule = find_last(&req.permission, pattern, &[rules]);
        let action = rule.map_or(Action::Ask, |r| r.action);
        if first || action.stricter(best.action) != best.action {
            best = PatternDecision {
                pattern: pattern.to_string(),
                action,
                rule: rule.cloned(),
                layer: if rule.is_some() {
                    layer
                } else {
                    "default".to_string()
                },
            };
        }
        first = false;
    }
    if best.action == Action::Ask
        && let Some(rule) = approved.and_then(|a| find_last(&req.permission, pattern, &[a]))
    {
        best.action = rule.action;
        best.rule = Some(rule.clone());
        best.layer = "approved".to_string();
    }
    best
}

/// The entry for `req`, decided by the rules with `action`.
pub(crate) fn decided(req: &AskRequest, action: Action, approved: Option<&Ruleset>) -> AuditEntry {
    AuditEntry::Decided {
        session_id: req.session_id.clone(),
        permission: req.permission.clone(),
        action,
        decisions: decisions(req, approved),
        tool: req.tool.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strictest_layer_decides_and_approvals_only_fill_asks() {
        let req = AskRequest::new("s", "bash", ["rm x", "git push", "ls"])
            .ruleset(Ruleset::from(vec![
                Rule::new("bash", "*", Action::Allow),
                Rule::new("bash", "git push", Action::Ask),
            ]))
            .ceilings(vec![Ruleset::from(vec![Rule::new(
                "bash",
                "rm *",
                Action::Deny,
            )])]);
        let approved = Ruleset::from(vec![Rule::new("bash", "git push", Action::Allow)]);
        let found = decisions(&req, Some(&approved));
        assert_eq!(
            (found[0].action, found[0].layer.as_str()),
            (Action::Deny, "ceiling:1")
        );
        assert_eq!(
            (found[1].action, found[1].layer.as_str()),
            (Action::Allow, "approved")
        );
        // No rule of the ceiling matches: it leaves `ls` to ask.
        assert_eq!(
            (found[2].action, found[2].layer.as_str()),
            (Action::Ask, "default")
        );
    }

    #[test]
    fn entries_serialise_with_a_kind_tag() {
        let entry = AuditEntry::Answered {
            session_id: "s".into(),
            request_id: "per_1".into(),
            reply: ReplyKind::Reject,
            feedback: Some("no".into()),
            stored: Ruleset::new(),
            answered_by: Answerer::Http {
                remote: Some("127.0.0.1:5".into()),
            },
        };
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "answered", "session_id": "s", "request_id": "per_1",
                "reply": "reject", "feedback": "no", "answered_by": {"by": "http", "remote": "127.0.0.1:5"}})
        );
        assert_eq!(serde_json::from_value::<AuditEntry>(json).unwrap(), entry);
    }
}
