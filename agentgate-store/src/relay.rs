//! [`AskRelay`]: permission asks shared between the processes of one
//! deployment, and [`LocalRelay`], the relay of a single process.

use std::sync::{Mutex, PoisonError};

use agentgate_permission::{PermissionRequest, Reply};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// Why a relay operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The backing database or channel failed.
    #[error("ask relay failed: {0}")]
    Backend(String),
}

/// An answer that was given in some process for a request raised in some
/// (possibly other) process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayedReply {
    /// The request answered.
    pub request_id: String,
    /// The answer.
    pub reply: Reply,
}

/// Permission asks that every process of a deployment sees.
///
/// A server publishes each ask its gate raises and withdraws it once it is
/// resolved; `GET /permission` lists [`pending`](Self::pending); a reply for
/// a request this process does not hold goes through [`answer`](Self::answer),
/// and the process that holds it receives it from [`replies`](Self::replies)
/// and applies it to its gate.
#[async_trait]
pub trait AskRelay: Send + Sync {
    /// Makes `request`, raised in this process, visible to every process.
    async fn publish(&self, request: &PermissionRequest) -> Result<(), RelayError>;

    /// Removes a request once it is resolved (answered, cancelled, timed out).
    async fn withdraw(&self, request_id: &str) -> Result<(), RelayError>;

    /// Every request still waiting, in every process, oldest first.
    async fn pending(&self) -> Result<Vec<PermissionRequest>, RelayError>;

    /// Sends `reply` for `request_id` to the process that raised it.
    /// Returns `false` when no process has that request pending.
    async fn answer(&self, request_id: &str, reply: &Reply) -> Result<bool, RelayError>;

    /// The answers sent through [`answer`](Self::answer) from any process.
    /// Each process applies those for requests its own gate holds and ignores
    /// the rest.
    fn replies(&self) -> broadcast::Receiver<RelayedReply>;

    /// Takes request `request_id` off the list, returning it only to the
    /// one caller that removed it: of several processes answering an
    /// orphaned ask at once, only the one this returns `Some` to may resume
    /// its turn. The default withdraws it and returns what
    /// [`pending`](Self::pending) listed (not atomic: a relay whose asks
    /// outlive the process implements it with a compare-and-delete).
    async fn claim(&self, request_id: &str) -> Result<Option<PermissionRequest>, RelayError> {
        let found = self
            .pending()
            .await?
            .into_iter()
            .find(|request| request.id == request_id);
        self.withdraw(request_id).await?;
        Ok(found)
    }

    /// This process dropped the turn waiting at ask `request_id` from
    /// memory (it is parked, see `PermissionGate::park`): from now on an
    /// answer to it resumes the turn wherever it arrives, after a
    /// [`claim`](Self::claim), instead of being sent to this process. The
    /// default does nothing: right for a relay whose every answer to an ask
    /// the answering process does not hold is claimed (SQLite's).
    async fn release(&self, request_id: &str) -> Result<(), RelayError> {
        let _ = request_id;
        Ok(())
    }

    /// Whether its asks outlive the process that raised them, and only
    /// one process uses it (a SQLite file): an ask it lists that this
    /// process's gate does not hold was raised by a process that is gone,
    /// and an answer to it resumes the turn here. `false` (the default)
    /// for a relay of this process only, and for one shared by live
    /// processes (PostgreSQL), whose asks are answered through
    /// [`answer`](Self::answer).
    fn outlives_the_process(&self) -> bool {
        false
    }
}

/// The relay of a single process: pending asks in memory, answers on a
/// broadcast channel.
#[derive(Debug)]
pub struct LocalRelay {
    pending: Mutex<Vec<PermissionRequest>>,
    replies: broadcast::Sender<RelayedReply>,
}

impl LocalRelay {
    /// An empty relay.
    pub fn new() -> Self {
        let (replies, _) = broadcast::channel(256);
        LocalRelay {
            pending: Mutex::new(Vec::new()),
            replies,
        }
    }
}

impl Default for LocalRelay {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl AskRelay for LocalRelay {
    async fn publish(&self, request: &PermissionRequest) -> Result<(), RelayError> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.iter().any(|p| p.id == request.id) {
            pending.push(request.clone());
        }
        Ok(())
    }

    async fn withdraw(&self, request_id: &str) -> Result<(), RelayError> {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|p| p.id != request_id);
        Ok(())
    }

    async fn pending(&self) -> Result<Vec<PermissionRequest>, RelayError> {
        Ok(self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone())
    }

    async fn answer(&self, request_id: &str, reply: &Reply) -> Result<bool, RelayError> {
        let known = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|p| p.id == request_id);
        if known {
            // No receiver is fine: the owner withdrew it meanwhile.
            let _ = self.replies.send(RelayedReply {
                request_id: request_id.to_string(),
                reply: reply.clone(),
            });
        }
        Ok(known)
    }

    fn replies(&self) -> broadcast::Receiver<RelayedReply> {
        self.replies.subscribe()
    }
}
