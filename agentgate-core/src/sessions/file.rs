//! [`FileSessionStore`]: sessions and transcripts as JSON files, so a host
//! can resume its sessions after a restart.
//!
//! Layout under the store's directory:
//!
//! ```text
//! sessions/<session id>.json                  one Session
//! messages/<session id>/<message id>.json     one Message each
//! ```
//!
//! Every write goes to a temporary file in the same directory, is flushed
//! to disk, then renamed over the target, so a crash leaves either the old
//! or the new content, never half a file. Messages are kept one per file so
//! that storing a step does not rewrite the whole transcript; they are read
//! back in id order, which is creation order.
//!
//! Ids become file names, so only ids made of ASCII letters, digits, `_`
//! and `-` are accepted (a model-supplied `task_id` cannot point outside
//! the directory).

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::AsyncWriteExt;

use super::error::SessionStoreError;
use super::session::Session;
use super::store::SessionStore;
use crate::message::Message;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A [`SessionStore`] keeping each session and each message in its own
/// JSON file under a directory: `sessions/<id>.json` and
/// `messages/<session id>/<message id>.json`, each written atomically
/// (temporary file, flush, rename).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agentgate_core::{FileSessionStore, Message, Session, SessionStore};
/// let session = Session::new("build", ".");
/// let dir = std::env::temp_dir().join(format!("doc-store-{}", session.id));
/// let store = FileSessionStore::open(&dir).await.unwrap();
/// store.put_session(&session).await.unwrap();
/// store.put_message(&Message::user(&session.id, "hi")).await.unwrap();
///
/// // Later, in another process: the same directory, the same sessions.
/// let reopened = FileSessionStore::open(&dir).await.unwrap();
/// assert_eq!(reopened.session(&session.id).await.unwrap().agent, session.agent);
/// assert_eq!(reopened.messages(&session.id).await.unwrap()[0].text(), "hi");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct FileSessionStore {
    root: PathBuf,
}

fn io_error(action: &str, path: &Path, error: std::io::Error) -> SessionStoreError {
    SessionStoreError::Io(format!("cannot {action} {}: {error}", path.display()))
}

/// Whether `id` is safe to use as a file name.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn checked(id: &str) -> Result<&str, SessionStoreError> {
    if valid_id(id) {
        Ok(id)
    } else {
        Err(SessionStoreError::InvalidId(id.to_string()))
    }
}

impl FileSessionStore {
    /// Opens (creating it if needed) a store in `dir`.
    pub async fn open(dir: impl Into<PathBuf>) -> Result<Self, SessionStoreError> {
        let root = dir.into();
        // Only the owner may read it (every transcript is here): folders
        // 0700, files 0600, existing ones tightened.
        for path in [root.clone(), root.join("sessions"), root.join("messages")] {
            private_dir(&path)?;
        }
        Ok(FileSessionStore { root })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The file holding session `id`.
    pub fn session_path(&self, id: &str) -> Result<PathBuf, SessionStoreError> {
        Ok(self
            .root
            .join("sessions")
            .join(format!("{}.json", checked(id)?)))
    }

    /// The directory holding the messages of session `id`.
    pub fn messages_dir(&self, id: &str) -> Result<PathBuf, SessionStoreError> {
        Ok(self.root.join("messages").join(checked(id)?))
    }

    async fn session_exists(&self, id: &str) -> Result<bool, SessionStoreError> {
        let path = self.session_path(id)?;
        tokio::fs::try_exists(&path)
            .await
            .map_err(|e| io_error("read", &path, e))
    }
}

/// Creates `path` (and missing parents) `0700`, or tightens it.
fn private_dir(path: &Path) -> Result<(), SessionStoreError> {
    use agentgate_permission::private_files::{create_private_dir_all, tighten};
    create_private_dir_all(path)
        .and_then(|()| tighten(path))
        .map_err(|e| io_error("create directory", path, e))
}

/// Writes `value` as JSON to `path` atomically: a temporary file in the
/// same directory, flushed, then renamed over `path`.
async fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), SessionStoreError> {
    let json = serde_json::to_vec_pretty(value)
        .map_err(|e| SessionStoreError::Io(format!("cannot encode {}: {e}", path.display())))?;
    let name = path.file_name().and_then(OsStr::to_str).unwrap_or("file");
    let temp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = async {
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        options.mode(agentgate_permission::private_files::PRIVATE_FILE_MODE);
        let mut file = options
            .open(&temp)
            .await
            .map_err(|e| io_error("create", &temp, e))?;
        file.write_all(&json)
            .await
            .map_err(|e| io_error("write", &temp, e))?;
        file.sync_all()
            .await
            .map_err(|e| io_error("flush", &temp, e))?;
        drop(file);
        tokio::fs::rename(&temp, path)
            .await
            .map_err(|e| io_error("replace", path, e))
    }
    .await;
    if result.is_err() {
        let _ = tokio::fs::remove_file(&temp).await;
    }
    result
}

/// Reads and decodes one JSON file; a decoding failure names the file.
async fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, std::io::Error> {
    let bytes = tokio::fs::read(path).await?;
    serde_json::from_slice(&bytes).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

fn decode_error(path: &Path, error: std::io::Error) -> SessionStoreError {
    if error.kind() == ErrorKind::InvalidData {
        SessionStoreError::Corrupt {
            path: path.to_path_buf(),
            detail: error.to_string(),
        }
    } else {
        io_error("read", path, error)
    }
}

/// The `*.json` files of `dir` (temporary files skipped), sorted by name.
async fn json_files(dir: &Path) -> Result<Vec<PathBuf>, SessionStoreError> {
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error("list", dir, e)),
    };
    let mut files = Vec::new();
    while let Some(entry) = entries
        .next_entry()
        .await
        .map_err(|e| io_error("list", dir, e))?
    {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with('.') && name.ends_with(".json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[async_trait]
impl SessionStore for FileSessionStore {
    async fn put_session(&self, session: &Session) -> Result<(), SessionStoreError> {
        write_atomic(&self.session_path(&session.id)?, session).await
    }

    async fn session(&self, id: &str) -> Result<Session, SessionStoreError> {
        if !valid_id(id) {
            return Err(SessionStoreError::NotFound(id.to_string()));
        }
        let path = self.session_path(id)?;
        match read_json(&path).await {
            Ok(session) => Ok(session),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                Err(SessionStoreError::NotFound(id.to_string()))
            }
            Err(e) => Err(decode_error(&path, e)),
        }
    }

    async fn sessions(&self) -> Result<Vec<Session>, SessionStoreError> {
        let mut out = Vec::new();
        for path in json_files(&self.root.join("sessions")).await? {
            out.push(read_json(&path).await.map_err(|e| decode_error(&path, e))?);
        }
        Ok(out)
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionStoreError> {
        if !valid_id(session_id) || !self.session_exists(session_id).await? {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        let mut out = Vec::new();
        for path in json_files(&self.messages_dir(session_id)?).await? {
            out.push(read_json(&path).await.map_err(|e| decode_error(&path, e))?);
        }
        Ok(out)
    }

    async fn delete_messages(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<(), SessionStoreError> {
        if !valid_id(session_id) || !self.session_exists(session_id).await? {
            return Err(SessionStoreError::NotFound(session_id.to_string()));
        }
        let dir = self.messages_dir(session_id)?;
        for id in ids {
            let path = dir.join(format!("{}.json", checked(id)?));
            match tokio::fs::remove_file(&path).await {
                Err(e) if e.kind() != ErrorKind::NotFound => {
                    return Err(io_error("remove", &path, e));
                }
                _ => {}
            }
        }
        Ok(())
    }

    async fn put_message(&self, message: &Message) -> Result<(), SessionStoreError> {
        if !valid_id(&message.session_id) || !self.session_exists(&message.session_id).await? {
            return Err(SessionStoreError::NotFound(message.session_id.clone()));
        }
        let dir = self.messages_dir(&message.session_id)?;
        private_dir(&dir)?;
        let path = dir.join(format!("{}.json", checked(&message.id)?));
        write_atomic(&path, message).await?;
        // The session's `time.updated` follows (a second write: the files
        // are separate, so a crash between them leaves it a step behind).
        let mut session = self.session(&message.session_id).await?;
        session.time.touch(crate::ids::now_ms());
        write_atomic(&self.session_path(&session.id)?, &session).await
    }

    async fn delete_session(&self, id: &str) -> Result<(), SessionStoreError> {
        if !valid_id(id) || !self.session_exists(id).await? {
            return Err(SessionStoreError::NotFound(id.to_string()));
        }
        // The session file first: once it is gone the session is, even if
        // removing its messages fails half-way.
        let path = self.session_path(id)?;
        tokio::fs::remove_file(&path)
            .await
            .map_err(|e| io_error("remove", &path, e))?;
        let dir = self.messages_dir(id)?;
        match tokio::fs::remove_dir_all(&dir).await {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(io_error("remove", &dir, e)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_escape_the_directory_are_refused() {
        assert!(valid_id("ses_0000019abc12ef000001"));
        for bad in ["", "../x", "a/b", "a\\b", "..", "x.json", "a b"] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_deleted_session_and_its_messages_are_gone() {
        #![allow(clippy::unwrap_used)]
        let dir =
            std::env::temp_dir().join(format!("agentgate-file-delete-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = FileSessionStore::open(&dir).await.unwrap();
        let session = Session::new("build", "/w");
        store.put_session(&session).await.unwrap();
        store
            .put_message(&Message::new(session.id.as_str(), crate::Role::User))
            .await
            .unwrap();
        let other = Session::new("build", "/w");
        store.put_session(&other).await.unwrap();
        store.delete_session(&session.id).await.unwrap();
        assert!(matches!(
            store.session(&session.id).await,
            Err(SessionStoreError::NotFound(_))
        ));
        assert!(!store.messages_dir(&session.id).unwrap().exists());
        assert_eq!(store.sessions().await.unwrap(), vec![other]);
        assert!(matches!(
            store.delete_session(&session.id).await,
            Err(SessionStoreError::NotFound(_))
        ));
        assert!(matches!(
            store.delete_session("../x").await,
            Err(SessionStoreError::NotFound(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
