//! [`SessionStore`]: where sessions and their transcripts live, and
//! [`SessionStoreError`].

use std::path::PathBuf;

use async_trait::async_trait;

use super::session::Session;
use crate::message::Message;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// No session with this id.
    #[error(
        "session {0:?} not found: this store has no session with that id (never created here, or deleted)"
    )]
    NotFound(String),
    /// The backing storage failed.
    #[error("session storage failed: {0}")]
    Io(String),
    /// A stored file cannot be decoded.
    #[error(
        "session store file {} is corrupt: {detail}; repair or remove it",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        detail: String,
    },
    /// An id that cannot be stored (a file-backed store accepts ASCII
    /// letters, digits, `_` and `-`).
    #[error(
        "id {0:?} cannot be stored: use ids of ASCII letters, digits, '_' and '-' (as the engine's own ids are)"
    )]
    InvalidId(String),
}

/// Where sessions and their transcripts live.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a new session (or replaces one with the same id).
    async fn put_session(&self, session: &Session) -> Result<(), SessionStoreError>;
    /// A session by id.
    async fn session(&self, id: &str) -> Result<Session, SessionStoreError>;
    /// Every session.
    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError>;
    /// A session's messages, oldest first.
    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionStoreError>;
    /// Adds a message, or replaces the one with the same id.
    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError>;
    /// Removes a session and its messages (`DELETE /session/{id}` of the
    /// server). The default refuses: a store that can delete says so by
    /// implementing it.
    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        Err(SessionStoreError::Io(format!(
            "this session store cannot delete sessions (session {id} is kept)"
        )))
    }
}
