//! [`SqliteRelay`]: the asks of `agent serve` on SQLite kept in the
//! database, so an ask outlives the process that raised it: after a crash
//! or a restart `GET /permission` still lists it, and its answer resumes
//! the turn in the process that receives it
//! ([`Engine::resume_ask`](agentgate_core::Engine::resume_ask)).
//!
//! SQLite is one process's store: an ask in the table that this process's
//! gate does not hold was raised by a process that is gone. Whoever
//! answers it first [claims](AskRelay::claim) it — a delete that only one
//! caller can win — and only the winner resumes it, so the approved call
//! runs once.

use agentgate_permission::{PermissionRequest, Reply};
use async_trait::async_trait;
use tokio::sync::broadcast;

use super::{SqliteError, SqliteStore};
use crate::relay::{AskRelay, RelayError, RelayedReply};

/// Asks kept in a [`SqliteStore`]'s database (table `pending_asks`).
#[derive(Debug, Clone)]
pub struct SqliteRelay {
    store: SqliteStore,
    replies: broadcast::Sender<RelayedReply>,
}

impl SqliteRelay {
    /// The relay of `store`'s database.
    pub fn new(store: SqliteStore) -> Self {
        let (replies, _) = broadcast::channel(256);
        SqliteRelay { store, replies }
    }
}

fn backend(error: SqliteError) -> RelayError {
    RelayError::Backend(error.to_string())
}

fn decode(store: &SqliteStore, body: &str) -> Result<PermissionRequest, SqliteError> {
    serde_json::from_str(body).map_err(|e| store.corrupt(format!("a pending ask: {e}")))
}

/// A saved ask with when and by which process it was raised.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SavedAsk {
    /// The ask.
    pub request: PermissionRequest,
    /// When it was raised, in ms since the Unix epoch.
    pub created_ms: u64,
    /// The process that raised it (its gate may still hold it).
    pub owner_pid: u32,
}

impl SqliteRelay {
    /// Every saved ask, oldest first, with its age and owner: `agent
    /// approvals pending` shows them, `agent approvals answer` refuses an
    /// ask whose process still runs.
    pub async fn saved(&self) -> Result<Vec<SavedAsk>, RelayError> {
        self.store
            .read(|store, conn| {
                let mut statement = conn
                    .prepare_cached(
                        "SELECT body, created_ms, owner_pid FROM pending_asks ORDER BY seq",
                    )
                    .map_err(|e| store.sql(e))?;
                let rows = statement
                    .query_map([], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, i64>(2)?,
                        ))
                    })
                    .map_err(|e| store.sql(e))?;
                let mut out = Vec::new();
                for row in rows {
                    let (body, created, pid) = row.map_err(|e| store.sql(e))?;
                    out.push(SavedAsk {
                        request: decode(store, &body)?,
                        created_ms: u64::try_from(created).unwrap_or(0),
                        owner_pid: u32::try_from(pid).unwrap_or(0),
                    });
                }
                Ok(out)
            })
            .await
            .map_err(backend)
    }
}

/// Now, in ms since the Unix epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[async_trait]
impl AskRelay for SqliteRelay {
    async fn publish(&self, request: &PermissionRequest) -> Result<(), RelayError> {
        let body = serde_json::to_string(request)
            .map_err(|e| RelayError::Backend(format!("cannot encode the ask: {e}")))?;
        let (id, session) = (request.id.clone(), request.session_id.clone());
        self.store
            .write(move |store, conn| {
                conn.execute(
                    "INSERT INTO pending_asks (id, session_id, created_ms, owner_pid, body)
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO NOTHING",
                    rusqlite::params![id, session, now_ms(), std::process::id(), body],
                )
                .map_err(|e| store.sql(e))?;
                Ok(())
            })
            .await
            .map_err(backend)
    }

    async fn withdraw(&self, request_id: &str) -> Result<(), RelayError> {
        self.claim(request_id).await.map(drop)
    }

    async fn pending(&self) -> Result<Vec<PermissionRequest>, RelayError> {
        Ok(self
            .saved()
            .await?
            .into_iter()
            .map(|saved| saved.request)
            .collect())
    }

    /// Always `false`: an ask this process's gate does not hold is
    /// resumed where it is answered, after a [`claim`](AskRelay::claim) —
    /// also when another live process on the same file raised it, whose
    /// own claim then fails and whose call does not run.
    async fn answer(&self, request_id: &str, reply: &Reply) -> Result<bool, RelayError> {
        let _ = (request_id, reply);
        Ok(false)
    }

    fn replies(&self) -> broadcast::Receiver<RelayedReply> {
        self.replies.subscribe()
    }

    async fn claim(&self, request_id: &str) -> Result<Option<PermissionRequest>, RelayError> {
        let id = request_id.to_string();
        self.store
            .write(move |store, conn| {
                let body: Option<String> = conn
                    .query_row(
                        "DELETE FROM pending_asks WHERE id = ?1 RETURNING body",
                        [&id],
                        |r| r.get(0),
                    )
                    .map(Some)
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok(None),
                        e => Err(e),
                    })
                    .map_err(|e| store.sql(e))?;
                body.as_deref().map(|b| decode(store, b)).transpose()
            })
            .await
            .map_err(backend)
    }

    fn outlives_the_process(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn request(id: &str) -> PermissionRequest {
        serde_json::from_value(serde_json::json!({
            "id": id, "session_id": "ses_1", "permission": "bash",
            "patterns": ["echo hi"], "always": ["echo *"], "metadata": {},
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn an_ask_outlives_its_relay_and_is_claimed_once() {
        let dir = std::env::temp_dir().join(format!("sqlite-relay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("db.sqlite");
        let first = SqliteRelay::new(SqliteStore::open(&path).unwrap());
        first.publish(&request("per_1")).await.unwrap();
        first.publish(&request("per_1")).await.unwrap();
        drop(first);
        // A new process on the same file sees it.
        let second = SqliteRelay::new(SqliteStore::open(&path).unwrap());
        let pending = second.pending().await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].id, "per_1");
        // Many claim at once: exactly one wins.
        let claims = futures::future::join_all((0..16).map(|_| second.claim("per_1"))).await;
        let won = claims.iter().filter(|c| matches!(c, Ok(Some(_)))).count();
        assert_eq!(won, 1, "{claims:?}");
        assert!(second.pending().await.unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
