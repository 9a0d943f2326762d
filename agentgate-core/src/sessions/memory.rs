//! [`MemorySessionStore`]: the in-memory default store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;

use super::error::SessionStoreError;
use super::session::Session;
use super::store::SessionStore;
use crate::message::Message;

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
    async fn put_session(&self, session: &Session) -> Result<(), SessionStoreError> {
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

    async fn session(&self, id: &str) -> Result<Session, SessionStoreError> {
        self.lock()
            .sessions
            .get(id)
            .cloned()
            .ok_or_else(|| SessionStoreError::NotFound(id.to_string()))
    }

    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError> {
        let memory = self.lock();
        Ok(memory
            .order
            .iter()
            .filter_map(|id| memory.sessions.get(id).cloned())
            .collect())
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionStoreError> {
        let memory = self.lock();
        if !memory.sessions.contains_key(session_id) {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        Ok(memory.messages.get(session_id).cloned().unwrap_or_default())
    }

    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        let mut memory = self.lock();
        if memory.sessions.remove(id).is_none() {
            return Err(SessionStoreError::NotFound(id.to_string()));
        }
        memory.order.retain(|s| s != id);
        memory.messages.remove(id);
        Ok(())
    }

    async fn delete_messages(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<(), SessionStoreError> {
        let mut memory = self.lock();
        if !memory.sessions.contains_key(session_id) {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        if let Some(list) = memory.messages.get_mut(session_id) {
            list.retain(|m| !ids.contains(&m.id));
        }
        Ok(())
    }

    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError> {
        let mut memory = self.lock();
        match memory.sessions.get_mut(&message.session_id) {
            Some(session) => session.time.touch(crate::ids::now_ms()),
            None => return Err(SessionStoreError::NotFound(message.session_id.clone())),
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
