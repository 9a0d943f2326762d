//! [`Session`]s and where they are kept ([`SessionStore`],
//! [`MemorySessionStore`]; the file-backed store is
//! [`FileSessionStore`](crate::FileSessionStore)).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use agent_permission::Ruleset;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::agent::ModelRef;
use crate::message::Message;

/// A conversation with one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Session id (`ses_…`).
    pub id: String,
    /// The parent session of a sub-agent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// A title for UIs.
    pub title: String,
    /// The agent's name.
    pub agent: String,
    /// Session rules, evaluated after the agent's (so they override them).
    #[serde(default)]
    pub permission: Ruleset,
    /// The working directory.
    pub directory: PathBuf,
    /// The model this session runs on (`None`: the engine's model). Set by
    /// the task tool for sub-agents with their own model; resolved through
    /// [`EngineBuilder::model_resolver`](crate::EngineBuilder::model_resolver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
}

impl Session {
    /// A new session with a fresh id for `agent` in `directory`.
    pub fn new(agent: impl Into<String>, directory: impl Into<PathBuf>) -> Self {
        Session {
            id: crate::ids::ascending("ses"),
            parent_id: None,
            title: String::new(),
            agent: agent.into(),
            permission: Ruleset::default(),
            directory: directory.into(),
            model: None,
        }
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// No session with this id.
    #[error("session {0:?} not found: create it with SessionStore::create first")]
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
        "id {0:?} cannot be stored: use ids of ASCII letters, digits, '_' and '-' (as crate::ids::ascending makes)"
    )]
    InvalidId(String),
}

/// Where sessions and their transcripts live.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a new session (or replaces one with the same id).
    async fn put_session(&self, session: &Session) -> Result<(), StoreError>;
    /// A session by id.
    async fn session(&self, id: &str) -> Result<Session, StoreError>;
    /// Every session.
    async fn sessions(&self) -> Result<Vec<Session>, StoreError>;
    /// A session's messages, oldest first.
    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, StoreError>;
    /// Adds a message, or replaces the one with the same id.
    async fn put_message(&self, message: &Message) -> Result<(), StoreError>;
}

#[derive(Debug, Default)]
struct Memory {
    sessions: HashMap<String, Session>,
    order: Vec<String>,
    messages: HashMap<String, Vec<Message>>,
}

/// The in-memory [`SessionStore`]: everything is lost when it is dropped.
#[derive(Debug, Clone, Default)]
pub struct MemorySessionStore {
    inner: Arc<Mutex<Memory>>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Memory> {
        // A panic while holding the lock cannot leave the maps inconsistent
        // (every update is a single insert), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    async fn put_session(&self, session: &Session) -> Result<(), StoreError> {
        let mut memory = self.lock();
        if memory
            .sessions
            .insert(session.id.clone(), session.clone())
            .is_none()
        {
            memory.order.push(session.id.clone());
        }
        Ok(())
    }

    async fn session(&self, id: &str) -> Result<Session, StoreError> {
        self.lock()
            .sessions
            .get(id)
            .cloned()
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    }

    async fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        let memory = self.lock();
        Ok(memory
            .order
            .iter()
            .filter_map(|id| memory.sessions.get(id).cloned())
            .collect())
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, StoreError> {
        let memory = self.lock();
        if !memory.sessions.contains_key(session_id) {
            return Err(StoreError::NotFound(session_id.to_string()));
        }
        Ok(memory.messages.get(session_id).cloned().unwrap_or_default())
    }

    async fn put_message(&self, message: &Message) -> Result<(), StoreError> {
        let mut memory = self.lock();
        if !memory.sessions.contains_key(&message.session_id) {
            return Err(StoreError::NotFound(message.session_id.clone()));
        }
        let list = memory
            .messages
            .entry(message.session_id.clone())
            .or_default();
        match list.iter_mut().rev().find(|m| m.id == message.id) {
            Some(existing) => *existing = message.clone(),
            None => list.push(message.clone()),
        }
        Ok(())
    }
}
