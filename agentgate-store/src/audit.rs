//! The audit log of permission decisions, as the stores keep it: one row
//! per [`AuditEntry`] in a hash chain, so a removed or altered row is
//! found by [`verify_chain`].
//!
//! Each row holds `seq` (1, 2, 3 … with no gap), the time, the session,
//! the entry's kind, the entry as canonical JSON, `prev_hash` (the `hash`
//! of row `seq - 1`, or [`GENESIS_HASH`] for the first) and
//! `hash = SHA-256(prev_hash || canonical JSON of the row)`, hex, where the
//! row is `{"entry", "kind", "seq", "session_id", "time_ms"}`. A one-row
//! chain head (`seq` and `hash` of the last row, written in the same
//! transaction as the row) makes a removed last row visible too.
//!
//! The row's JSON is canonical: object keys sorted, no whitespace, as
//! serde_json writes strings and numbers.

use std::sync::Arc;

use agentgate_permission::{AuditEntry, AuditSink};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev_hash` of the first row: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Why the audit log could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The store failed.
    #[error("cannot read the audit log: {0}; check that the store is reachable and retry")]
    Store(String),
}

/// One stored audit row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Position in the chain, from 1.
    pub seq: i64,
    /// When the gate decided, milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// The session, `None` for a trust decision.
    pub session_id: Option<String>,
    /// The entry's kind (`decided`, `asked`, `answered`, `withdrawn`,
    /// `trust`).
    pub kind: String,
    /// The entry (an [`AuditEntry`] as JSON; kept as JSON so a row written
    /// by a newer SDK still reads).
    pub entry: Value,
    /// The hash of the previous row.
    pub prev_hash: String,
    /// This row's hash.
    pub hash: String,
}

/// Which rows [`AuditLog::audit_entries`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only this session's rows.
    pub session: Option<String>,
    /// Only rows at or after this time (milliseconds since the epoch).
    pub since_ms: Option<i64>,
}

/// What [`verify_chain`] found wrong first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChainBreak {
    /// The row's hash is not the hash of its content: it was altered.
    #[error("audit entry {seq} was altered: its hash does not match its content")]
    Altered {
        /// The row.
        seq: i64,
    },
    /// The row's `prev_hash` is not the previous row's hash.
    #[error("audit entry {seq} does not follow entry {previous}: the chain is broken there")]
    Unlinked {
        /// The row.
        seq: i64,
        /// The row before it.
        previous: i64,
    },
    /// Rows are missing between two rows.
    #[error("audit entries {first} to {last} are missing (removed)")]
    Missing {
        /// The first missing `seq`.
        first: i64,
        /// The last missing `seq`.
        last: i64,
    },
    /// The chain head names a last row the table does not end with.
    #[error(
        "the audit log ends at entry {found} but its head records entry {head}: entries were removed or added outside the store"
    )]
    Head {
        /// The head's `seq`.
        head: i64,
        /// The last row's `seq` (0: none).
        found: i64,
    },
}

/// The result of verifying the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// How many rows were checked.
    pub entries: i64,
    /// The first problem, `None` when the chain is intact.
    pub broken: Option<ChainBreak>,
}

impl Verification {
    /// Whether the chain is intact.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// An audit log kept in a store: the sink the gate records into, and the
/// rows read back.
#[async_trait]
pub trait AuditLog: Send + Sync {
    /// The sink to install on a gate
    /// ([`PermissionGate::set_audit`](agentgate_permission::PermissionGate::set_audit)):
    /// it queues each entry, and the store appends it on its own worker.
    fn audit_sink(&self) -> Arc<dyn AuditSink>;

    /// Waits until every entry recorded so far is stored (call it before
    /// the process exits).
    async fn flush_audit(&self);

    /// The rows `query` selects, in chain order.
    async fn audit_entries(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AuditError>;

    /// Walks the whole chain (see [`verify_chain`]).
    async fn verify_audit(&self) -> Result<Verification, AuditError>;
}

/// `value` as canonical JSON: keys sorted, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    write_canonical(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The row's fields before hashing: everything but the hashes.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRow {
    /// Position in the chain.
    pub seq: i64,
    /// Milliseconds since the epoch.
    pub time_ms: i64,
    /// The session.
    pub session_id: Option<String>,
    /// The kind.
    pub kind: String,
    /// The entry, as JSON.
    pub entry: Value,
}

impl AuditRow {
    /// The row for `entry`, decided at `time_ms`, at `seq`.
    pub fn new(seq: i64, time_ms: i64, entry: &AuditEntry) -> Self {
        AuditRow {
            seq,
            time_ms,
            session_id: entry.session_id().map(str::to_string),
            kind: entry.kind().to_string(),
            entry: serde_json::to_value(entry).unwrap_or(Value::Null),
        }
    }

    /// `SHA-256(prev_hash || canonical JSON of the row)`, hex.
    pub fn hash(&self, prev_hash: &str) -> String {
        let document = serde_json::json!({
            "entry": self.entry,
            "kind": self.kind,
            "seq": self.seq,
            "session_id": self.session_id,
            "time_ms": self.time_ms,
        });
        let mut hasher = Sha256::new();
        hasher.update(prev_hash.as_bytes());
        hasher.update(canonical_json(&document).as_bytes());
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// Walks `rows` (in `seq` order) and names the first row whose hash does
/// not match its content or its predecessor, a gap in `seq`, or a last
/// row other than the chain head `head` (`(seq, hash)`; `(0,
/// GENESIS_HASH)` for an empty log).
pub fn verify_chain(
    rows: impl IntoIterator<Item = AuditRecord>,
    head: (i64, &str),
) -> Verification {
    let mut previous: (i64, String) = (0, GENESIS_HASH.to_string());
    let mut entries = 0;
    for record in rows {
        entries += 1;
        let broken = if record.seq > previous.0 + 1 {
            Some(ChainBreak::Missing {
                first: previous.0 + 1,
                last: record.seq - 1,
            })
        } else if record.prev_hash != previous.1 {
            Some(ChainBreak::Unlinked {
                seq: record.seq,
                previous: previous.0,
            })
        } else if row_of(&record).hash(&record.prev_hash) != record.hash {
            Some(ChainBreak::Altered { seq: record.seq })
        } else {
            None
        };
        if broken.is_some() {
            return Verification { entries, broken };
        }
        previous = (record.seq, record.hash);
    }
    let broken = (head.0 != previous.0 || head.1 != previous.1).then_some(ChainBreak::Head {
        head: head.0,
        found: previous.0,
    });
    Verification { entries, broken }
}

fn row_of(record: &AuditRecord) -> AuditRow {
    AuditRow {
        seq: record.seq,
        time_ms: record.time_ms,
        session_id: record.session_id.clone(),
        kind: record.kind.clone(),
        entry: record.entry.clone(),
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<AuditRecord> {
        let mut prev = GENESIS_HASH.to_string();
        (1..=n)
            .map(|seq| {
                let entry = AuditEntry::Withdrawn {
                    session_id: "s".into(),
                    request_id: format!("per_{seq}"),
                    reason: "cancelled".into(),
                };
                let row = AuditRow::new(seq, 1000 + seq, &entry);
                let hash = row.hash(&prev);
                AuditRecord {
                    seq,
                    time_ms: row.time_ms,
                    session_id: row.session_id,
                    kind: row.kind,
                    entry: row.entry,
                    prev_hash: std::mem::replace(&mut prev, hash.clone()),
                    hash,
                }
            })
            .collect()
    }

    fn head(rows: &[AuditRecord]) -> (i64, &str) {
        rows.last()
            .map_or((0, GENESIS_HASH), |r| (r.seq, r.hash.as_str()))
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let value = serde_json::json!({"b": 1, "a": {"d": [1, {"z": 0, "y": "é"}], "c": null}});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":null,"d":[1,{"y":"é","z":0}]},"b":1}"#
        );
    }

    #[test]
    fn an_intact_chain_verifies() {
        let rows = chain(3);
        let verdict = verify_chain(rows.clone(), head(&rows));
        assert_eq!(verdict.entries, 3);
        assert!(verdict.is_intact());
        assert!(verify_chain(Vec::new(), (0, GENESIS_HASH)).is_intact());
    }

    #[test]
    fn an_altered_row_is_named() {
        let rows = chain(3);
        let last = head(&rows);
        let mut tampered = rows.clone();
        tampered[1].entry["reason"] = "shutdown".into();
        assert_eq!(
            verify_chain(tampered, last).broken,
            Some(ChainBreak::Altered { seq: 2 })
        );
        // Rehashing the altered row breaks the link to the next one.
        let mut rehashed = rows.clone();
        rehashed[1].entry["reason"] = "shutdown".into();
        rehashed[1].hash = row_of(&rehashed[1]).hash(&rehashed[1].prev_hash);
        assert_eq!(
            verify_chain(rehashed, last).broken,
            Some(ChainBreak::Unlinked {
                seq: 3,
                previous: 2
            })
        );
    }

    #[test]
    fn removed_rows_are_detected() {
        let rows = chain(4);
        let last = head(&rows);
        let mut gap = rows.clone();
        gap.remove(1);
        assert_eq!(
            verify_chain(gap, last).broken,
            Some(ChainBreak::Missing { first: 2, last: 2 })
        );
        let mut truncated = rows.clone();
        truncated.pop();
        assert_eq!(
            verify_chain(truncated, last).broken,
            Some(ChainBreak::Head { head: 4, found: 3 })
        );
    }
}
