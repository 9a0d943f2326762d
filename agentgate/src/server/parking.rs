//! Parking: a turn that waits at an ask costs the server nothing.
//!
//! With a relay whose asks outlive the process (SQLite, PostgreSQL), the
//! ask is stored as the turn's commit point before its answer counts. So
//! once a turn has waited at an ask for the server's park time
//! ([`ServerBuilder::park_asks_after`](super::ServerBuilder::park_asks_after)),
//! the server drops it from memory:
//!
//! 1. the gate sets the ask aside unanswered
//!    ([`PermissionGate::park`](crate::permission::PermissionGate::park)):
//!    an answer that arrived first wins, and the turn simply goes on;
//! 2. the turn's future is dropped where it waits, so nothing more of it is
//!    stored, and the session leaves memory once no request holds it;
//! 3. the relay is told this process no longer holds the ask
//!    ([`AskRelay::release`](crate::store::AskRelay::release)), so from then
//!    on an answer, on any server, claims the ask and resumes the turn
//!    there ([`Engine::resume_ask`](crate::Engine::resume_ask)). An answer
//!    that reaches this process before (sent here, or relayed because the
//!    relay still named it the owner) is claimed and resumed here the same
//!    way: no answer given after step 1 is lost.
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
    /// In a moment: the turn has not yet stored the message of the asked
    /// call (it does so as the ask is raised), and a parked turn is
    /// resumed from that message.
    Soon,
}

/// How often a turn that could not be parked because its session was held
/// is tried again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// How often a turn whose asked call's message is not stored yet is tried
/// again.
const RETRY_SOON: std::time::Duration = std::time::Duration::from_millis(20);

/// How many times (10 s in all) a turn whose asked call's message is not
/// stored yet is tried again before it stays in memory.
const MAX_SOON: u32 = 500;

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
            let mut soon = 0u32;
            while let Some(shared) = shared.upgrade() {
                let retry = match shared.park(&request).await {
                    Ok(()) | Err(NotNow::Never) => return,
                    Err(NotNow::Held) => RETRY,
                    // A message that never comes (its store failed, and
                    // was logged): the turn stays in memory.
                    Err(NotNow::Soon) if soon >= MAX_SOON => return,
                    Err(NotNow::Soon) => {
                        soon += 1;
                        RETRY_SOON
                    }
                };
                drop(shared);
                tokio::time::sleep(retry).await;
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
        if !self.call_is_stored(request).await? {
            return Err(NotNow::Soon);
        }
        if self.gate.park(&request.id).is_none() {
            // Answered meanwhile: the turn goes on here.
            return Err(NotNow::Never);
        }
        // From here an answer reaching this process (directly, or relayed
        // while the relay still names it the owner) claims and resumes.
        self.parked_asks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(request.id.clone());
        served.park();
        if let Err(error) = self.relay.release(&request.id).await {
            // Still named its owner: answers keep coming here, and resume.
            tracing::warn!(%error, request = %request.id, "a parked ask could not be released; answers to it are relayed to this process");
        }
        tracing::debug!(session_id = %request.session_id, request = %request.id, "parked the turn waiting at an ask");
        Ok(())
    }

    /// Whether the message of the call `request` asks about is stored with
    /// that call still running: what [`Engine::resume_ask`](crate::Engine::resume_ask)
    /// resumes from. An ask about no tool call is never parked.
    async fn call_is_stored(&self, request: &PermissionRequest) -> Result<bool, NotNow> {
        let call = request.tool.as_ref().ok_or(NotNow::Never)?;
        let messages = (self.store.messages(&request.session_id).await).map_err(|error| {
            tracing::warn!(%error, request = %request.id, "the asked call's message could not be read; its turn stays in memory");
            NotNow::Never
        })?;
        Ok(messages.iter().any(|message| {
            message.id == call.message_id
                && message.parts.iter().any(|part| {
                    part.as_tool().is_some_and(|tool| {
                        tool.call_id == call.call_id
                            && matches!(tool.state, crate::ToolState::Running { .. })
                    })
                })
        }))
    }
}
