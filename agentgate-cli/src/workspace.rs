//! Where the CLI keeps things: the data directory (`$XDG_DATA_HOME/agent-sdk`,
//! else `~/.local/share/agent-sdk`) and in it the SQLite database
//! `agentgate.db` holding sessions, messages and "always" approvals. The
//! file stores of earlier versions (`sessions/`, `approvals/`) are imported
//! into it the first time it is opened, and left in place.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agentgate::store::SqliteStore;
use agentgate_core::{Session, SessionStore};

/// The application name of the data directory (the library's default).
pub const APP: &str = agentgate::CLI_APP;

/// The data directory, as the library finds it.
pub fn data_dir() -> PathBuf {
    agentgate::Workspace::data_dir(APP)
}

/// The database, once [`database`] opened it.
static OPENED: Mutex<Option<SqliteStore>> = Mutex::new(None);

/// The database under the data directory, opened (and the file stores of
/// earlier versions imported) once per process: `agent run` and `agent
/// acp` want it both as the session store and as the approval store, and
/// each opening migrates the schema and syncs. A failed opening is tried
/// again on the next call.
fn database() -> Result<SqliteStore, String> {
    let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(store) = opened.as_ref() {
        return Ok(store.clone());
    }
    let store = agentgate::Workspace::database(APP).map_err(|e| {
        format!(
            "cannot open the store {}: {e}",
            agentgate::Workspace::database_path(APP).display()
        )
    })?;
    *opened = Some(store.clone());
    Ok(store)
}

/// The session store: the database under the data directory, with the
/// sessions of the file store an earlier version kept in `sessions/`
/// imported the first time.
pub async fn session_store() -> Result<Arc<SqliteStore>, String> {
    let store = database()?;
    let dir = data_dir().join("sessions");
    store
        .import_file_sessions_once(&dir)
        .await
        .map_err(|e| format!("cannot import the sessions of {}: {e}", dir.display()))?;
    Ok(Arc::new(store))
}

/// The checkpoints of the data directory (`checkpoints/`), as `agent run`
/// and `agent chat` record them.
pub fn checkpoints() -> agentgate::tools::FsCheckpoints {
    agentgate::Workspace::checkpoints(APP)
}

/// The store of remembered "always" approvals (the same database).
pub fn approval_store() -> Result<Arc<SqliteStore>, String> {
    database().map(Arc::new)
}

/// A permission gate for `directory`: the "always" approvals remembered
/// in the database count and are added there, and every decision is
/// recorded in the database's audit log (`agent audit`).
pub fn gate(directory: &Path) -> Result<agentgate_permission::PermissionGate, String> {
    let store = database()?;
    agentgate_permission::PermissionGate::builder()
        .store(Arc::new(store.clone()), directory.display().to_string())
        .audit(Arc::new(store.audit_sink()))
        .build()
        .map_err(|e| e.to_string())
}

/// Records `entry` in the database's audit log (a trust decision).
pub fn record_audit(entry: agentgate_permission::AuditEntry) -> Result<(), String> {
    use agentgate_permission::AuditSink;
    database()?.audit_sink().record(entry);
    Ok(())
}

/// The last thing before `agent` exits (if this process opened the
/// database): waits until the audit entries recorded so far are in it,
/// then checkpoints its write-ahead log, so the next `agent` does not
/// replay it at start-up (the connection stays open to the exit, which
/// closes it without a checkpoint).
pub async fn close_database() {
    let opened = OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(store) = opened {
        store.flush_audit().await;
        // A failed checkpoint loses nothing: the log is replayed instead.
        let _ = store.checkpoint().await;
    }
}

/// The database, for `agent audit`.
pub fn audit_store() -> Result<SqliteStore, String> {
    database()
}

/// The most recent top-level session for `directory` (ids ascend with
/// time), for `--continue`.
pub async fn latest_session(
    store: &dyn SessionStore,
    directory: &Path,
) -> Result<Option<Session>, String> {
    let sessions = store.sessions().await.map_err(|e| e.to_string())?;
    Ok(sessions
        .into_iter()
        .filter(|s| s.parent_id.is_none() && s.directory == directory)
        .max_by(|a, b| a.id.cmp(&b.id)))
}

/// The top-level sessions for `directory`, oldest first.
pub async fn sessions_of(
    store: &dyn SessionStore,
    directory: &Path,
) -> Result<Vec<Session>, String> {
    let mut sessions: Vec<Session> = store
        .sessions()
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|s| s.parent_id.is_none() && s.directory == directory)
        .collect();
    sessions.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(sessions)
}
