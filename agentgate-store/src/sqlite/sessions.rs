//! [`SessionStore`] for [`SqliteStore`]: each call one transaction, run
//! under `spawn_blocking`.

use agentgate_core::{Message, Session, SessionStore, SessionStoreError};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

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
    /// Runs `work` on the connection on the blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore, &mut Connection) -> Result<T, SqliteError> + Send + 'static,
    ) -> Result<T, SessionStoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = store.lock();
            work(&store, &mut conn)
        })
        .await
        .map_err(|e| SessionStoreError::Io(format!("the SQLite task failed: {e}")))?
        .map_err(SessionStoreError::from)
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
        self.blocking(move |store, conn| {
            conn.execute(
                "INSERT INTO sessions (id, parent_id, directory, body) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (id) DO UPDATE SET
                    parent_id = excluded.parent_id,
                    directory = excluded.directory,
                    body = excluded.body",
                rusqlite::params![id, parent, directory, body],
            )
            .map(|_| ())
            .map_err(|e| store.sql(e))
        })
        .await
    }

    async fn session(&self, id: &str) -> Result<Session, SessionStoreError> {
        let id = id.to_string();
        let found = {
            let id = id.clone();
            self.blocking(move |store, conn| {
                let body: Option<String> = conn
                    .query_row("SELECT body FROM sessions WHERE id = ?1", [&id], |r| {
                        r.get(0)
                    })
                    .optional()
                    .map_err(|e| store.sql(e))?;
                body.map(|b| store.decode(&format!("session {id:?}"), &b))
                    .transpose()
            })
            .await?
        };
        found.ok_or(SessionStoreError::NotFound(id))
    }

    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError> {
        self.blocking(|store, conn| {
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
            .blocking(move |store, conn| {
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
            .blocking(move |store, conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(|e| store.sql(e))?;
                if !session_exists(&tx, &session_id).map_err(|e| store.sql(e))? {
                    return Ok(false);
                }
                tx.prepare_cached(
                    "INSERT INTO messages (session_id, id, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                )
                .and_then(|mut insert| insert.execute(rusqlite::params![session_id, id, body]))
                .map_err(|e| store.sql(e))?;
                touch_session(store, &tx, &session_id)?;
                tx.commit().map_err(|e| store.sql(e))?;
                Ok(true)
            })
            .await?;
        if stored {
            Ok(())
        } else {
            Err(SessionStoreError::NotFound(missing))
        }
    }

    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        let id = id.to_string();
        let missing = id.clone();
        let deleted = self
            .blocking(move |store, conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(|e| store.sql(e))?;
                tx.execute("DELETE FROM messages WHERE session_id = ?1", [&id])
                    .map_err(|e| store.sql(e))?;
                let rows = tx
                    .execute("DELETE FROM sessions WHERE id = ?1", [&id])
                    .map_err(|e| store.sql(e))?;
                tx.commit().map_err(|e| store.sql(e))?;
                Ok(rows > 0)
            })
            .await?;
        if deleted {
            Ok(())
        } else {
            Err(SessionStoreError::NotFound(missing))
        }
    }
}
