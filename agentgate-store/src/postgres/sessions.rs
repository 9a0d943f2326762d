//! [`PostgresStore`]: [`SessionStore`] and [`ApprovalStore`] in PostgreSQL.

use agentgate_core::{Message, Session, SessionStore, SessionStoreError};
use agentgate_permission::{ApprovalStore, Rule, Ruleset, StoreError};
use async_trait::async_trait;
use sqlx::postgres::PgPool;

use super::approvals::ApprovalWorker;
use super::audit::AuditWorker;
use super::{PostgresError, PostgresOptions};

/// Sessions, messages, "always" approvals and the audit log
/// ([`AuditLog`](crate::AuditLog)) in PostgreSQL, for several servers
/// sharing one database.
///
/// The [`SessionStore`] methods are async over a connection pool. The
/// [`ApprovalStore`] trait is synchronous, so its calls go to a dedicated
/// thread that owns its own single-threaded runtime and connection and
/// answers over a channel: the caller waits for one round trip (as it would
/// for [`JsonFileStore`](agentgate_permission::JsonFileStore)'s file
/// write), but no runtime is ever entered from inside another, so calling
/// it from any task, on a current-thread runtime too, neither panics nor
/// deadlocks. Reads are always current: a revocation made by another
/// server is seen by the next gate decision.
///
/// ```no_run
/// # async fn demo() -> Result<(), agentgate_store::PostgresError> {
/// use agentgate_store::{PostgresOptions, PostgresStore};
/// let store = PostgresStore::connect(
///     PostgresOptions::new("postgres://agent:secret@127.0.0.1:5432/agentgate"),
/// )
/// .await?;
/// # let _ = store; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    approvals: ApprovalWorker,
    pub(super) audit: AuditWorker,
}

impl From<PostgresError> for SessionStoreError {
    fn from(error: PostgresError) -> Self {
        SessionStoreError::Io(error.to_string())
    }
}

fn sql(error: sqlx::Error) -> SessionStoreError {
    SessionStoreError::Io(format!("PostgreSQL: {error}"))
}

fn decode<T: serde::de::DeserializeOwned>(what: &str, body: &str) -> Result<T, SessionStoreError> {
    serde_json::from_str(body).map_err(|e| {
        SessionStoreError::from(PostgresError::Corrupt(format!(
            "{what} does not decode: {e}"
        )))
    })
}

impl PostgresStore {
    /// Connects, creating the schema and its tables if needed.
    pub async fn connect(options: PostgresOptions) -> Result<Self, PostgresError> {
        let pool = options.pool(options.max_connections).await?;
        let approvals = ApprovalWorker::start(options.clone())?;
        let audit = AuditWorker::start(options)?;
        Ok(PostgresStore {
            pool,
            approvals,
            audit,
        })
    }

    /// The connection pool (for a host's own queries on the same database).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[async_trait]
impl SessionStore for PostgresStore {
    async fn put_session(&self, session: &Session) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(session)
            .map_err(|e| SessionStoreError::Io(format!("cannot encode session: {e}")))?;
        sqlx::query(
            "INSERT INTO sessions (id, parent_id, directory, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET
                parent_id = excluded.parent_id,
                directory = excluded.directory,
                body = excluded.body",
        )
        .bind(&session.id)
        .bind(&session.parent_id)
        .bind(session.directory.display().to_string())
        .bind(body)
        .execute(&self.pool)
        .await
        .map_err(sql)?;
        Ok(())
    }

    async fn session(&self, id: &str) -> Result<Session, SessionStoreError> {
        let body: Option<String> = sqlx::query_scalar("SELECT body FROM sessions WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(sql)?;
        match body {
            Some(body) => decode(&format!("session {id:?}"), &body),
            None => Err(SessionStoreError::NotFound(id.to_string())),
        }
    }

    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT id, body FROM sessions ORDER BY seq")
                .fetch_all(&self.pool)
                .await
                .map_err(sql)?;
        rows.iter()
            .map(|(id, body)| decode(&format!("session {id:?}"), body))
            .collect()
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionStoreError> {
        // One statement: the session's existence and its messages come from
        // the same snapshot (a session with no messages gives one row of
        // NULLs).
        let rows: Vec<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT m.id, m.body FROM sessions s
             LEFT JOIN messages m ON m.session_id = s.id
             WHERE s.id = $1 ORDER BY m.seq",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .map_err(sql)?;
        if rows.is_empty() {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        rows.iter()
            .filter_map(|(id, body)| Some((id.as_ref()?, body.as_ref()?)))
            .map(|(id, body)| decode(&format!("message {id:?}"), body))
            .collect()
    }

    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(message)
            .map_err(|e| SessionStoreError::Io(format!("cannot encode message: {e}")))?;
        // One statement, so one transaction: inserted only when the session
        // exists, and the session's `time.updated` moved forward to now
        // (never backwards) with it.
        let now = i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
        )
        .unwrap_or(i64::MAX);
        let written = sqlx::query(
            "WITH touched AS (
                UPDATE sessions SET body = jsonb_set(
                    body::jsonb,
                    '{time}',
                    COALESCE(body::jsonb -> 'time', '{}'::jsonb) || jsonb_build_object(
                        'updated',
                        GREATEST(COALESCE((body::jsonb #>> '{time,updated}')::bigint, 0), $4)
                    )
                )::text
                WHERE id = $1
                RETURNING id
             )
             INSERT INTO messages (session_id, id, body)
             SELECT $1, $2, $3 FROM touched
             ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
        )
        .bind(&message.session_id)
        .bind(&message.id)
        .bind(body)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(sql)?;
        if written.rows_affected() == 0 {
            return Err(SessionStoreError::NotFound(message.session_id.clone()));
        }
        Ok(())
    }

    async fn delete_messages(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<(), SessionStoreError> {
        let exists = sqlx::query("SELECT 1 FROM sessions WHERE id = $1")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(sql)?;
        if exists.is_none() {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        sqlx::query("DELETE FROM messages WHERE session_id = $1 AND id = ANY($2)")
            .bind(session_id)
            .bind(ids)
            .execute(&self.pool)
            .await
            .map_err(sql)?;
        Ok(())
    }

    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        // One transaction: the messages and the session go together.
        let mut tx = self.pool.begin().await.map_err(sql)?;
        sqlx::query("DELETE FROM messages WHERE session_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(sql)?;
        let deleted = sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(sql)?;
        tx.commit().await.map_err(sql)?;
        if deleted.rows_affected() == 0 {
            return Err(SessionStoreError::NotFound(id.to_string()));
        }
        Ok(())
    }
}

impl ApprovalStore for PostgresStore {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.approvals.load(project)
    }

    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        self.approvals.append(project, rules)
    }

    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        self.approvals.revoke(project, rule)
    }
}
