//! Walking a folder the way ripgrep does, for glob, grep and list: with
//! the `ignore` crate, so `.gitignore`, `.ignore` and `.git/info/exclude`
//! rules apply, and with ripgrep's `--glob` matching through `globset`.
//!
//! Differences from plain `rg --files`, on purpose: hidden files are
//! included (opencode passes `--hidden`) but `.git` itself is skipped, and
//! `.gitignore` files apply even outside a git repository, so a project's
//! ignore rules mean the same whether or not it has been `git init`ed.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use nix::fcntl::AtFlags;
use nix::sys::stat::{SFlag, fstatat};

use crate::files::error::FileError;
use crate::search::open_folder::OpenFolder;

/// A glob with ripgrep's `--glob` rules: a pattern without `/` matches a
/// file name at any depth (`*.rs`); one with `/` matches the path relative
/// to the search root (`src/**/*.rs`, a leading `/` is dropped). `*` and
/// `?` never cross `/`; `**` does.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Result<Self, FileError> {
        let by_name = !pattern.contains('/');
        let anchored = pattern.strip_prefix('/').unwrap_or(pattern);
        let glob = GlobBuilder::new(anchored)
            .literal_separator(true)
            .build()
            .map_err(|error| FileError::Pattern {
                pattern: pattern.to_string(),
                reason: error.kind().to_string(),
            })?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            by_name,
        })
    }

    /// Whether the file at `relative` (to the search root, `/` separated)
    /// matches.
    pub fn is_match(&self, relative: &Path) -> bool {
        if self.by_name {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// The modification time in `metadata` (the epoch when unknown).
fn modified_of(metadata: &std::fs::Metadata) -> SystemTime {
    metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The time `seconds` and `nanos` after the epoch (before it when
/// negative; the epoch when out of range).
fn time_of(seconds: i64, nanos: i64) -> SystemTime {
    let nanos = u32::try_from(nanos).unwrap_or(0);
    let time = match u64::try_from(seconds) {
        Ok(after) => SystemTime::UNIX_EPOCH.checked_add(Duration::new(after, nanos)),
        Err(_) => SystemTime::UNIX_EPOCH
            .checked_sub(Duration::from_secs(seconds.unsigned_abs()))
            .and_then(|time| time.checked_add(Duration::from_nanos(nanos.into()))),
    };
    time.unwrap_or(SystemTime::UNIX_EPOCH)
}

/// A file found by [`walk_files`].
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Absolute path.
    pub path: PathBuf,
    /// Path relative to the walk root.
    pub relative: PathBuf,
    /// Modification time (the epoch when unknown).
    pub modified: SystemTime,
}

/// The files under `root` (or `root` itself when it is a file) that are
/// not ignored, in file-name order, and whether some entries could not be
/// read. Files are named only when found by name in their folder reached
/// from `root_folder` (the root, open and checked by the caller).
/// `keep_dir` may prune folders by their path relative to `root`;
/// `cancelled` is polled between entries and stops the walk.
pub(crate) fn walk_files(
    root: &Path,
    root_folder: Option<&OwnedFd>,
    keep_dir: Arc<dyn Fn(&Path) -> bool + Send + Sync>,
    cancelled: &dyn Fn() -> bool,
) -> (Vec<Found>, bool) {
    let mut found = Vec::new();
    let mut errors = false;
    let base = root.to_path_buf();
    let mut folder = OpenFolder::new(root, root_folder);
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if !is_dir || entry.depth() == 0 {
                return true;
            }
            if entry.file_name() == ".git" {
                return false;
            }
            let relative = entry.path().strip_prefix(&base).unwrap_or(entry.path());
            keep_dir(relative)
        })
        .build();
    for entry in walker {
        if cancelled() {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                errors = true;
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let walked = Walked {
            path: entry.path(),
            root,
            entry: &entry,
        };
        let Some(modified) = walked.modified_in(&mut folder) else {
            errors = true;
            continue;
        };
        let path = entry.path().to_path_buf();
        let relative = walked.relative().to_path_buf();
        found.push(Found {
            path,
            relative,
            modified,
        });
    }
    (found, errors)
}

/// A regular file met by [`walk_parallel`].
pub(crate) struct Walked<'a> {
    /// Absolute path.
    pub path: &'a Path,
    root: &'a Path,
    entry: &'a ignore::DirEntry,
}

impl Walked<'_> {
    /// Path relative to the walk root (the file name when the root is the
    /// file); computed when asked, since grep without `include` never asks.
    pub fn relative(&self) -> &Path {
        match self.path.strip_prefix(self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel,
            _ => Path::new(self.path.file_name().unwrap_or_default()),
        }
    }

    /// The file's modification time, from an `lstat` by name in its
    /// folder reached from the walk root without following a link (the
    /// root itself by its path); `None` when it is no longer there, or no
    /// longer a regular file: then it is not to be shown. A folder swapped
    /// for a link since the walk listed it cannot put another folder's
    /// names in the answer.
    // `stat`'s time fields are not `i64` on every target: the conversions
    // are identities only on some.
    #[allow(clippy::useless_conversion)]
    pub fn modified_in(&self, folder: &mut OpenFolder<'_>) -> Option<SystemTime> {
        if self.is_root() {
            return self.entry.metadata().ok().map(|m| modified_of(&m));
        }
        let (parent, name) = (self.path.parent()?, self.path.file_name()?);
        let stat = fstatat(folder.at(parent)?, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        let regular = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG;
        regular.then(|| time_of(i64::from(stat.st_mtime), i64::from(stat.st_mtime_nsec)))
    }

    /// Whether this is the walk's root itself (a search of one file).
    pub fn is_root(&self) -> bool {
        self.entry.depth() == 0
    }

    /// Whether the path may lead elsewhere through a symlink in its last
    /// component (the walk root, which may be a link, or a link itself):
    /// for other files, where the path leads is where its folder leads.
    pub fn may_be_link(&self) -> bool {
        self.entry.depth() == 0 || self.entry.path_is_symlink()
    }
}

/// The same files as [`walk_files`] (with no folder pruned), visited on
/// ripgrep's parallel walker, in no particular order: each worker thread
/// gets its own state from `start`, `visit` is called with it for every
/// file, and the states are returned when the walk ends, with whether some
/// entries could not be read. `cancelled` is polled between entries and
/// stops the walk.
pub(crate) fn walk_parallel<S, M, V>(
    root: &Path,
    cancelled: &(dyn Fn() -> bool + Sync),
    start: M,
    visit: V,
) -> (Vec<S>, bool)
where
    S: Send,
    M: Fn() -> S,
    V: Fn(&mut S, &Walked<'_>) + Sync,
{
    let done = Mutex::new(Vec::new());
    let errors = AtomicBool::new(false);
    let mut builder = Workers {
        root,
        start: &start,
        visit: &visit,
        cancelled,
        done: &done,
        errors: &errors,
    };
    let mut walk = WalkBuilder::new(root);
    walk.hidden(false).require_git(false).filter_entry(|entry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        !(is_dir && entry.depth() > 0 && entry.file_name() == ".git")
    });
    if std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) {
        // The parallel walker does not follow a root that is a symlink;
        // the sequential one does, as `walk_files`.
        let mut worker = builder.build();
        for entry in walk.build() {
            if matches!(worker.visit(entry), WalkState::Quit) {
                break;
            }
        }
    } else {
        walk.build_parallel().visit(&mut builder);
    }
    let states = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    (states, errors.into_inner())
}

/// Builds one [`Worker`] per walker thread.
struct Workers<'s, S, M, V> {
    root: &'s Path,
    start: &'s M,
    visit: &'s V,
    cancelled: &'s (dyn Fn() -> bool + Sync),
    done: &'s Mutex<Vec<S>>,
    errors: &'s AtomicBool,
}

impl<'s, S, M, V> ParallelVisitorBuilder<'s> for Workers<'s, S, M, V>
where
    S: Send + 's,
    M: Fn() -> S,
    V: Fn(&mut S, &Walked<'_>) + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Worker {
            root: self.root,
            state: Some((self.start)()),
            visit: self.visit,
            cancelled: self.cancelled,
            done: self.done,
            errors: self.errors,
        })
    }
}

/// One walker thread's state; handed back when the thread is done.
struct Worker<'s, S, V> {
    root: &'s Path,
    state: Option<S>,
    visit: &'s V,
    cancelled: &'s (dyn Fn() -> bool + Sync),
    done: &'s Mutex<Vec<S>>,
    errors: &'s AtomicBool,
}

impl<S, V> ParallelVisitor for Worker<'_, S, V>
where
    S: Send,
    V: Fn(&mut S, &Walked<'_>) + Sync,
{
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if (self.cancelled)() {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                self.errors.store(true, Ordering::Relaxed);
                return WalkState::Continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        if let Some(state) = self.state.as_mut() {
            (self.visit)(
                state,
                &Walked {
                    path: entry.path(),
                    root: self.root,
                    entry: &entry,
                },
            );
        }
        WalkState::Continue
    }
}

impl<S, V> Drop for Worker<'_, S, V> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.done
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(state);
        }
    }
}

/// Sorts newest first, then by path, so results are deterministic.
pub(crate) fn sort_newest_first(found: &mut [Found]) {
    found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::open_folder::{open_root, racing};

    #[test]
    fn glob_rules() {
        let by_name = PathGlob::new("*.rs").unwrap();
        assert!(by_name.is_match(Path::new("a/b/c.rs")));
        let anchored = PathGlob::new("src/*.rs").unwrap();
        assert!(anchored.is_match(Path::new("src/a.rs")));
        assert!(!anchored.is_match(Path::new("src/x/a.rs")));
        let deep = PathGlob::new("**/*.ts").unwrap();
        assert!(deep.is_match(Path::new("a.ts")));
        assert!(deep.is_match(Path::new("x/y/a.ts")));
        assert!(PathGlob::new("a[").is_err());
    }

    #[test]
    fn a_folder_swapped_for_a_link_never_lends_its_names() {
        let base = std::env::temp_dir().join(format!("agentgate-walk-swap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (dir, outside) = (base.join("project"), base.join("outside"));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        for i in 0..40 {
            std::fs::write(dir.join("sub").join(format!("public{i}")), "").unwrap();
            std::fs::write(outside.join(format!("SECRET{i}")), "").unwrap();
        }
        std::os::unix::fs::symlink(&outside, dir.join("swap")).unwrap();
        let (named, swaps) = racing(&dir.join("sub"), &dir.join("swap"), || {
            let mut named = 0;
            for _ in 0..200 {
                let root = open_root(&dir);
                let (found, _) =
                    walk_files(&dir, root.as_ref(), Arc::new(|_: &Path| true), &|| false);
                let mut names: Vec<PathBuf> = found.into_iter().map(|f| f.path).collect();
                let (threads, _) = walk_parallel(
                    &dir,
                    &|| false,
                    || (OpenFolder::new(&dir, root.as_ref()), Vec::new()),
                    |(folder, names): &mut (OpenFolder<'_>, Vec<PathBuf>), file| {
                        if file.modified_in(folder).is_some() {
                            names.push(file.path.to_path_buf());
                        }
                    },
                );
                names.extend(threads.into_iter().flat_map(|(_, names)| names));
                let leaked: Vec<_> = names
                    .iter()
                    .filter(|name| name.to_string_lossy().contains("SECRET"))
                    .collect();
                assert!(leaked.is_empty(), "{leaked:?}");
                named += names.len();
            }
            named
        });
        assert!(swaps > 100, "{swaps}");
        assert!(named > 0);
        let _ = std::fs::remove_dir_all(&base);
    }
}
