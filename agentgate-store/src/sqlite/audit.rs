//! The audit log in the SQLite file: [`SqliteAuditSink`] queues each
//! entry as a write of the store's worker (group-committed with the
//! others), which appends it to the chain inside the batch's immediate
//! transaction, so processes sharing the file append one after another.

use std::sync::Arc;

use agentgate_permission::{AuditEntry, AuditSink};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{SqliteError, SqliteStore};
use crate::audit::{
    AuditError, AuditLog, AuditQuery, AuditRecord, AuditRow, ChainBreak, GENESIS_HASH,
    Verification, canonical_json, now_ms, verify_chain,
};

/// The sink a [`SqliteStore`] gives the gate
/// ([`AuditLog::audit_sink`]): `record` only queues.
#[derive(Debug, Clone)]
pub struct SqliteAuditSink {
    store: SqliteStore,
}

impl AuditSink for SqliteAuditSink {
    fn record(&self, entry: AuditEntry) {
        let time_ms = now_ms();
        let queued = self.store.write_detached(
            move |store, conn| append(store, conn, time_ms, &entry),
            |stored| {
                if let Err(error) = stored {
                    tracing::error!(%error, "an audit entry could not be stored");
                }
            },
        );
        if let Err(error) = queued {
            tracing::error!(%error, "an audit entry could not be queued");
        }
    }
}

/// Appends `entry` after the chain head, in the caller's transaction.
fn append(
    store: &SqliteStore,
    conn: &Connection,
    time_ms: i64,
    entry: &AuditEntry,
) -> Result<(), SqliteError> {
    let sql = |e: rusqlite::Error| store.sql(e);
    // Every entry runs these three: each is prepared once per connection.
    let (last, prev_hash): (i64, String) = conn
        .prepare_cached("SELECT seq, hash FROM audit_head WHERE id = 1")
        .and_then(|mut head| head.query_row([], |r| Ok((r.get(0)?, r.get(1)?))))
        .map_err(sql)?;
    let row = AuditRow::new(last + 1, time_ms, entry);
    let hash = row.hash(&prev_hash);
    conn.prepare_cached(
        "INSERT INTO audit (seq, time_ms, session_id, kind, entry, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut insert| {
        insert.execute(params![
            row.seq,
            row.time_ms,
            row.session_id,
            row.kind,
            canonical_json(&row.entry),
            prev_hash,
            hash
        ])
    })
    .map_err(sql)?;
    conn.prepare_cached("UPDATE audit_head SET seq = ?1, hash = ?2 WHERE id = 1")
        .and_then(|mut update| update.execute(params![row.seq, hash]))
        .map_err(sql)?;
    Ok(())
}

/// A row of `audit` (columns in table order); `Err(seq)` when its entry
/// is not JSON any more.
fn record_of(row: &Row<'_>) -> rusqlite::Result<Result<AuditRecord, i64>> {
    let seq: i64 = row.get(0)?;
    let text: String = row.get(4)?;
    let Ok(entry) = serde_json::from_str(&text) else {
        return Ok(Err(seq));
    };
    Ok(Ok(AuditRecord {
        seq,
        time_ms: row.get(1)?,
        session_id: row.get(2)?,
        kind: row.get(3)?,
        entry,
        prev_hash: row.get(5)?,
        hash: row.get(6)?,
    }))
}

/// The rows `query` selects, in order.
fn select(
    store: &SqliteStore,
    conn: &Connection,
    query: &AuditQuery,
) -> Result<Vec<AuditRecord>, SqliteError> {
    let sql = |e: rusqlite::Error| store.sql(e);
    let mut statement = conn
        .prepare(
            "SELECT seq, time_ms, session_id, kind, entry, prev_hash, hash FROM audit
             WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR time_ms >= ?2)
             ORDER BY seq",
        )
        .map_err(sql)?;
    let rows = statement
        .query_map(params![query.session, query.since_ms], record_of)
        .map_err(sql)?;
    let mut out = Vec::new();
    for row in rows {
        let record = row
            .map_err(sql)?
            .map_err(|seq| store.corrupt(format!("audit entry {seq} is not JSON")))?;
        out.push(record);
    }
    Ok(out)
}

/// Walks the chain; an undecodable entry counts as altered.
fn verify(store: &SqliteStore, conn: &Connection) -> Result<Verification, SqliteError> {
    let sql = |e: rusqlite::Error| store.sql(e);
    let head: (i64, String) = conn
        .query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(sql)?
        .unwrap_or((0, GENESIS_HASH.to_string()));
    let mut statement = conn
        .prepare(
            "SELECT seq, time_ms, session_id, kind, entry, prev_hash, hash FROM audit ORDER BY seq",
        )
        .map_err(sql)?;
    let rows = statement.query_map([], record_of).map_err(sql)?;
    let mut records = Vec::new();
    for row in rows {
        match row.map_err(sql)? {
            Ok(record) => records.push(record),
            // The text no longer decodes: the row was edited.
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

impl SqliteStore {
    /// The audit rows `query` selects, in chain order.
    pub async fn audit_entries(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, SqliteError> {
        let query = query.clone();
        self.read(move |store, conn| select(store, conn, &query))
            .await
    }

    /// Walks the audit chain and names the first row that was altered or
    /// removed ([`verify_chain`]).
    pub async fn verify_audit(&self) -> Result<Verification, SqliteError> {
        self.read(|store, conn| verify(store, conn)).await
    }

    /// The sink recording a gate's decisions in this file.
    pub fn audit_sink(&self) -> SqliteAuditSink {
        SqliteAuditSink {
            store: self.clone(),
        }
    }

    /// Waits until the entries queued so far are committed: the worker
    /// answers a read only after the writes queued before it.
    pub async fn flush_audit(&self) {
        if let Err(error) = self.read(|_, _| Ok(())).await {
            tracing::warn!(%error, "the audit log could not be flushed");
        }
    }
}

#[async_trait]
impl AuditLog for SqliteStore {
    fn audit_sink(&self) -> Arc<dyn AuditSink> {
        Arc::new(SqliteStore::audit_sink(self))
    }

    async fn flush_audit(&self) {
        SqliteStore::flush_audit(self).await;
    }

    async fn audit_entries(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AuditError> {
        SqliteStore::audit_entries(self, query)
            .await
            .map_err(|e| AuditError::Store(e.to_string()))
    }

    async fn verify_audit(&self) -> Result<Verification, AuditError> {
        SqliteStore::verify_audit(self)
            .await
            .map_err(|e| AuditError::Store(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_permission::{Action, AskRequest, PermissionGate, Rule, Ruleset};

    fn open_temp() -> (SqliteStore, std::path::PathBuf) {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentgate-audit-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let path = dir.join("agentgate.db");
        (SqliteStore::open(&path).unwrap(), path)
    }

    async fn three_decisions(store: &SqliteStore) {
        let gate = PermissionGate::builder()
            .audit(AuditLog::audit_sink(store))
            .build()
            .unwrap();
        let rules = Ruleset::from(vec![Rule::new("bash", "ls*", Action::Allow)]);
        for session in ["a", "b", "a"] {
            gate.ask(AskRequest::new(session, "bash", ["ls"]).ruleset(rules.clone()))
                .await
                .unwrap();
        }
        store.flush_audit().await;
    }

    #[tokio::test]
    async fn appends_read_back_in_order_and_verify() {
        let (store, _) = open_temp();
        three_decisions(&store).await;
        let all = store.audit_entries(&AuditQuery::default()).await.unwrap();
        assert_eq!(all.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(all[1].prev_hash, all[0].hash);
        assert_eq!(all[0].kind, "decided");
        let only_a = AuditQuery {
            session: Some("a".into()),
            ..AuditQuery::default()
        };
        assert_eq!(store.audit_entries(&only_a).await.unwrap().len(), 2);
        let verdict = store.verify_audit().await.unwrap();
        assert!(verdict.is_intact(), "{verdict:?}");
        assert_eq!(verdict.entries, 3);
    }

    #[tokio::test]
    async fn an_edited_row_is_named_and_a_deleted_row_detected() {
        let (store, path) = open_temp();
        three_decisions(&store).await;
        let other = Connection::open(&path).unwrap();
        other
            .execute(
                "UPDATE audit SET entry = replace(entry, '\"a\"', '\"z\"') WHERE seq = 3",
                [],
            )
            .unwrap();
        assert_eq!(
            store.verify_audit().await.unwrap().broken,
            Some(ChainBreak::Altered { seq: 3 })
        );
        other
            .execute("DELETE FROM audit WHERE seq = 2", [])
            .unwrap();
        assert_eq!(
            store.verify_audit().await.unwrap().broken,
            Some(ChainBreak::Missing { first: 2, last: 2 })
        );
        // A second connection appends after the first, on one chain.
        let (fresh, path) = open_temp();
        three_decisions(&fresh).await;
        let again = SqliteStore::open(&path).unwrap();
        three_decisions(&again).await;
        let verdict = fresh.verify_audit().await.unwrap();
        assert!(verdict.is_intact(), "{verdict:?}");
        assert_eq!(verdict.entries, 6);
    }
}
