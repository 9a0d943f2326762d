//! [`PostgresRelay`]: the [`AskRelay`] of several servers on one database.
//!
//! - `pending_asks` holds every published ask (one row per request id);
//!   [`pending`](AskRelay::pending) lists it, oldest first.
//! - [`answer`](AskRelay::answer) checks the ask is pending, stores the
//!   reply in `ask_replies` and, in the same transaction, sends
//!   `NOTIFY agentgate_asks_<schema>, '<reply row>'`; every relay
//!   `LISTEN`s on that channel and forwards the reply it reads to its
//!   [`replies`](AskRelay::replies) receivers. The reply travels through a
//!   table because a notification's payload is limited to 8000 bytes and a
//!   rejection's feedback may be longer.
//! - [`withdraw`](AskRelay::withdraw) deletes the ask and its replies.
//! - **Asks outlive their server.** Each ask names the relay that raised it
//!   (`owner`), and each relay writes that it is alive every
//!   [`HEARTBEAT`] (`relay_owners`). An answer is delivered to a live owner
//!   only; an ask whose owner has been quiet for [`OWNER_GONE_AFTER`] is
//!   [claimed](AskRelay::claim) by the server that received the answer
//!   (a `DELETE … RETURNING` only one caller wins) and its turn resumed
//!   there. The owner, when alive, also claims the ask before its answered
//!   call runs, so a call never runs twice. A server that drops a turn
//!   waiting at an ask from memory [releases](AskRelay::release) the ask:
//!   it names no owner, and is claimed where its answer arrives.

use std::sync::Arc;
use std::time::Duration;

use agentgate_permission::{PermissionRequest, Reply};
use async_trait::async_trait;
use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::{PostgresError, PostgresOptions};
use crate::relay::{AskRelay, RelayError, RelayedReply};

/// Permission asks shared by every server connected to one database (and
/// schema): publish and answer from any of them, the answer reaches the
/// server whose gate waits.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agentgate_store::{AskRelay, PostgresOptions, PostgresRelay};
/// let url = "postgres://agent:secret@127.0.0.1:5432/agentgate";
/// let relay = PostgresRelay::connect(PostgresOptions::new(url)).await?;
/// let mut replies = relay.replies();
/// // ... publish the asks of this server's gate; apply what arrives:
/// while let Ok(answer) = replies.recv().await {
///     println!("{} answered {:?}", answer.request_id, answer.reply);
/// }
/// # Ok(()) }
/// ```
///
/// A notification sent while the listening connection is being re-made
/// (after a network failure) is lost; the ask stays pending and can be
/// answered again.
#[derive(Debug, Clone)]
pub struct PostgresRelay {
    pool: PgPool,
    channel: String,
    replies: broadcast::Sender<RelayedReply>,
    /// This relay's name in `pending_asks.owner` and `relay_owners`.
    owner: String,
    _listener: Arc<Listening>,
    _heartbeat: Arc<Listening>,
}

/// How often a relay writes that it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a relay may stay quiet before its asks count as orphaned:
/// seven missed heartbeats, so a server slowed by load keeps its asks.
pub const OWNER_GONE_AFTER: Duration = Duration::from_secs(15);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Writes that `owner` is alive.
async fn beat(pool: &PgPool, owner: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO relay_owners (owner, seen_ms) VALUES ($1, $2)
         ON CONFLICT (owner) DO UPDATE SET seen_ms = EXCLUDED.seen_ms",
    )
    .bind(owner)
    .bind(now_ms())
    .execute(pool)
    .await
    .map(drop)
}

/// Beats every [`HEARTBEAT`] until the relay is dropped.
async fn keep_beating(pool: PgPool, owner: String) {
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        if let Err(error) = beat(&pool, &owner).await {
            tracing::warn!(%error, "ask relay: cannot say this server is alive");
        }
    }
}

/// Stops the listening task when the last clone of the relay goes.
#[derive(Debug)]
struct Listening(JoinHandle<()>);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn backend(error: impl std::fmt::Display) -> RelayError {
    RelayError::Backend(format!("PostgreSQL: {error}"))
}

impl PostgresRelay {
    /// Connects, creates the tables if needed and starts listening (on
    /// the current tokio runtime) before it returns, so an answer sent
    /// after this returns is received.
    pub async fn connect(options: PostgresOptions) -> Result<Self, PostgresError> {
        let pool = options.pool(options.max_connections).await?;
        let channel = options.channel();
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(&channel).await?;
        let (replies, _) = broadcast::channel(256);
        let task = tokio::spawn(forward(listener, pool.clone(), replies.clone()));
        let owner = format!("{}-{:x}", std::process::id(), now_ms());
        beat(&pool, &owner).await?;
        let heartbeat = tokio::spawn(keep_beating(pool.clone(), owner.clone()));
        Ok(PostgresRelay {
            pool,
            channel,
            replies,
            owner,
            _listener: Arc::new(Listening(task)),
            _heartbeat: Arc::new(Listening(heartbeat)),
        })
    }
}

/// Reads each notified reply row and broadcasts it.
async fn forward(mut listener: PgListener, pool: PgPool, replies: broadcast::Sender<RelayedReply>) {
    loop {
        let notification = match listener.recv().await {
            Ok(notification) => notification,
            Err(error) => {
                // `recv` re-connects on its next call; wait a little so a
                // server that is down is not hammered.
                tracing::warn!(%error, "ask relay: the PostgreSQL listener failed; reconnecting");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let Ok(seq) = notification.payload().parse::<i64>() else {
            continue;
        };
        let body: Result<Option<String>, sqlx::Error> =
            sqlx::query_scalar("SELECT body FROM ask_replies WHERE seq = $1")
                .bind(seq)
                .fetch_optional(&pool)
                .await;
        match body {
            Ok(Some(body)) => match serde_json::from_str::<RelayedReply>(&body) {
                // No receiver is fine: nobody in this process waits.
                Ok(reply) => {
                    let _ = replies.send(reply);
                }
                Err(error) => {
                    tracing::warn!(%error, seq, "ask relay: a stored reply does not decode")
                }
            },
            // Withdrawn meanwhile: its owner no longer waits.
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, seq, "ask relay: cannot read a reply"),
        }
    }
}

#[async_trait]
impl AskRelay for PostgresRelay {
    async fn publish(&self, request: &PermissionRequest) -> Result<(), RelayError> {
        let body = serde_json::to_string(request).map_err(backend)?;
        sqlx::query(
            "INSERT INTO pending_asks (id, body, owner, created_ms) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(&request.id)
        .bind(body)
        .bind(&self.owner)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn withdraw(&self, request_id: &str) -> Result<(), RelayError> {
        let mut tx = self.pool.begin().await.map_err(backend)?;
        for statement in [
            "DELETE FROM pending_asks WHERE id = $1",
            "DELETE FROM ask_replies WHERE request_id = $1",
        ] {
            sqlx::query(statement)
                .bind(request_id)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)
    }

    async fn pending(&self) -> Result<Vec<PermissionRequest>, RelayError> {
        let rows: Vec<String> = sqlx::query_scalar("SELECT body FROM pending_asks ORDER BY seq")
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|body| {
                serde_json::from_str(body)
                    .map_err(|e| backend(format!("a pending ask does not decode: {e}")))
            })
            .collect()
    }

    async fn answer(&self, request_id: &str, reply: &Reply) -> Result<bool, RelayError> {
        let body = serde_json::to_string(&RelayedReply {
            request_id: request_id.to_string(),
            reply: reply.clone(),
        })
        .map_err(backend)?;
        let mut tx = self.pool.begin().await.map_err(backend)?;
        // Locks the ask's row: a withdraw racing this answer waits for it,
        // then removes the reply too. Only a live owner gets the answer;
        // an orphaned ask is the answering server's to claim.
        let alive_since = now_ms()
            .saturating_sub(i64::try_from(OWNER_GONE_AFTER.as_millis()).unwrap_or(i64::MAX));
        let pending: Option<i64> = sqlx::query_scalar(
            "SELECT p.seq FROM pending_asks p JOIN relay_owners o ON o.owner = p.owner
             WHERE p.id = $1 AND o.seen_ms > $2 FOR SHARE OF p",
        )
        .bind(request_id)
        .bind(alive_since)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend)?;
        if pending.is_none() {
            return Ok(false);
        }
        let seq: i64 = sqlx::query_scalar(
            "INSERT INTO ask_replies (request_id, body) VALUES ($1, $2) RETURNING seq",
        )
        .bind(request_id)
        .bind(body)
        .fetch_one(&mut *tx)
        .await
        .map_err(backend)?;
        // Delivered when the transaction commits, to every listener.
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(&self.channel)
            .bind(seq.to_string())
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    fn replies(&self) -> broadcast::Receiver<RelayedReply> {
        self.replies.subscribe()
    }

    async fn claim(&self, request_id: &str) -> Result<Option<PermissionRequest>, RelayError> {
        let mut tx = self.pool.begin().await.map_err(backend)?;
        let body: Option<String> =
            sqlx::query_scalar("DELETE FROM pending_asks WHERE id = $1 RETURNING body")
                .bind(request_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(backend)?;
        sqlx::query("DELETE FROM ask_replies WHERE request_id = $1")
            .bind(request_id)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        body.map(|body| {
            serde_json::from_str(&body)
                .map_err(|e| backend(format!("a pending ask does not decode: {e}")))
        })
        .transpose()
    }

    /// Names no owner on the ask, so [`answer`](AskRelay::answer) finds
    /// no live one and the answering server claims it.
    async fn release(&self, request_id: &str) -> Result<(), RelayError> {
        sqlx::query("UPDATE pending_asks SET owner = '' WHERE id = $1")
            .bind(request_id)
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }

    fn outlives_the_process(&self) -> bool {
        true
    }
}
