//! [`NonInteractive`]: the approver of an engine built without a
//! permission gate of the host's. Nobody can answer an ask, so waiting
//! would hang the turn: every ask is rejected at once, with opencode's
//! non-interactive warning (§16) as a `tracing` warning.

use agentgate_permission::{Approver, PermissionRequest, Reply};
use async_trait::async_trait;

/// The warning opencode's `run` prints before rejecting an ask (§16):
/// `permission requested: <permission> (<patterns>); auto-rejecting`.
pub fn auto_reject_warning(request: &PermissionRequest) -> String {
    format!(
        "permission requested: {} ({}); auto-rejecting",
        request.permission,
        request.patterns.join(", ")
    )
}

/// Rejects every ask (without feedback, so the turn stops with
/// [`StopReason::Rejected`](crate::StopReason::Rejected)) and logs
/// opencode's `run` warning (`permission requested: <permission>
/// (<patterns>); auto-rejecting`) through `tracing`, with the session id.
///
/// [`EngineBuilder`](crate::EngineBuilder) installs it when no
/// [`PermissionGate`](agentgate_permission::PermissionGate) is given. A host with a
/// UI passes its own gate (with an approver, or answering
/// `PermissionGate::reply` from the event stream) instead.
#[derive(Debug, Clone, Copy, Default)]
pub struct NonInteractive;

#[async_trait]
impl Approver for NonInteractive {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        tracing::warn!(
            session_id = %request.session_id,
            permission = %request.permission,
            "{}",
            auto_reject_warning(request)
        );
        Reply::reject()
    }
}
