//! How a host plugs its approval UI into the gate: the [`Approver`] trait and
//! three ready-made approvers, [`RejectAll`], [`AllowAll`] and
//! [`ChannelApprover`].
//!
//! With an approver attached to a [`PermissionGate`](crate::PermissionGate)
//! service, every request that needs a prompt is handed to
//! [`Approver::approve`] on a task of its own, and the answer is applied as
//! [`PermissionGate::reply`](crate::PermissionGate::reply) would. When the
//! request is resolved first (a sibling's `reject` or `always` cascade, the
//! asker giving up, a timeout, a shutdown), the approver's future is dropped
//! at its next `.await`, and an answer that still arrives is ignored.
//!
//! Hosts that prefer events can skip approvers entirely: follow
//! [`PermissionGate::subscribe`](crate::PermissionGate::subscribe) and call
//! `reply` yourself.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

use crate::audit::Answerer;
use crate::request::{PermissionRequest, Reply};

/// A host's approval UI: decides each request that a rule sent to `ask`.
///
/// The future may take as long as a human needs. It is dropped, and never
/// polled again, when the request is resolved by other means first, so keep
/// cleanup in `Drop` guards rather than after the last `.await`.
///
/// [`PermissionRequest::answers`] lists the answers that mean something for
/// the request (offer only those), and [`PermissionRequest::always_rules`]
/// shows exactly what an `always` answer would approve.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decides `request`.
    async fn approve(&self, request: &PermissionRequest) -> Reply;

    /// Who this approver's answers come from, for the audit trail
    /// ([`Answerer`]); by default [`Answerer::Approver`] with the type's
    /// name.
    fn answerer(&self) -> Answerer {
        Answerer::Approver {
            name: std::any::type_name::<Self>().to_string(),
        }
    }

    /// Decides `request` and says who answered: by default
    /// [`approve`](Self::approve) and [`answerer`](Self::answerer). The
    /// gate calls this one; override it when the answerer differs from one
    /// answer to the next.
    async fn approve_as(&self, request: &PermissionRequest) -> (Reply, Answerer) {
        (self.approve(request).await, self.answerer())
    }
}

/// The line opencode's non-interactive mode prints before rejecting (§16),
/// without the trailing newline.
pub fn auto_reject_line(request: &PermissionRequest) -> String {
    format!(
        "permission requested: {} ({}); auto-rejecting",
        request.permission,
        request.patterns.join(", ")
    )
}

/// Rejects every request (without feedback, which stops the agent loop),
/// after writing opencode's warning line
/// `permission requested: <permission> (<patterns>); auto-rejecting` to its
/// writer: the non-interactive default of `opencode run` (§16).
pub struct RejectAll {
    out: Mutex<Box<dyn Write + Send>>,
}

impl RejectAll {
    /// Writes the warning lines to `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        RejectAll {
            out: Mutex::new(Box::new(out)),
        }
    }

    /// Writes the warning lines to standard error (also the [`Default`]).
    pub fn stderr() -> Self {
        Self::new(std::io::stderr())
    }
}

impl Default for RejectAll {
    fn default() -> Self {
        Self::stderr()
    }
}

impl std::fmt::Debug for RejectAll {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RejectAll").finish_non_exhaustive()
    }
}

#[async_trait]
impl Approver for RejectAll {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        let line = auto_reject_line(request);
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        // A broken writer must not turn a rejection into a hang or a panic.
        if let Err(err) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            tracing::warn!(%err, "RejectAll could not write its warning line");
        }
        Reply::reject()
    }

    fn answerer(&self) -> Answerer {
        Answerer::NonInteractive
    }
}

/// Allows every request once (`--dangerously-skip-permissions`). Deny rules
/// still deny: an approver only answers requests that would prompt.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Approver for AllowAll {
    async fn approve(&self, _request: &PermissionRequest) -> Reply {
        Reply::Once
    }

    fn answerer(&self) -> Answerer {
        Answerer::Auto
    }
}

/// One request forwarded by a [`ChannelApprover`], with the handle to
/// answer it.
#[derive(Debug)]
pub struct ApprovalRequest {
    /// The request to decide. [`PermissionRequest::answers`] lists the
    /// buttons worth showing.
    pub request: PermissionRequest,
    responder: oneshot::Sender<(Reply, Option<Answerer>)>,
}

impl ApprovalRequest {
    /// Answers the request. Returns `false` when the answer is no longer
    /// wanted (the request was resolved by other means meanwhile).
    pub fn respond(self, reply: Reply) -> bool {
        self.responder.send((reply, None)).is_ok()
    }

    /// [`respond`](Self::respond), naming who answered for the audit trail
    /// (otherwise the approver's [`ChannelApprover::answered_by`]).
    pub fn respond_as(self, reply: Reply, answered_by: Answerer) -> bool {
        self.responder.send((reply, Some(answered_by))).is_ok()
    }

    /// Whether the request was resolved by other means, so the UI can
    /// dismiss its prompt.
    pub fn is_cancelled(&self) -> bool {
        self.responder.is_closed()
    }

    /// Completes when the request is resolved by other means (a cascade, a
    /// timeout, the asker giving up); select on it to dismiss a prompt.
    pub async fn cancelled(&mut self) {
        self.responder.closed().await;
    }
}

/// Forwards each request over a channel to a UI running elsewhere (another
/// task, a TUI, a web handler) and waits for its answer.
///
/// If the receiving side is gone, or drops an [`ApprovalRequest`] without
/// answering, the request is rejected, so nothing ever hangs on a vanished
/// UI.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use agentgate_permission::{ChannelApprover, Reply};
/// let (approver, mut requests) = ChannelApprover::new(16);
/// tokio::spawn(async move {
///     while let Some(pending) = requests.recv().await {
///         println!("{} wants {:?}", pending.request.permission, pending.request.patterns);
///         pending.respond(Reply::Once);
///     }
/// });
/// # drop(approver);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ChannelApprover {
    sender: mpsc::Sender<ApprovalRequest>,
    answered_by: Answerer,
}

impl ChannelApprover {
    /// A channel approver with room for `buffer` unanswered requests in the
    /// channel (at least 1), and the receiver the UI reads them from.
    pub fn new(buffer: usize) -> (Self, mpsc::Receiver<ApprovalRequest>) {
        let (sender, receiver) = mpsc::channel(buffer.max(1));
        (Self::from_sender(sender), receiver)
    }

    /// A channel approver sending into an existing channel.
    pub fn from_sender(sender: mpsc::Sender<ApprovalRequest>) -> Self {
        ChannelApprover {
            sender,
            answered_by: Answerer::Approver {
                name: "ChannelApprover".to_string(),
            },
        }
    }

    /// Names who answers at the other end of the channel (the terminal,
    /// say), for the answers given with [`ApprovalRequest::respond`].
    pub fn answered_by(mut self, answerer: Answerer) -> Self {
        self.answered_by = answerer;
        self
    }
}

#[async_trait]
impl Approver for ChannelApprover {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.approve_as(request).await.0
    }

    fn answerer(&self) -> Answerer {
        self.answered_by.clone()
    }

    async fn approve_as(&self, request: &PermissionRequest) -> (Reply, Answerer) {
        let (responder, answer) = oneshot::channel();
        let forwarded = ApprovalRequest {
            request: request.clone(),
            responder,
        };
        if self.sender.send(forwarded).await.is_err() {
            tracing::warn!(id = %request.id, "approval UI channel closed; rejecting");
            return (Reply::reject(), Answerer::NonInteractive);
        }
        match answer.await {
            Ok((reply, answerer)) => (reply, answerer.unwrap_or_else(|| self.answerer())),
            Err(_) => (Reply::reject(), self.answerer()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> PermissionRequest {
        PermissionRequest {
            id: "per_1".into(),
            session_id: "s".into(),
            permission: "bash".into(),
            patterns: vec!["ls".into(), "rm -rf /".into()],
            always: vec![],
            metadata: serde_json::json!({}),
            tool: None,
        }
    }

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn reject_all_prints_opencodes_line() {
        let out = Shared::default();
        let approver = RejectAll::new(out.clone());
        assert_eq!(approver.approve(&request()).await, Reply::reject());
        assert_eq!(
            String::from_utf8(out.0.lock().unwrap().clone()).unwrap(),
            "permission requested: bash (ls, rm -rf /); auto-rejecting\n"
        );
    }

    #[tokio::test]
    async fn allow_all_answers_once() {
        assert_eq!(AllowAll.approve(&request()).await, Reply::Once);
    }

    #[tokio::test]
    async fn channel_approver_forwards_and_rejects_when_dropped() {
        let (approver, mut rx) = ChannelApprover::new(4);
        let ui = tokio::spawn(async move {
            let first = rx.recv().await.unwrap();
            assert!(!first.is_cancelled());
            first.respond(Reply::Always);
            let second = rx.recv().await.unwrap();
            drop(second);
        });
        assert_eq!(approver.approve(&request()).await, Reply::Always);
        assert_eq!(approver.approve(&request()).await, Reply::reject());
        ui.await.unwrap();
        // The receiver is gone now: reject without waiting.
        assert_eq!(approver.approve(&request()).await, Reply::reject());
    }
}
