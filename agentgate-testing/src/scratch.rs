//! Scratch directories for tests.
//!
//! Tests run in parallel threads of one process, and several test processes
//! may share the temporary folder, so a name carries the process id and a
//! per-process counter. A directory left by an earlier process that had the
//! same id is emptied first. Paths are canonical: the tools compare them
//! with paths they resolve themselves (and on some systems the temporary
//! folder is reached through a symlink).

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A name no other scratch directory of this test run has:
/// `<label>-<process id>-<counter>`.
pub fn unique_name(label: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{label}-{}-{n}", std::process::id())
}

/// A fresh, empty, canonical directory under the system temporary folder
/// (`$TMPDIR`), named after `label`. It is kept after the test: remove it
/// yourself, or use [`ScratchDir`].
pub fn scratch_dir(label: &str) -> PathBuf {
    scratch_dir_in(&std::env::temp_dir(), label)
}

/// A fresh, empty, canonical directory under `base` (created if missing),
/// named after `label`; for tests that need it outside the temporary
/// folder, or at a short path.
pub fn scratch_dir_in(base: &Path, label: &str) -> PathBuf {
    let dir = base.join(unique_name(label));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(error) = std::fs::create_dir_all(&dir) {
        panic!("cannot create scratch directory {}: {error}", dir.display());
    }
    match dir.canonicalize() {
        Ok(dir) => dir,
        Err(error) => panic!(
            "cannot resolve scratch directory {}: {error}",
            dir.display()
        ),
    }
}

/// A [`scratch_dir`] removed (with everything in it) when dropped.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates a fresh directory under the temporary folder.
    pub fn new(label: &str) -> Self {
        ScratchDir(scratch_dir(label))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_directory_is_new_empty_and_canonical() {
        let a = scratch_dir("agentgate-testing-scratch");
        let b = scratch_dir("agentgate-testing-scratch");
        assert_ne!(a, b);
        for dir in [&a, &b] {
            assert!(dir.is_dir());
            assert_eq!(dir.canonicalize().ok().as_ref(), Some(dir));
            assert_eq!(std::fs::read_dir(dir).map(|d| d.count()).ok(), Some(0));
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn a_guard_removes_its_directory() {
        let guard = ScratchDir::new("agentgate-testing-guard");
        let path = guard.path().to_path_buf();
        assert!(std::fs::write(guard.join("file"), "x").is_ok());
        drop(guard);
        assert!(!path.exists());
    }
}
