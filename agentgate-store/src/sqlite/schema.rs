//! The SQLite schema and its forward migrations.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::SqliteError;

/// The schema version this SDK writes: the number of forward migrations
/// this module holds, each moving a file one version forward; a file is
/// never migrated backwards.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migration `i` takes a file from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, messages, approvals, and the record of imports from the
    // file stores. `seq` is insertion order (kept when a row is replaced).
    "CREATE TABLE sessions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        directory TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX sessions_by_directory ON sessions (directory, seq);
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (session_id, id)
    );
    CREATE INDEX messages_by_session ON messages (session_id, seq);
    CREATE TABLE approvals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        rule TEXT NOT NULL
    );
    CREATE INDEX approvals_by_project ON approvals (project, seq);
    CREATE TABLE imports (
        source TEXT PRIMARY KEY,
        imported_at INTEGER NOT NULL,
        sessions INTEGER NOT NULL,
        messages INTEGER NOT NULL,
        approvals INTEGER NOT NULL
    );",
    // 2: the audit log of permission decisions, a hash chain (`audit`
    // module of the crate), and its head: the last row's seq and hash,
    // updated with every append.
    "CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        time_ms INTEGER NOT NULL,
        session_id TEXT,
        kind TEXT NOT NULL,
        entry TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX audit_by_session ON audit (session_id, seq);
    CREATE INDEX audit_by_time ON audit (time_ms);
    CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL
    );
    INSERT INTO audit_head (id, seq, hash)
        VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');",
    // 3: the asks waiting for an answer (the durable relay, `relay.rs`):
    // one row per ask until it is answered and claimed, so an ask outlives
    // the process that raised it.
    "CREATE TABLE pending_asks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        owner_pid INTEGER NOT NULL DEFAULT 0,
        body TEXT NOT NULL
    );",
];

/// Brings the file to [`SCHEMA_VERSION`] in one immediate transaction (a
/// second process opening the file at the same time waits, then finds it
/// migrated).
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), SqliteError> {
    let sql = |e: rusqlite::Error| SqliteError::Open {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(sql)?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(sql)?;
    if current > SCHEMA_VERSION {
        return Err(SqliteError::TooNew {
            path: path.to_path_buf(),
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    for migration in MIGRATIONS
        .iter()
        .skip(usize::try_from(current).unwrap_or(0))
    {
        tx.execute_batch(migration).map_err(sql)?;
    }
    tx.execute("DELETE FROM schema_version", []).map_err(sql)?;
    tx.execute(
        "INSERT INTO schema_version (version) VALUES (?1)",
        [SCHEMA_VERSION],
    )
    .map_err(sql)?;
    tx.commit().map_err(sql)
}
