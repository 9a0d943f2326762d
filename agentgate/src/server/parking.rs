//! Parking: a turn that waits at an ask costs the server nothing.
//!
//! With a relay whose asks outlive the process (SQLite, PostgreSQL), the
//! ask is stored as the turn's commit point before its answer counts. So
//! once a turn has waited at an ask for the server's park time
//! ([`ServerBuilder::park_asks_after`](super::ServerBuilder::park_asks_after)),
//! the server drops it from memory:
//!
//! 1. the relay is told this process no longer holds the ask
//!    ([`AskRelay::release`](crate::store::AskRelay::release)), so from then
//!    on an answer, on any server, claims the ask and resumes the turn
//!    there ([`Engine::resume_ask`](crate::Engine::resume_ask));
//! 2. the gate sets the ask aside unanswered
//!    ([`PermissionGate::park`](crate::permission::PermissionGate::park)):
//!    an answer that arrived first wins, and the turn simply goes on;
//! 3. the turn's future is dropped where it waits, so nothing more of it is
//!    stored, and the session leaves memory once no request holds it.
//!
//! Only a turn of a served session with a single pending ask is parked (a
//! sub-agent's ask, or two asks of one step at once, stay in memory).

use std::sync::Arc;

use super::state::Shared;
use crate::permission::PermissionRequest;

/// Why a turn was not parked now.
enum NotNow {
    /// It may be later: a request or a queued prompt holds the session
    /// (a prompt queued behind the ask must keep waiting for it, not run
    /// in its place).
    Held,
    /// It never will: answered, or a turn that is not parked (see the
    /// [module](self)).
    Never,
}

/// How often a turn that could not be parked because its session was held
/// is tried again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(1);

impl Shared {
    /// Parks the turn waiting at `request` once it has waited for the
    /// server's park time, if it still waits then (and once its session is
    /// no longer held by another request).
    pub(crate) fn park_later(self: &Arc<Self>, request: PermissionRequest) {
        let Some(after) = self.park_after else {
            return;
        };
        let shared = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            while let Some(shared) = shared.upgrade() {
                match shared.park(&request).await {
                    Ok(()) | Err(NotNow::Never) => return,
                    Err(NotNow::Held) => {}
                }
                drop(shared);
                tokio::time::sleep(RETRY).await;
            }
        });
    }

    /// Parks the turn waiting at `request` (see the [module](self)).
    async fn park(&self, request: &PermissionRequest) -> Result<(), NotNow> {
        let served = self
            .sessions
            .get(&request.session_id)
            .ok_or(NotNow::Never)?;
        let waiting: Vec<String> = (self.gate.pending().into_iter())
            .filter(|r| r.session_id == request.session_id)
            .map(|r| r.id)
            .collect();
        if waiting != [request.id.as_str()] {
            return Err(NotNow::Never);
        }
        if served.holders() > 3 {
            // The map, the waiting turn and this: anyone else waits too.
            return Err(NotNow::Held);
        }
        if let Err(error) = self.relay.release(&request.id).await {
            tracing::warn!(%error, request = %request.id, "an ask could not be released; its turn stays in memory");
            return Err(NotNow::Never);
        }
        if self.gate.park(&request.id).is_none() {
            // Answered meanwhile: the turn goes on here.
            return Err(NotNow::Never);
        }
        tracing::debug!(session_id = %request.session_id, request = %request.id, "parked the turn waiting at an ask");
        served.park();
        Ok(())
    }
}
