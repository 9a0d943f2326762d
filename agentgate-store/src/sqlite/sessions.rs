//! [`SessionStore`] for [`SqliteStore`]: each call a job of the store's
//! worker (`worker`), a write committed whole or not at all.

use agentgate_core::{Message, Session, SessionStore, SessionStoreError};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension};

use super::{SqliteError, SqliteStore};

impl From<SqliteError> for SessionStoreError {
    fn from(error: SqliteError) -> Self {
        match error {
            SqliteError::Corrupt { path, detail } => SessionStoreError::Corrupt { path, detail },
            other => SessionStoreError::Io(other.to_string()),
        }
    }
}

impl SqliteStore {
    /// Runs a read on the worker.
    async fn reading<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore, &mut Connection) -> Result<T, SqliteError> + Send + 'static,
    ) -> Result<T, SessionStoreError> {
        self.read(work).await.map_err(SessionStoreError::from)
    }

    /// Runs a write on the worker, inside a transaction it commits.
    async fn writing<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore, &Connection) -> Result<T, SqliteError> + Send + 'static,
    ) -> Result<T, SessionStoreError> {
        self.write(work).await.map_err(SessionStoreError::from)
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        body: &str,
    ) -> Result<T, SqliteError> {
        serde_json::from_str(body).map_err(|e| self.corrupt(format!("{what}: {e}")))
    }
}

fn session_exists(conn: &Connection, id: &str) -> Result<bool, rusqlite::Error> {
    // The statements of every stored message are prepared once per
    // connection (rusqlite's statement cache), not parsed at each step.
    conn.prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row([id], |_| Ok(()))
        .optional()
        .map(|row| row.is_some())
}

/// Moves the `time.updated` of session `id` to now, in the caller's
/// transaction (the session body is JSON, decoded and written back).
fn touch_session(store: &SqliteStore, conn: &Connection, id: &str) -> Result<(), SqliteError> {
    let body: String = conn
        .prepare_cached("SELECT body FROM sessions WHERE id = ?1")
        .and_then(|mut select| select.query_row([id], |r| r.get(0)))
        .map_err(|e| store.sql(e))?;
    let mut session: Session = store.decode(&format!("session {id:?}"), &body)?;
    session.time.touch(now_ms());
    let body = serde_json::to_string(&session)
        .map_err(|e| store.corrupt(format!("session {id:?} does not encode: {e}")))?;
    conn.prepare_cached("UPDATE sessions SET body = ?2 WHERE id = ?1")
        .and_then(|mut update| update.execute([id, &body]))
        .map_err(|e| store.sql(e))?;
    Ok(())
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn put_session(&self, session: &Session) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(session)
            .map_err(|e| SessionStoreError::Io(format!("cannot encode session: {e}")))?;
        let id = session.id.clone();
        let parent = session.parent_id.clone();
        let directory = session.directory.display().to_string();
        self.writing(move |store, conn| {
            conn.prepare_cached(
                "INSERT INTO sessions (id, parent_id, directory, body) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (id) DO UPDATE SET
                    parent_id = excluded.parent_id,
                    directory = excluded.directory,
                    body = excluded.body",
            )
            .and_then(|mut insert| insert.execute(rusqlite::params![id, parent, directory, body]))
            .map(|_| ())
            .map_err(|e| store.sql(e))
        })
        .await
    }

    async fn session(&self, id: &str) -> Result<Session, SessionStoreError> {
        let id = id.to_string();
        let found = {
            let id = id.clone();
            self.reading(move |store, conn| {
                let body: Option<String> = conn
                    .prepare_cached("SELECT body FROM sessions WHERE id = ?1")
                    .and_then(|mut select| select.query_row([&id], |r| r.get(0)).optional())
                    .map_err(|e| store.sql(e))?;
                body.map(|b| store.decode(&format!("session {id:?}"), &b))
                    .transpose()
            })
            .await?
        };
        found.ok_or(SessionStoreError::NotFound(id))
    }

    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError> {
        self.reading(|store, conn| {
            let mut statement = conn
                .prepare_cached("SELECT id, body FROM sessions ORDER BY seq")
                .map_err(|e| store.sql(e))?;
            let rows = statement
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(|e| store.sql(e))?;
            let mut out = Vec::new();
            for row in rows {
                let (id, body) = row.map_err(|e| store.sql(e))?;
                out.push(store.decode(&format!("session {id:?}"), &body)?);
            }
            Ok(out)
        })
        .await
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionStoreError> {
        let session_id = session_id.to_string();
        let missing = session_id.clone();
        let found = self
            .reading(move |store, conn| {
                // One read transaction: the existence check and the rows
                // see the same snapshot.
                let tx = conn.transaction().map_err(|e| store.sql(e))?;
                if !session_exists(&tx, &session_id).map_err(|e| store.sql(e))? {
                    return Ok(None);
                }
                let mut out = Vec::new();
                {
                    let mut statement = tx
                        .prepare_cached(
                            "SELECT id, body FROM messages WHERE session_id = ?1 ORDER BY seq",
                        )
                        .map_err(|e| store.sql(e))?;
                    let rows = statement
                        .query_map([&session_id], |r| {
                            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                        })
                        .map_err(|e| store.sql(e))?;
                    for row in rows {
                        let (id, body) = row.map_err(|e| store.sql(e))?;
                        out.push(store.decode(&format!("message {id:?}"), &body)?);
                    }
                }
                tx.commit().map_err(|e| store.sql(e))?;
                Ok(Some(out))
            })
            .await?;
        found.ok_or(SessionStoreError::NotFound(missing))
    }

    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(message)
            .map_err(|e| SessionStoreError::Io(format!("cannot encode message: {e}")))?;
        let session_id = message.session_id.clone();
        let id = message.id.clone();
        let missing = session_id.clone();
        let stored = self
            .writing(move |store, conn| {
                if !session_exists(conn, &session_id).map_err(|e| store.sql(e))? {
                    return Ok(false);
                }
                conn.prepare_cached(
                    "INSERT INTO messages (session_id, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                )
                .and_then(|mut insert| insert.execute(rusqlite::params![session_id, id, body]))
                .map_err(|e| store.sql(e))?;
                touch_session(store, conn, &session_id)?;
                Ok(true)
            })
            .await?;
        if stored {
            Ok(())
        } else {
            Err(SessionStoreError::NotFound(missing))
        }
    }

    async fn delete_messages(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<(), SessionStoreError> {
        let session_id = session_id.to_string();
        let ids = ids.to_vec();
        let missing = session_id.clone();
        let found = self
            .writing(move |store, conn| {
                if !session_exists(conn, &session_id).map_err(|e| store.sql(e))? {
                    return Ok(false);
                }
                let mut delete = conn
                    .prepare_cached("DELETE FROM messages WHERE session_id = ?1 AND id = ?2")
                    .map_err(|e| store.sql(e))?;
                for id in &ids {
                    delete
                        .execute(rusqlite::params![session_id, id])
                        .map_err(|e| store.sql(e))?;
                }
                Ok(true)
            })
            .await?;
        if found {
            Ok(())
        } else {
            Err(SessionStoreError::NotFound(missing))
        }
    }

    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        let id = id.to_string();
        let missing = id.clone();
        let deleted = self
            .writing(move |store, conn| {
                conn.execute("DELETE FROM messages WHERE session_id = ?1", [&id])
                    .map_err(|e| store.sql(e))?;
                let rows = conn
                    .execute("DELETE FROM sessions WHERE id = ?1", [&id])
                    .map_err(|e| store.sql(e))?;
                Ok(rows > 0)
            })
            .await?;
        // The cache pages of what was deleted hold nothing anyone will
        // read: give them back (a server deleting its sessions returns to
        // its idle size). A failure here only keeps the cache.
        let _ = self
            .reading(|store, conn| {
                conn.execute_batch("PRAGMA shrink_memory")
                    .map_err(|e| store.sql(e))
            })
            .await;
        if deleted {
            Ok(())
        } else {
            Err(SessionStoreError::NotFound(missing))
        }
    }
}
