//! [`SessionStoreError`]: why a [`SessionStore`](super::SessionStore)
//! operation failed.

use std::path::PathBuf;

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
    /// The session has no message with this id.
    #[error("session {session:?} has no message {message:?}")]
    MessageNotFound {
        /// The session.
        session: String,
        /// The message id asked for.
        message: String,
    },
}
