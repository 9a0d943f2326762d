//! The `tracing` span of one permission check: a `permission {name}` span
//! (target [`TARGET`]) around [`PermissionGate::ask`](crate::PermissionGate),
//! a child of the tool call that asked. The GenAI semantic conventions
//! name no permission attributes, so these are `agentgate.permission.*`:
//!
//! - `agentgate.permission.name`, `.patterns` (a JSON array), `.session_id`,
//!   and the asking call's `gen_ai.tool.call.id`;
//! - `.decision`: `allow` or `deny` (by the rules, without an ask), or the
//!   answer: `once`, `always`, `grant`, `reject`, `expired`;
//! - `.rule`: the deciding rule of each pattern, with its layer
//!   (`ruleset`, `ceiling:N`, `approved`, `default`), for a decision the
//!   rules took;
//! - `.request_id`, `.answered_by` (as in the audit log) and `.wait_ms`
//!   (how long the ask waited) for an ask.
//!
//! Without a subscriber that wants the span none of this is computed.

use serde_json::json;
use tracing::Span;
use tracing::field::Empty;

use crate::audit::{Answerer, AuditEntry};
use crate::error::PermissionError;
use crate::request::{Allowed, AskRequest, Reply};

/// The target of the permission spans, for a subscriber's filter.
pub const TARGET: &str = "agentgate::permission";

/// The span of the check of `req`.
pub(crate) fn ask_span(req: &AskRequest) -> Span {
    tracing::info_span!(
        target: TARGET,
        "permission",
        otel.name = %format_args!("permission {}", req.permission),
        otel.kind = "internal",
        agentgate.permission.name = req.permission.as_str(),
        agentgate.permission.patterns = %json!(req.patterns),
        agentgate.permission.session_id = req.session_id.as_str(),
        gen_ai.tool.call.id = req.tool.as_ref().map(|tool| tool.call_id.as_str()),
        agentgate.permission.decision = Empty,
        agentgate.permission.rule = Empty,
        agentgate.permission.request_id = Empty,
        agentgate.permission.answered_by = Empty,
        agentgate.permission.wait_ms = Empty,
    )
}

/// Whether `span` wants what the gate notes (a decision's entry is built
/// for it even without an audit sink).
pub(crate) fn wants(span: &Span) -> bool {
    !span.is_disabled()
}

/// Notes an audit entry of the check on its span (the current one while
/// the gate decides): the deciding rules, or the id of the ask raised.
pub(crate) fn note(span: &Span, entry: &AuditEntry) {
    match entry {
        AuditEntry::Decided { decisions, .. } => {
            let rules: Vec<String> = decisions
                .iter()
                .map(|d| match &d.rule {
                    Some(rule) => format!("{rule} ({})", d.layer),
                    None => format!("{} {} ({})", d.pattern, d.action, d.layer),
                })
                .collect();
            span.record("agentgate.permission.rule", rules.join("; "));
        }
        AuditEntry::Asked { request } => {
            span.record("agentgate.permission.request_id", request.id.as_str());
        }
        _ => {}
    }
}

/// Notes who answered the ask of `span`, and how.
pub(crate) fn answered(span: &Span, reply: &Reply, by: &Answerer) {
    if span.is_disabled() {
        return;
    }
    let by = serde_json::to_value(by)
        .ok()
        .and_then(|value| {
            value
                .get("by")
                .and_then(|by| by.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default();
    span.record("agentgate.permission.answered_by", by.as_str());
    let decision = match reply {
        Reply::Once => "once",
        Reply::Always => "always",
        Reply::AlwaysExact => "always_exact",
        Reply::Reject { .. } => "reject",
        Reply::Grant => "grant",
    };
    span.record("agentgate.permission.decision", decision);
}

/// Notes how the check that began at `start` ended: the decision of the
/// rules, and how long an ask waited (any end but the rules' own).
pub(crate) fn ended(
    span: &Span,
    outcome: &Result<Allowed, PermissionError>,
    start: tokio::time::Instant,
) {
    if span.is_disabled() {
        return;
    }
    let asked = match outcome {
        Ok(Allowed::ByRules) => {
            span.record("agentgate.permission.decision", "allow");
            false
        }
        Err(PermissionError::Denied { .. }) => {
            span.record("agentgate.permission.decision", "deny");
            false
        }
        Err(PermissionError::Expired { .. }) => {
            span.record("agentgate.permission.decision", "expired");
            true
        }
        // An answer, which `answered` noted (or an ask dropped unanswered).
        _ => true,
    };
    if asked {
        let waited = i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
        span.record("agentgate.permission.wait_ms", waited);
    }
}
