//! [`FileDiff`]: a file's unified diff and its line counts, for
//! [`Engine::diff`](super::Engine::diff).

use similar::{ChangeTag, TextDiff};

/// One file of a message's diff (opencode's `SnapshotFileDiff`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct FileDiff {
    /// The path, relative to the project root.
    pub file: String,
    /// `added`, `deleted` or `modified`.
    pub status: DiffStatus,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// A unified diff (empty for a binary file or a change of mode only).
    pub patch: String,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DiffStatus {
    /// It did not exist before.
    Added,
    /// It no longer exists.
    Deleted,
    /// It changed (content, mode, link target or kind).
    Modified,
}

impl DiffStatus {
    /// The status as opencode writes it: `added`, `deleted` or `modified`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffStatus::Added => "added",
            DiffStatus::Deleted => "deleted",
            DiffStatus::Modified => "modified",
        }
    }
}

/// The diff of `path` from `before` to `after`; `None` for a side that is
/// not text (no patch, no line counts).
pub(super) fn file_diff(
    path: &str,
    status: DiffStatus,
    before: Option<String>,
    after: Option<String>,
) -> FileDiff {
    let (Some(before), Some(after)) = (before, after) else {
        return FileDiff {
            file: path.to_string(),
            status,
            additions: 0,
            deletions: 0,
            patch: String::new(),
        };
    };
    let diff = TextDiff::from_lines(&before, &after);
    let (mut additions, mut deletions) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => additions += 1,
            ChangeTag::Delete => deletions += 1,
            ChangeTag::Equal => {}
        }
    }
    let patch = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    FileDiff {
        file: path.to_string(),
        status,
        additions,
        deletions,
        patch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modified_file_has_a_unified_diff_and_its_line_counts() {
        let diff = file_diff(
            "src/a.txt",
            DiffStatus::Modified,
            Some("one\ntwo\nthree\n".into()),
            Some("one\n2\nthree\nfour\n".into()),
        );
        assert_eq!((diff.additions, diff.deletions), (2, 1));
        assert!(
            diff.patch.starts_with("--- a/src/a.txt\n+++ b/src/a.txt\n"),
            "{}",
            diff.patch
        );
        assert!(diff.patch.contains("-two\n+2\n"), "{}", diff.patch);
    }

    #[test]
    fn a_binary_side_gives_no_patch() {
        let diff = file_diff("x.bin", DiffStatus::Added, Some(String::new()), None);
        assert_eq!(
            (diff.additions, diff.deletions, diff.patch.as_str()),
            (0, 0, "")
        );
    }
}
