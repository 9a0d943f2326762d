//! [`FsCheckpoints`]: the file-system [`Checkpoints`] — contents in a
//! content-addressed folder, the known state of each project root in
//! memory, each session's record of changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentgate_core::{
    ChangeScope, CheckpointError, Checkpoints, Direction, FileChange, checkpoint::net_changes,
};
use async_trait::async_trait;

use crate::checkpoint::known::{Mode, RootState};
use crate::checkpoint::objects::{self, ObjectStore};
use crate::checkpoint::scan::Scan;
use crate::checkpoint::{apply, dir_fd, rel_path};

/// The default size cap of the object store: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Checkpoints kept on the file system (see `docs/checkpoints.md`).
///
/// File contents are stored once each under `<dir>/objects/` (named by
/// their SHA-256); what each project root's paths were when last looked at
/// is kept in memory, shared by the sessions of that root. A scope of
/// named paths costs what those paths cost; a project scope walks the
/// project once (`lstat` only, reading again only what changed), then
/// looks only at the paths an inotify watcher of the root saw change,
/// walking again only when the watcher cannot vouch for what it saw.
///
/// ```
/// use agentgate_tools::FsCheckpoints;
/// let checkpoints = FsCheckpoints::builder(std::env::temp_dir().join("checkpoints"))
///     .max_bytes(256 << 20)
///     .build();
/// assert_eq!(checkpoints.max_bytes(), 256 << 20);
/// ```
#[derive(Debug, Clone)]
pub struct FsCheckpoints {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    max_bytes: u64,
    objects: ObjectStore,
    roots: Mutex<HashMap<PathBuf, Arc<Mutex<RootState>>>>,
}

/// Options of [`FsCheckpoints`]: where contents go and how much they may
/// take.
#[derive(Debug, Clone)]
pub struct FsCheckpointsBuilder {
    dir: PathBuf,
    max_bytes: u64,
}

impl FsCheckpointsBuilder {
    /// The size cap of the stored contents (default
    /// [`DEFAULT_MAX_BYTES`]): past it the oldest contents are pruned, and
    /// a change whose content was pruned can no longer be taken back
    /// ([`CheckpointError::Missing`]).
    pub fn max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The checkpoints.
    pub fn build(self) -> FsCheckpoints {
        let objects = ObjectStore::new(&self.dir, self.max_bytes);
        FsCheckpoints {
            inner: Arc::new(Inner {
                dir: self.dir,
                max_bytes: self.max_bytes,
                objects,
                roots: Mutex::new(HashMap::new()),
            }),
        }
    }
}

impl FsCheckpoints {
    /// Checkpoints whose contents are stored under `dir` (created at the
    /// first write), with the default size cap.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::builder(dir).build()
    }

    /// Options for checkpoints stored under `dir`.
    pub fn builder(dir: impl Into<PathBuf>) -> FsCheckpointsBuilder {
        FsCheckpointsBuilder {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    /// Where the contents are stored.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The size cap of the stored contents.
    pub fn max_bytes(&self) -> u64 {
        self.inner.max_bytes
    }

    /// How many times this instance walked the whole project under
    /// `root`: once at its first project scope, then only when the root's
    /// watcher could not serve one (an overflow, the inotify limits; see
    /// `docs/checkpoints.md`). A diagnostic: a project scope served by the
    /// watcher walks nothing.
    pub async fn project_walks(&self, root: &Path) -> u64 {
        let walks = self.with_root(root, |_, _, state| Ok(state.walks)).await;
        walks.unwrap_or_default()
    }

    /// Runs `job` on the known state of `root`, off the async threads.
    async fn with_root<T: Send + 'static>(
        &self,
        root: &Path,
        job: impl FnOnce(&Inner, &Path, &mut RootState) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, CheckpointError> {
        let inner = Arc::clone(&self.inner);
        let root = crate::files::paths::normalize(root);
        let state = inner.root_state(&root);
        let task = tokio::task::spawn_blocking(move || {
            let mut state = match state.lock() {
                Ok(state) => state,
                Err(poisoned) => poisoned.into_inner(),
            };
            job(&inner, &root, &mut state)
        });
        task.await
            .map_err(|error| io_failed(Path::new(""), error))?
    }
}

/// An I/O failure on `path`.
fn io_failed(path: &Path, error: impl std::fmt::Display) -> CheckpointError {
    CheckpointError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// A scope, owned so it can cross to a blocking thread.
enum Scope {
    Paths(Vec<String>),
    Project,
}

impl Scope {
    fn of(root: &Path, scope: ChangeScope<'_>) -> Self {
        match scope {
            ChangeScope::Paths(paths) => Scope::Paths(
                paths
                    .iter()
                    .filter_map(|path| rel_path::relative_to(root, path))
                    .collect(),
            ),
            _ => Scope::Project,
        }
    }

    fn is_project(&self) -> bool {
        matches!(self, Scope::Project)
    }
}

impl Inner {
    /// The known state of `root` (created empty at first use).
    fn root_state(&self, root: &Path) -> Arc<Mutex<RootState>> {
        let mut roots = match self.roots.lock() {
            Ok(roots) => roots,
            Err(poisoned) => poisoned.into_inner(),
        };
        Arc::clone(roots.entry(root.to_path_buf()).or_default())
    }

    /// Scans `scope` of `root` in `mode`: the changes found.
    fn scan(
        &self,
        root: &Path,
        state: &mut RootState,
        scope: &Scope,
        mode: Mode,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        let root_fd = dir_fd::open_root(root).map_err(|error| io_failed(root, error))?;
        let scan = Scan {
            root_fd: &root_fd,
            root,
            objects: &self.objects,
        };
        let changes = match scope {
            Scope::Paths(rels) => scan.paths(state, rels, mode),
            Scope::Project => scan.project(state, mode),
        };
        changes.map_err(|error| io_failed(root, error))
    }
}

#[async_trait]
impl Checkpoints for FsCheckpoints {
    async fn before_change(
        &self,
        root: &Path,
        session_id: &str,
        scope: ChangeScope<'_>,
    ) -> Result<(), CheckpointError> {
        let scope = Scope::of(root, scope);
        let session = session_id.to_string();
        self.with_root(root, move |inner, root, state| {
            let mode = state.open_scope(scope.is_project());
            let changes = inner.scan(root, state, &scope, mode)?;
            if !changes.is_empty() {
                state.records.entry(session).or_default().extend(changes);
            }
            Ok(())
        })
        .await
    }

    async fn after_change(
        &self,
        root: &Path,
        session_id: &str,
        scope: ChangeScope<'_>,
    ) -> Result<(), CheckpointError> {
        let scope = Scope::of(root, scope);
        let session = session_id.to_string();
        self.with_root(root, move |inner, root, state| {
            let changes = inner.scan(root, state, &scope, Mode::Compare);
            state.close_scope(scope.is_project());
            let changes = changes?;
            if !changes.is_empty() {
                state.records.entry(session).or_default().extend(changes);
            }
            Ok(())
        })
        .await
    }

    async fn record(
        &self,
        root: &Path,
        session_id: &str,
        changes: Vec<FileChange>,
    ) -> Result<(), CheckpointError> {
        let session = session_id.to_string();
        self.with_root(root, move |_, _, state| {
            state.records.entry(session).or_default().extend(changes);
            Ok(())
        })
        .await
    }

    async fn take(
        &self,
        root: &Path,
        session_id: &str,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        let session = session_id.to_string();
        self.with_root(root, move |_, _, state| {
            let record = state.records.remove(&session).unwrap_or_default();
            Ok(net_changes(record))
        })
        .await
    }

    async fn apply(
        &self,
        root: &Path,
        changes: &[FileChange],
        direction: Direction,
        force: bool,
    ) -> Result<(), CheckpointError> {
        let changes = changes.to_vec();
        self.with_root(root, move |inner, root, state| {
            let moved = apply::apply(root, &inner.objects, &changes, direction, force);
            // What moved is the new starting point (also after a partial
            // failure), so a later scan does not record the revert.
            let rels: Vec<String> = changes.iter().map(|change| change.path.clone()).collect();
            let root_fd = dir_fd::open_root(root).map_err(|error| io_failed(root, error))?;
            let scan = Scan {
                root_fd: &root_fd,
                root,
                objects: &inner.objects,
            };
            if moved.is_ok() || force {
                scan.refresh(state, &rels)
                    .map_err(|error| io_failed(root, error))?;
            }
            moved.map(drop)
        })
        .await
    }

    async fn blob(&self, _root: &Path, blob: &str) -> Result<Vec<u8>, CheckpointError> {
        let path = self.inner.objects.path_of_checked(blob);
        let missing = || CheckpointError::Missing {
            path: path.clone().unwrap_or_default().display().to_string(),
            blob: blob.to_string(),
        };
        let Some(file) = path.as_ref() else {
            return Err(missing());
        };
        match tokio::fs::read(file).await {
            Ok(bytes)
                if objects::copy_hashed(&bytes[..], std::io::sink())
                    .is_ok_and(|(id, _)| id == blob) =>
            {
                Ok(bytes)
            }
            Ok(_) => Err(missing()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(missing()),
            Err(error) => Err(io_failed(file, error)),
        }
    }

    async fn forget_session(&self, root: &Path, session_id: &str) -> Result<(), CheckpointError> {
        let session = session_id.to_string();
        self.with_root(root, move |_, _, state| {
            state.records.remove(&session);
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Makes the watcher of `root` lose what it saw so far and report an
    /// overflow, as the kernel does when its queue is full.
    fn overflow(checkpoints: &FsCheckpoints, root: &Path) {
        let state = checkpoints.inner.root_state(root);
        let mut state = state.lock().unwrap();
        let watcher = state.watcher.as_mut().unwrap();
        let _lost = watcher.take();
        watcher.simulate_overflow();
    }

    #[tokio::test]
    async fn an_overflow_makes_the_next_project_scope_walk_everything() {
        let base = std::env::temp_dir().join(format!("cp-overflow-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("project");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("d/a"), "a\n").unwrap();
        let cp = FsCheckpoints::new(base.join("store"));
        let project = ChangeScope::Project;
        cp.before_change(&root, "s", project).await.unwrap();
        cp.after_change(&root, "s", project).await.unwrap();
        assert_eq!(cp.project_walks(&root).await, 1);

        cp.before_change(&root, "s", project).await.unwrap();
        std::fs::write(root.join("d/a"), "changed\n").unwrap();
        std::fs::write(root.join("b"), "new\n").unwrap();
        overflow(&cp, &root);
        cp.after_change(&root, "s", project).await.unwrap();
        let changes = cp.take(&root, "s").await.unwrap();
        let paths: Vec<&str> = changes.iter().map(|change| change.path.as_str()).collect();
        assert_eq!(
            paths,
            ["b", "d/a"],
            "the events were lost: the walk found them"
        );
        assert_eq!(cp.project_walks(&root).await, 2);

        // The walk watched again: the next step is served by events.
        cp.before_change(&root, "s", project).await.unwrap();
        std::fs::remove_file(root.join("b")).unwrap();
        cp.after_change(&root, "s", project).await.unwrap();
        let changes = cp.take(&root, "s").await.unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(cp.project_walks(&root).await, 2);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
