//! The project walk's ignore rules, one folder at a time, for the descent
//! along changed paths ([`descent`](crate::checkpoint::descent)): each
//! folder's `.gitignore` matcher, read once and kept until the watcher
//! says the folder or its ignore file changed, and the root's
//! `.git/info/exclude` (whose changes make the watcher walk again).
//!
//! The rules are those the `ignore` crate's walker applies with the
//! walk's options: for an entry, the deepest `.gitignore` with a matching
//! line decides (ignored, or whitelisted by `!pattern`); if none has one,
//! the deepest `.git/info/exclude` with one; otherwise it is not ignored.

use std::collections::BTreeMap;
use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::checkpoint::rel_path;

/// What one folder contributes to the rules.
#[derive(Debug)]
struct Folder {
    /// Its `.gitignore` (empty when it has none).
    gitignore: Gitignore,
    /// Its `.git/info/exclude` (empty when it has none).
    exclude: Gitignore,
    /// A folder other than the root holding a `.git` entry: a nested
    /// repository, whose own `info/exclude` is not watched, so the
    /// descent leaves its paths to the walk.
    nested_git: bool,
}

/// The rules of the folders looked at so far, by relative path (`""`:
/// the root).
#[derive(Debug, Default)]
pub(crate) struct IgnoreRules {
    folders: BTreeMap<String, Folder>,
}

/// A matcher rooted at `dir` made of the file `file`, as the walker
/// builds it: lines it cannot parse, or a file it cannot read, are left
/// out.
fn matcher(dir: &Path, file: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    if file.exists() {
        let _partial = builder.add(file);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Whether `matched` decided something: `Some(true)` ignored,
/// `Some(false)` whitelisted.
fn decision<T>(matched: Match<T>) -> Option<bool> {
    match matched {
        Match::None => None,
        Match::Ignore(_) => Some(true),
        Match::Whitelist(_) => Some(false),
    }
}

impl IgnoreRules {
    /// Forgets the rules of `rel` and of every folder under it (a path
    /// the events named: it may be another folder now).
    pub(crate) fn forget_under(&mut self, rel: &str) {
        let prefix = format!("{rel}/");
        self.folders
            .retain(|folder, _| folder != rel && !folder.starts_with(&prefix));
    }

    /// Forgets the rules of the folder `rel` only (its ignore file or
    /// `.git` entry changed).
    pub(crate) fn forget(&mut self, rel: &str) {
        self.folders.remove(rel);
    }

    /// The rules of the folder `rel`, read when not known.
    fn folder(&mut self, root: &Path, rel: &str) -> &Folder {
        self.folders.entry(rel.to_string()).or_insert_with(|| {
            let dir = if rel.is_empty() {
                root.to_path_buf()
            } else {
                root.join(rel)
            };
            Folder {
                gitignore: matcher(&dir, &dir.join(".gitignore")),
                exclude: matcher(&dir, &dir.join(".git/info/exclude")),
                nested_git: !rel.is_empty() && dir.join(".git").symlink_metadata().is_ok(),
            }
        })
    }

    /// Whether the walk ignores the entry `rel` (a folder when `is_dir`),
    /// its parents being reached: `None` when these rules cannot say (a
    /// nested repository on the way).
    pub(crate) fn ignored(&mut self, root: &Path, rel: &str, is_dir: bool) -> Option<bool> {
        let full = root.join(rel);
        let mut folders = vec![""];
        folders.extend(rel_path::ancestors(rel));
        let (mut by_gitignore, mut by_exclude) = (None, None);
        for folder in folders.into_iter().rev() {
            let rules = self.folder(root, folder);
            if rules.nested_git {
                return None;
            }
            if by_gitignore.is_none() {
                by_gitignore = decision(rules.gitignore.matched(&full, is_dir));
            }
            if by_exclude.is_none() {
                by_exclude = decision(rules.exclude.matched(&full, is_dir));
            }
        }
        Some(by_gitignore.or(by_exclude).unwrap_or(false))
    }
}
