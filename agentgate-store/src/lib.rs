//! # agentgate-store
//!
//! Where a host outside one process keeps what its agents share:
//!
//! - [`SqliteStore`] (feature `sqlite`, on by default): sessions, messages
//!   and remembered "always" approvals in one SQLite file (WAL, one
//!   transaction per write, versioned schema, safe for several processes).
//!   The `agent` CLI keeps its data in one at `<data dir>/agentgate.db`.
//! - `PostgresStore` and `PostgresRelay` (feature `postgres`): the same
//!   stores in PostgreSQL, for several servers sharing one database, and
//!   the relay that carries asks and answers between them over
//!   `LISTEN/NOTIFY`.
//! - [`AskRelay`]: permission asks that every process of a deployment can
//!   list and answer. An ask raised by a turn in one process is published;
//!   an answer given in any process reaches the process whose gate waits.
//!   [`LocalRelay`] is the in-process relay (one server, no database).
//! - [`import_file_store`] and [`import_json_approvals`]: the one-time
//!   migration from the file stores of `agentgate-core` and
//!   `agentgate-permission`.
//!
//! The guide is `docs/stores.md`: which store when, PostgreSQL setup, the
//! relay.

mod audit;
mod import;
#[cfg(feature = "postgres")]
mod postgres;
mod relay;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use audit::{
    AuditError, AuditLog, AuditQuery, AuditRecord, AuditRow, ChainBreak, GENESIS_HASH,
    Verification, canonical_json, verify_chain,
};
pub use import::{ImportReport, import_file_store, import_json_approvals};
#[cfg(feature = "postgres")]
pub use postgres::{
    HEARTBEAT, OWNER_GONE_AFTER, PostgresError, PostgresOptions, PostgresRelay, PostgresStore,
};
pub use relay::{AskRelay, LocalRelay, RelayError, RelayedReply};
#[cfg(feature = "sqlite")]
pub use sqlite::{
    BUSY_TIMEOUT, SCHEMA_VERSION, SavedAsk, SqliteAuditSink, SqliteError, SqliteRelay, SqliteStore,
};
