//! Atomic file writes and per-file locks for the writing tools.
//!
//! [`write_atomic`] writes a temporary file in the target's folder and
//! renames it over the target, so readers see the old or the new content,
//! never a half-written file. [`lock_file`] serialises concurrent edits of
//! one path inside this process (tools of one step run concurrently).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use tokio::io::AsyncWriteExt;

/// Why an atomic write failed.
#[derive(Debug, thiserror::Error)]
#[error("Could not write {path}: {source}. Check that the folder exists and is writable.")]
pub struct WriteError {
    /// The file that was to be written.
    pub path: PathBuf,
    /// The underlying error.
    #[source]
    pub source: std::io::Error,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: creates missing parent folders,
/// writes and syncs a temporary file next to `path`, keeps the permissions
/// of an existing file, then renames the temporary file over `path`. On
/// failure the temporary file is removed and `path` is untouched.
pub async fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    tokio::fs::create_dir_all(parent).await.map_err(fail)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = async {
        // A new file, never through a link planted at the temporary name.
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&temp)
            .await?;
        file.write_all(bytes).await?;
        file.sync_all().await?;
        drop(file);
        if let Ok(existing) = tokio::fs::metadata(path).await {
            tokio::fs::set_permissions(&temp, existing.permissions()).await?;
        }
        tokio::fs::rename(&temp, path).await
    }
    .await;
    if let Err(error) = result {
        let _ = tokio::fs::remove_file(&temp).await;
        return Err(fail(error));
    }
    Ok(())
}

type LockMap = HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>;

static LOCKS: LazyLock<Mutex<LockMap>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// A held per-file lock; released when dropped.
pub struct FileLock {
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

impl std::fmt::Debug for FileLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileLock")
    }
}

/// Waits for and takes the lock of `path` (an absolute, normalised path):
/// edits of the same file run one after another, each reading what the
/// previous one wrote.
pub async fn lock_file(path: &Path) -> FileLock {
    let mutex = {
        let mut locks = match LOCKS.lock() {
            Ok(locks) => locks,
            Err(poisoned) => poisoned.into_inner(),
        };
        locks.retain(|_, weak| weak.strong_count() > 0);
        match locks.get(path).and_then(Weak::upgrade) {
            Some(mutex) => mutex,
            None => {
                let mutex = Arc::new(tokio::sync::Mutex::new(()));
                locks.insert(path.to_path_buf(), Arc::downgrade(&mutex));
                mutex
            }
        }
    };
    FileLock {
        _guard: mutex.lock_owned().await,
    }
}
