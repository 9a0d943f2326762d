//! [`SqliteStore`]: sessions, messages and remembered approvals in one
//! SQLite file, shared safely by every process that opens it.
//!
//! - **WAL mode** (readers never wait for the writer) and a **busy timeout**
//!   of [`BUSY_TIMEOUT`], so several processes on one file queue their
//!   writes instead of failing.
//! - **Each write whole or not at all**: a session, a message, an append
//!   or a revocation is committed entirely or not at all (concurrent
//!   session writes share one transaction, each in its own savepoint).
//! - **A versioned schema** (`schema_version` table) migrated forward when
//!   the file is opened; a file from a newer SDK is refused, not rewritten.
//! - **Ids are stored keys**, not file names: any id is accepted.
//! - Sessions and messages are stored as their JSON (serde of
//!   [`Session`](agentgate_core::Session) and
//!   [`Message`](agentgate_core::Message)) with indexed columns (ids,
//!   session, insertion order), so reads come back in order without a scan.
//!
//! The connection is synchronous (rusqlite): the [`ApprovalStore`](agentgate_permission::ApprovalStore)
//! methods use it directly (short writes at human speed), the async
//! [`SessionStore`](agentgate_core::SessionStore) methods are jobs of one
//! worker thread, which commits the writes waiting together (group
//! commit: one `fsync` for a batch, each write answered once it is on
//! disk).

mod approvals;
mod audit;
mod relay;
mod schema;
mod sessions;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use agentgate_permission::private_files;
use rusqlite::{Connection, OptionalExtension};

use crate::import::{ImportReport, import_file_store, import_json_approvals};
pub use audit::SqliteAuditSink;
pub use relay::{SavedAsk, SqliteRelay};
pub use schema::SCHEMA_VERSION;

/// How long a write waits for another process holding the file's write
/// lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many prepared statements a connection keeps.
const STATEMENT_CACHE: usize = 64;

/// Why the SQLite store could not be opened or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteError {
    /// The file could not be opened or prepared (directory missing and not
    /// creatable, no permission, not a database).
    #[error("cannot open the SQLite store {}: {detail}; check the path and its permissions", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The file was written by a newer version of the SDK.
    #[error(
        "the SQLite store {} has schema version {found}, but this SDK knows only up to {supported}; upgrade the SDK or open another file",
        path.display()
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The version the file declares.
        found: i64,
        /// The newest version this SDK writes.
        supported: i64,
    },
    /// A statement failed (locked for longer than [`BUSY_TIMEOUT`], disk
    /// full, corrupt file).
    #[error("SQLite store {}: {detail}; retry, or check the disk and the file", path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// A stored row does not decode.
    #[error("SQLite store {}: {detail}; the row was written by something else than this SDK", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// Which row and what the decoder said.
        detail: String,
    },
}

/// Sessions, messages and "always" approvals in one SQLite file.
///
/// Implements [`SessionStore`](agentgate_core::SessionStore) and
/// [`ApprovalStore`](agentgate_permission::ApprovalStore). Cloning shares
/// the connection; open the file again (in this process or another) for a
/// second connection.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agentgate_core::{Message, Session, SessionStore};
/// use agentgate_store::SqliteStore;
///
/// let dir = std::env::temp_dir().join(format!("doc-sqlite-{}", std::process::id()));
/// let store = SqliteStore::open(dir.join("agentgate.db")).unwrap();
/// let session = Session::new("build", ".");
/// store.put_session(&session).await.unwrap();
/// store.put_message(&Message::user(&session.id, "hi")).await.unwrap();
///
/// // Another connection (as another process would open it) sees both.
/// let other = SqliteStore::open(dir.join("agentgate.db")).unwrap();
/// assert_eq!(other.session(&session.id).await.unwrap().id, session.id);
/// assert_eq!(other.messages(&session.id).await.unwrap()[0].text(), "hi");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    path: Arc<PathBuf>,
    conn: Arc<Mutex<Connection>>,
    /// The worker's queue, once started (`worker`).
    queue: Arc<std::sync::OnceLock<std::sync::mpsc::Sender<worker::Job>>>,
}

/// The database file and its `-wal`, `-shm` and `-journal` companions:
/// only their owner may read them (they hold every transcript). A new
/// database is created `0600` before SQLite opens it, whose companions
/// then take the database's mode; existing ones are tightened.
fn make_private(path: &Path) -> Result<(), String> {
    let created =
        private_files::private_file_options(std::fs::OpenOptions::new().write(true).create(true))
            .open(path);
    if let Err(error) = created {
        return Err(format!("cannot create {}: {error}", path.display()));
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = PathBuf::from(name);
        private_files::tighten(&file)
            .map_err(|e| format!("cannot make {} private: {e}", file.display()))?;
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating it and its directory if needed) the store at `path`
    /// and migrates its schema to [`SCHEMA_VERSION`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, SqliteError> {
        let path = path.into();
        let open_error = |detail: String| SqliteError::Open {
            path: path.clone(),
            detail,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private_files::create_private_dir_all(parent)
                .map_err(|e| open_error(format!("cannot create {}: {e}", parent.display())))?;
        }
        make_private(&path).map_err(open_error)?;
        let mut conn = Connection::open(&path).map_err(|e| open_error(e.to_string()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| open_error(e.to_string()))?;
        // Every statement the store runs stays prepared (rusqlite keeps 16
        // by default; the store runs about twenty).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // WAL: readers and the writer do not block each other. FULL: each
        // commit syncs the log once, so a stored message survives a power
        // loss as it did in the file store (which synced every file), at one
        // fsync per step (the engine stores a step's message once, when it
        // is complete) rather than the file store's create, fsync and
        // rename per message. A killed process loses nothing either way
        // (tests/suite/sqlite_crash.rs).
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| open_error(e.to_string()))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| open_error(e.to_string()))?;
        schema::migrate(&mut conn, &path)?;
        Ok(SqliteStore {
            path: Arc::new(path),
            conn: Arc::new(Mutex::new(conn)),
            queue: Arc::default(),
        })
    }

    /// Copies the write-ahead log into the database file and empties it,
    /// when no other connection (another process) is reading it; else
    /// leaves it for a later checkpoint. Nothing is lost either way.
    ///
    /// For a short-lived process, the last thing before it exits: the
    /// next process to open the file then has no log to replay. A
    /// connection still open at exit (one kept in a `static`, or a worker
    /// thread the exit stops) never checkpoints, and every later opening
    /// reads the whole log again, up to SQLite's automatic checkpoint at
    /// about 4 MB. Waits for the writes queued before it; never waits for
    /// another process's lock.
    pub async fn checkpoint(&self) -> Result<(), SqliteError> {
        self.read(|store, conn| {
            let sql = |e: rusqlite::Error| store.sql(e);
            conn.busy_timeout(Duration::ZERO).map_err(sql)?;
            let done = conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(sql);
            conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
            done
        })
        .await
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file (always [`SCHEMA_VERSION`] after
    /// [`open`](Self::open)).
    pub fn schema_version(&self) -> Result<i64, SqliteError> {
        let conn = self.lock();
        conn.query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
            .map_err(|e| self.sql(e))
    }

    /// Copies the sessions and messages of the [`FileSessionStore`](agentgate_core::FileSessionStore)
    /// directory `dir` into this store, once: a row of the `imports` table
    /// records it, and later calls return `Ok(None)`. The files are left in
    /// place. A directory without sessions imports nothing (and is still
    /// recorded).
    pub async fn import_file_sessions_once(
        &self,
        dir: &Path,
    ) -> Result<Option<ImportReport>, agentgate_core::SessionStoreError> {
        let source = format!("sessions:{}", dir.display());
        if self
            .imported(&source)
            .map_err(|e| agentgate_core::SessionStoreError::Io(e.to_string()))?
        {
            return Ok(None);
        }
        let report = import_file_store(dir, self).await?;
        self.mark_imported(&source, &report)
            .map_err(|e| agentgate_core::SessionStoreError::Io(e.to_string()))?;
        Ok(Some(report))
    }

    /// Copies the approvals of the [`JsonFileStore`](agentgate_permission::JsonFileStore)
    /// directory `dir` into this store, once (recorded like
    /// [`import_file_sessions_once`](Self::import_file_sessions_once)). The
    /// files are left in place.
    pub fn import_json_approvals_once(
        &self,
        dir: &Path,
    ) -> Result<Option<ImportReport>, agentgate_permission::StoreError> {
        let source = format!("approvals:{}", dir.display());
        let backend = |e: SqliteError| agentgate_permission::StoreError::Backend(Box::new(e));
        if self.imported(&source).map_err(backend)? {
            return Ok(None);
        }
        let report = import_json_approvals(dir, self)?;
        self.mark_imported(&source, &report).map_err(backend)?;
        Ok(Some(report))
    }

    /// Whether `source` was imported already.
    fn imported(&self, source: &str) -> Result<bool, SqliteError> {
        let conn = self.lock();
        conn.query_row("SELECT 1 FROM imports WHERE source = ?1", [source], |_| {
            Ok(())
        })
        .optional()
        .map(|row| row.is_some())
        .map_err(|e| self.sql(e))
    }

    fn mark_imported(&self, source: &str, report: &ImportReport) -> Result<(), SqliteError> {
        let conn = self.lock();
        conn.execute(
            "INSERT OR IGNORE INTO imports (source, imported_at, sessions, messages, approvals)
             VALUES (?1, strftime('%s','now'), ?2, ?3, ?4)",
            rusqlite::params![
                source,
                report.sessions as i64,
                report.messages as i64,
                report.approvals as i64
            ],
        )
        .map(|_| ())
        .map_err(|e| self.sql(e))
    }

    /// The connection (a poisoned lock is recovered: every write is a
    /// transaction, so a panic cannot leave half of one behind).
    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn sql(&self, error: rusqlite::Error) -> SqliteError {
        SqliteError::Sql {
            path: self.path.to_path_buf(),
            detail: error.to_string(),
        }
    }

    pub(crate) fn corrupt(&self, detail: String) -> SqliteError {
        SqliteError::Corrupt {
            path: self.path.to_path_buf(),
            detail,
        }
    }
}
