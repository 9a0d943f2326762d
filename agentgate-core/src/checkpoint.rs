//! Checkpoints: what each step changed in the project's files, so a turn
//! can be taken back ([`Engine::revert`](crate::Engine::revert)) and put
//! back ([`Engine::unrevert`](crate::Engine::unrevert)).
//!
//! The engine does not snapshot the project. Whoever changes a file says
//! so, around the change, to the engine's [`Checkpoints`]:
//!
//! - a tool that knows the paths it writes (the file tools, apply_patch)
//!   calls [`ToolContext::before_change`](crate::ToolContext::before_change)
//!   and [`after_change`](crate::ToolContext::after_change) with
//!   [`ChangeScope::Paths`]: only those paths are looked at;
//! - a tool that cannot know them (a shell command) does the same with
//!   [`ChangeScope::Project`]: the whole project is compared;
//! - a tool that does neither and does not declare
//!   [`ToolEffects::Declared`](crate::ToolEffects) (an MCP tool, an
//!   embedder's tool) is wrapped by the engine in a
//!   [`ChangeScope::Project`] pair, so no change goes unrecorded.
//!
//! What changed between the `before` and the `after` of a call is recorded
//! for the session; what changed before the `before` (the user's editor)
//! is taken as the starting state, not recorded. At the end of each step
//! the engine takes the session's record ([`Checkpoints::take`]) and keeps
//! it on the step's message as a [`Part::Patch`](crate::Part::Patch): the
//! checkpoint lives with the session, in its store.

use std::fmt;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// What a path was, before or after a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum FileState {
    /// A regular file.
    File {
        /// Its content's id in the checkpoint store
        /// ([`Checkpoints::blob`]).
        blob: String,
        /// Its permission bits (`0o644`, `0o755`).
        mode: u32,
        /// Its size in bytes.
        size: u64,
    },
    /// A symbolic link.
    Symlink {
        /// Where it points, as written.
        target: PathBuf,
    },
    /// A directory.
    Dir {
        /// Its permission bits.
        mode: u32,
    },
}

/// One path a step changed: what it was before (`None`: absent) and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileChange {
    /// The path, relative to the project root, `/`-separated.
    pub path: String,
    /// What it was before (`None`: it did not exist).
    pub before: Option<FileState>,
    /// What it is after (`None`: it was deleted).
    pub after: Option<FileState>,
}

impl FileChange {
    /// The change of `path` from `before` to `after`.
    pub fn new(
        path: impl Into<String>,
        before: Option<FileState>,
        after: Option<FileState>,
    ) -> Self {
        FileChange {
            path: path.into(),
            before,
            after,
        }
    }
}

/// Which paths a call may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeScope<'a> {
    /// Exactly these paths (absolute, or relative to the project root).
    Paths(&'a [PathBuf]),
    /// Anything in the project.
    Project,
}

/// Which way [`Checkpoints::apply`] moves the paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// To each change's `before` (revert).
    Back,
    /// To each change's `after` (unrevert).
    Forward,
}

/// Why a checkpoint operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Files changed since the checkpoint (by someone else: an editor, a
    /// command outside the agent), so moving them would lose that work.
    #[error(
        "{} changed since the agent's last change: {}; revert again with force to overwrite them",
        if paths.len() == 1 { "a file" } else { "files" },
        paths.join(", ")
    )]
    Conflict {
        /// The paths, relative to the project root.
        paths: Vec<String>,
    },
    /// A stored content the checkpoint needs is missing (pruned, or the
    /// store was removed).
    #[error(
        "checkpoint content {blob} of {path} is missing from the checkpoint store (pruned by the size cap, or removed); this change cannot be taken back"
    )]
    Missing {
        /// The path it belongs to.
        path: String,
        /// The content's id.
        blob: String,
    },
    /// Reading or writing the project or the checkpoint store failed.
    #[error("checkpoint of {path}: {message}")]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
}

/// Where a session's file changes are recorded, and how they are put
/// back. [`Engine`](crate::Engine) calls it around tool calls and at the
/// end of each step; `agentgate-tools` has the file-system implementation.
///
/// `root` is the project root (the session's worktree). Every method may
/// be called concurrently, for several sessions and projects.
#[async_trait]
pub trait Checkpoints: Send + Sync + fmt::Debug {
    /// Before a call of session `session_id` changes `scope`: the current
    /// state of what `scope` covers is the starting point (not recorded as
    /// a change).
    async fn before_change(
        &self,
        root: &Path,
        session_id: &str,
        scope: ChangeScope<'_>,
    ) -> Result<(), CheckpointError>;

    /// After that call: records for `session_id` every path of `scope`
    /// whose state differs from its starting point.
    async fn after_change(
        &self,
        root: &Path,
        session_id: &str,
        scope: ChangeScope<'_>,
    ) -> Result<(), CheckpointError>;

    /// Adds changes known otherwise (a sub-agent's, to its parent's
    /// record) to `session_id`'s record.
    async fn record(
        &self,
        root: &Path,
        session_id: &str,
        changes: Vec<FileChange>,
    ) -> Result<(), CheckpointError>;

    /// The changes recorded for `session_id` since the last `take`, one
    /// per path (see [`net_changes`]), sorted by path; the record is
    /// emptied.
    async fn take(&self, root: &Path, session_id: &str)
    -> Result<Vec<FileChange>, CheckpointError>;

    /// Moves every path of `changes` (one per path) to its `before`
    /// ([`Direction::Back`]) or `after` ([`Direction::Forward`]) state.
    /// Unless `force`, first checks that each path is in the other state
    /// and fails with [`CheckpointError::Conflict`], changing nothing, when
    /// one is not.
    async fn apply(
        &self,
        root: &Path,
        changes: &[FileChange],
        direction: Direction,
        force: bool,
    ) -> Result<(), CheckpointError>;

    /// The content stored as `blob`.
    async fn blob(&self, root: &Path, blob: &str) -> Result<Vec<u8>, CheckpointError>;

    /// Forgets what is kept for session `session_id` (it was deleted):
    /// its record, and content no other session needs.
    async fn forget_session(&self, root: &Path, session_id: &str) -> Result<(), CheckpointError> {
        let _ = (root, session_id);
        Ok(())
    }
}

/// Whether a tool reports its own file changes to the checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolEffects {
    /// Unknown: the engine compares the whole project around each call.
    #[default]
    Unknown,
    /// The tool changes no files, or reports what it changes through
    /// [`ToolContext::before_change`](crate::ToolContext::before_change)
    /// and [`after_change`](crate::ToolContext::after_change).
    Declared,
}

/// `changes` in the order they happened, as one change per path: its first
/// `before` and its last `after`; a path back where it started is dropped.
/// Sorted by path.
pub fn net_changes(changes: impl IntoIterator<Item = FileChange>) -> Vec<FileChange> {
    let mut by_path: std::collections::BTreeMap<String, FileChange> = Default::default();
    for change in changes {
        match by_path.get_mut(&change.path) {
            Some(known) => known.after = change.after,
            None => {
                by_path.insert(change.path.clone(), change);
            }
        }
    }
    by_path
        .into_values()
        .filter(|change| change.before != change.after)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(blob: &str) -> Option<FileState> {
        Some(FileState::File {
            blob: blob.into(),
            mode: 0o644,
            size: 1,
        })
    }

    #[test]
    fn net_changes_keep_the_first_before_and_the_last_after_per_path() {
        let net = net_changes([
            FileChange::new("b", file("1"), file("2")),
            FileChange::new("a", None, file("x")),
            FileChange::new("b", file("2"), file("3")),
            FileChange::new("c", file("c"), None),
            FileChange::new("c", None, file("c")),
        ]);
        assert_eq!(
            net,
            [
                FileChange::new("a", None, file("x")),
                FileChange::new("b", file("1"), file("3")),
            ]
        );
    }

    #[test]
    fn a_conflict_names_every_file_and_the_way_out() {
        let error = CheckpointError::Conflict {
            paths: vec!["src/a.rs".into(), "b.txt".into()],
        };
        let text = error.to_string();
        assert!(text.contains("src/a.rs, b.txt"), "{text}");
        assert!(text.contains("force"), "{text}");
    }
}
