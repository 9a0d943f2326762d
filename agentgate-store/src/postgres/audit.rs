//! The audit log of [`PostgresStore`](super::PostgresStore): the same hash
//! chain as the SQLite store's (see the crate's `audit` module), in the
//! tables `audit` and `audit_head` of the shared database.
//!
//! The gate's sink must not block, so [`AuditWorker`] queues each entry to
//! a dedicated thread (its own single-threaded runtime, one connection)
//! that appends them in order. Each append is one transaction that locks
//! the one-row chain head (`SELECT … FOR UPDATE`), inserts the row after
//! it and moves the head: servers sharing the database append one after
//! another, so the chain stays linear. Reads run on the store's pool, in
//! one repeatable-read snapshot so the rows and the head agree.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use agentgate_permission::{AuditEntry, AuditSink};
use async_trait::async_trait;
use sqlx::postgres::PgPool;

use super::{PostgresError, PostgresOptions, PostgresStore};
use crate::audit::{
    AuditError, AuditLog, AuditQuery, AuditRecord, AuditRow, ChainBreak, GENESIS_HASH,
    Verification, canonical_json, now_ms, verify_chain,
};

/// How long [`AuditWorker::flush`] waits for the entries queued before it.
const FLUSH_WAIT: Duration = Duration::from_secs(30);

enum Job {
    Append(i64, Box<AuditEntry>),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The handle to the audit thread; also the gate's sink.
#[derive(Debug, Clone)]
pub(super) struct AuditWorker {
    jobs: Sender<Job>,
}

impl AuditWorker {
    /// Starts the thread; it connects on its first job.
    pub(super) fn start(options: PostgresOptions) -> Result<Self, PostgresError> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("agentgate-pg-audit".to_string())
            .spawn(move || serve(options, queue))
            .map_err(|e| PostgresError::Connect(format!("cannot start the audit thread: {e}")))?;
        Ok(AuditWorker { jobs })
    }

    /// Waits until the entries queued so far are committed (or failed).
    pub(super) async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_err() {
            tracing::warn!("the audit log could not be flushed: its thread has stopped");
            return;
        }
        if tokio::time::timeout(FLUSH_WAIT, wait).await.is_err() {
            tracing::warn!("the audit log was not flushed within {FLUSH_WAIT:?}");
        }
    }
}

impl AuditSink for AuditWorker {
    fn record(&self, entry: AuditEntry) {
        if self
            .jobs
            .send(Job::Append(now_ms(), Box::new(entry)))
            .is_err()
        {
            tracing::error!("an audit entry could not be queued: the audit thread has stopped");
        }
    }
}

/// The thread: one runtime, one connection (made on the first append, made
/// again after a failure), jobs in order.
fn serve(options: PostgresOptions, queue: Receiver<Job>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "the PostgreSQL audit thread has no runtime");
            return;
        }
    };
    let mut pool: Option<PgPool> = None;
    for job in queue {
        let (time_ms, entry) = match job {
            // The waiter may have timed out and gone.
            Job::Flush(done) => {
                done.send(()).ok();
                continue;
            }
            Job::Append(time_ms, entry) => (time_ms, entry),
        };
        runtime.block_on(async {
            let ready = match &pool {
                Some(ready) => Ok(ready.clone()),
                None => options.pool(1).await,
            };
            let stored = match ready {
                Ok(ready) => {
                    pool = Some(ready.clone());
                    append(&ready, time_ms, &entry).await
                }
                Err(error) => Err(error),
            };
            if let Err(error) = stored {
                tracing::error!(%error, "an audit entry could not be stored");
            }
        });
    }
}

/// Appends `entry` after the chain head, in one transaction holding the
/// head's row lock.
async fn append(pool: &PgPool, time_ms: i64, entry: &AuditEntry) -> Result<(), PostgresError> {
    let mut tx = pool.begin().await?;
    let (last, prev_hash): (i64, String) =
        sqlx::query_as("SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE")
            .fetch_one(&mut *tx)
            .await?;
    let row = AuditRow::new(last + 1, time_ms, entry);
    let hash = row.hash(&prev_hash);
    sqlx::query(
        "INSERT INTO audit (seq, time_ms, session_id, kind, entry, prev_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(row.seq)
    .bind(row.time_ms)
    .bind(&row.session_id)
    .bind(&row.kind)
    .bind(canonical_json(&row.entry))
    .bind(&prev_hash)
    .bind(&hash)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1")
        .bind(row.seq)
        .bind(&hash)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// A row of `audit`: seq, time_ms, session_id, kind, entry, prev_hash, hash.
type RawRow = (i64, i64, Option<String>, String, String, String, String);

const COLUMNS: &str = "seq, time_ms, session_id, kind, entry, prev_hash, hash";

/// The record of a row; `Err(seq)` when its entry is not JSON any more.
fn record_of(row: RawRow) -> Result<AuditRecord, i64> {
    let (seq, time_ms, session_id, kind, text, prev_hash, hash) = row;
    let entry = serde_json::from_str(&text).map_err(|_| seq)?;
    Ok(AuditRecord {
        seq,
        time_ms,
        session_id,
        kind,
        entry,
        prev_hash,
        hash,
    })
}

/// The rows `query` selects, in chain order.
async fn select(pool: &PgPool, query: &AuditQuery) -> Result<Vec<AuditRecord>, PostgresError> {
    let rows: Vec<RawRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM audit
         WHERE ($1::TEXT IS NULL OR session_id = $1) AND ($2::BIGINT IS NULL OR time_ms >= $2)
         ORDER BY seq"
    ))
    .bind(&query.session)
    .bind(query.since_ms)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|row| {
            record_of(row)
                .map_err(|seq| PostgresError::Corrupt(format!("audit entry {seq} is not JSON")))
        })
        .collect()
}

/// Walks the chain in one snapshot; an undecodable entry counts as
/// altered.
async fn verify(pool: &PgPool) -> Result<Verification, PostgresError> {
    let mut tx = pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .execute(&mut *tx)
        .await?;
    let head: Option<(i64, String)> =
        sqlx::query_as("SELECT seq, hash FROM audit_head WHERE id = 1")
            .fetch_optional(&mut *tx)
            .await?;
    let head = head.unwrap_or((0, GENESIS_HASH.to_string()));
    let rows: Vec<RawRow> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM audit ORDER BY seq"))
        .fetch_all(&mut *tx)
        .await?;
    tx.commit().await?;
    let mut records = Vec::with_capacity(rows.len());
    for row in rows {
        match record_of(row) {
            Ok(record) => records.push(record),
            Err(seq) => {
                return Ok(Verification {
                    entries: i64::try_from(records.len()).unwrap_or(i64::MAX) + 1,
                    broken: Some(ChainBreak::Altered { seq }),
                });
            }
        }
    }
    Ok(verify_chain(records, (head.0, head.1.as_str())))
}

#[async_trait]
impl AuditLog for PostgresStore {
    fn audit_sink(&self) -> Arc<dyn AuditSink> {
        Arc::new(self.audit.clone())
    }

    async fn flush_audit(&self) {
        self.audit.flush().await;
    }

    async fn audit_entries(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AuditError> {
        select(self.pool(), query)
            .await
            .map_err(|e| AuditError::Store(e.to_string()))
    }

    async fn verify_audit(&self) -> Result<Verification, AuditError> {
        verify(self.pool())
            .await
            .map_err(|e| AuditError::Store(e.to_string()))
    }
}
