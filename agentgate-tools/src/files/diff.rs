//! Unified diffs of a file's old and new content, shown to approvers in the
//! `edit` request's metadata and returned to UIs.

use similar::{ChangeTag, TextDiff};

/// A unified diff of a change to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The diff text (`--- path` / `+++ path` headers, 3 lines of context).
    pub unified: String,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
}

/// The unified diff from `old` to `new` of the file `path`.
///
/// ```
/// let diff = agentgate_tools::unified_diff("a.txt", "one\ntwo\n", "one\n2\n");
/// assert!(diff.unified.contains("-two\n+2\n"));
/// assert_eq!((diff.additions, diff.deletions), (1, 1));
/// ```
pub fn unified_diff(path: &str, old: &str, new: &str) -> FileDiff {
    let diff = TextDiff::from_lines(old, new);
    let (mut additions, mut deletions) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => additions += 1,
            ChangeTag::Delete => deletions += 1,
            ChangeTag::Equal => {}
        }
    }
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string();
    FileDiff {
        unified,
        additions,
        deletions,
    }
}
