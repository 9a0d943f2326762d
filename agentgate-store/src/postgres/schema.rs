//! The PostgreSQL schema and its forward migrations.

use sqlx::postgres::PgConnection;
use sqlx::{Connection, Executor};

use super::PostgresError;

/// The schema version this SDK writes.
const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migration `i` takes a schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, messages, approvals, and the relay's pending asks and
    // the answers sent for them. `seq` is insertion order.
    "CREATE TABLE sessions (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        directory TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX sessions_by_directory ON sessions (directory, seq);
    CREATE TABLE messages (
        seq BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (session_id, id)
    );
    CREATE INDEX messages_by_session ON messages (session_id, seq);
    CREATE TABLE approvals (
        seq BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        rule TEXT NOT NULL
    );
    CREATE INDEX approvals_by_project ON approvals (project, seq);
    CREATE TABLE pending_asks (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL
    );
    CREATE TABLE ask_replies (
        seq BIGSERIAL PRIMARY KEY,
        request_id TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX ask_replies_by_request ON ask_replies (request_id);",
    // 2: the audit log of permission decisions, a hash chain (the crate's
    // `audit` module), and its one-row head: the last row's seq and hash,
    // locked and moved by every append, so servers sharing the database
    // append one after another. `entry` is TEXT, not JSONB: the canonical
    // JSON is kept byte for byte as it was hashed.
    "CREATE TABLE audit (
        seq BIGINT PRIMARY KEY,
        time_ms BIGINT NOT NULL,
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
        seq BIGINT NOT NULL,
        hash TEXT NOT NULL
    );
    INSERT INTO audit_head (id, seq, hash)
        VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');",
    // 3: asks that outlive their server: each ask names the relay that
    // raised it, and each relay says it is alive every few seconds; an ask
    // whose relay went quiet is resumed by the server that gets its answer.
    "ALTER TABLE pending_asks ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    ALTER TABLE pending_asks ADD COLUMN created_ms BIGINT NOT NULL DEFAULT 0;
    CREATE TABLE relay_owners (
        owner TEXT PRIMARY KEY,
        seen_ms BIGINT NOT NULL
    );",
];

/// Creates `schema` if needed and brings it to [`SCHEMA_VERSION`], in one
/// transaction holding an advisory lock (servers connecting together
/// migrate one after the other).
pub(super) async fn migrate(conn: &mut PgConnection, schema: &str) -> Result<(), PostgresError> {
    let mut tx = conn.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('agentgate-store migrations'))")
        .execute(&mut *tx)
        .await?;
    tx.execute(format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"").as_str())
        .await?;
    tx.execute(format!("SET LOCAL search_path TO \"{schema}\"").as_str())
        .await?;
    tx.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
        .await?;
    let current: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_version")
            .fetch_one(&mut *tx)
            .await?;
    if current > SCHEMA_VERSION {
        return Err(PostgresError::TooNew {
            schema: schema.to_string(),
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    if current < SCHEMA_VERSION {
        for migration in MIGRATIONS
            .iter()
            .skip(usize::try_from(current).unwrap_or(0))
        {
            sqlx::raw_sql(migration).execute(&mut *tx).await?;
        }
        tx.execute("DELETE FROM schema_version").await?;
        sqlx::query("INSERT INTO schema_version (version) VALUES ($1)")
            .bind(SCHEMA_VERSION)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}
