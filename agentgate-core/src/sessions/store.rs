//! [`SessionStore`]: where sessions and their transcripts live.

use async_trait::async_trait;

use super::error::SessionStoreError;
use super::session::Session;
use crate::message::Message;

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
    /// Adds a message, or replaces the one with the same id, and moves the
    /// session's [`time.updated`](super::SessionTime::updated) forward to
    /// now (every store of this SDK does; a custom store should too, as
    /// `agent sessions list` sorts by it).
    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError>;
    /// Removes a session and its messages (`DELETE /session/{id}` of the
    /// server). The default refuses: a store that can delete says so by
    /// implementing it.
    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        Err(SessionStoreError::Io(format!(
            "this session store cannot delete sessions (session {id} is kept)"
        )))
    }

    /// Removes messages `ids` of session `session_id` (those a revert took
    /// back, when the next prompt is sent); ids it does not have are
    /// ignored. The default refuses: a store that can delete says so by
    /// implementing it.
    async fn delete_messages(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<(), SessionStoreError> {
        let _ = ids;
        Err(SessionStoreError::Io(format!(
            "this session store cannot delete messages (session {session_id} keeps its reverted messages)"
        )))
    }

    /// Sets a session's title (`PATCH /session/{id}` of the server, `agent
    /// sessions rename`) and moves its `time.updated` to now; returns the
    /// session as stored. The default reads the session and stores it
    /// again, so every store supports it.
    async fn rename_session(&self, id: &str, title: &str) -> Result<Session, SessionStoreError> {
        let mut session = self.session(id).await?;
        session.title = title.to_string();
        session.time.touch(crate::ids::now_ms());
        self.put_session(&session).await?;
        Ok(session)
    }

    /// Copies session `id` into a new session as opencode's fork does
    /// (`POST /session/{id}/fork`, `agent sessions fork`): the messages
    /// before `before` (all of them when `None`), each with new message and
    /// part ids; the title gets a fork marker (`T (fork #1)`, then
    /// `T (fork #2)` for a fork of that fork). The copy keeps the agent,
    /// directory, model and rules, and is a top-level session. The default
    /// is built from the other methods, so every store supports it.
    ///
    /// # Errors
    /// [`SessionStoreError::NotFound`] for an unknown session,
    /// [`SessionStoreError::MessageNotFound`] when `before` is not one of
    /// its messages.
    async fn fork_session(
        &self,
        id: &str,
        before: Option<&str>,
    ) -> Result<Session, SessionStoreError> {
        let original = self.session(id).await?;
        let messages = self.messages(id).await?;
        let (session, copies) = super::fork::fork(&original, &messages, before)?;
        self.put_session(&session).await?;
        for message in &copies {
            self.put_message(message).await?;
        }
        Ok(session)
    }
}
