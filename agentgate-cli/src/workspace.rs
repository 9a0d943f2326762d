//! Where the CLI keeps things: the data directory (`$XDG_DATA_HOME/agent-sdk`,
//! else `~/.local/share/agent-sdk`), its session store and its store of
//! "always" approvals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_core::{FileSessionStore, Session, SessionStore};
use agentgate_permission::JsonFileStore;

/// The application name of the data directory (the library's default).
pub const APP: &str = agentgate::DEFAULT_APP;

/// The data directory, as the library finds it.
pub fn data_dir() -> PathBuf {
    agentgate::Workspace::data_dir(APP)
}

/// Opens the file session store under the data directory.
pub async fn session_store() -> Result<Arc<FileSessionStore>, String> {
    let dir = data_dir().join("sessions");
    FileSessionStore::open(&dir)
        .await
        .map(Arc::new)
        .map_err(|e| format!("cannot open the session store {}: {e}", dir.display()))
}

/// The store of remembered "always" approvals.
pub fn approval_store() -> JsonFileStore {
    JsonFileStore::new(data_dir().join("approvals"))
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
