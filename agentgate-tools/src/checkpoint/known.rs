//! The known state of one project root: for each relative path, what it
//! was when last looked at and the `lstat` key it was read under, shared
//! by every session of that root; and each session's record of changes.
//!
//! A file whose key is unchanged is not read again, unless its mtime was
//! within [`RACY_NS`] of the moment it was read (git's "racy" rule: a
//! write in the same clock tick as the read leaves the key unchanged).

use std::collections::{BTreeMap, HashMap};

use agentgate_core::{FileChange, FileState};

use crate::checkpoint::dir_fd::{self, Kind};
use crate::checkpoint::observe::{Found, StatKey};
use crate::checkpoint::watch::Watcher;

/// How close (ns) to the moment a file was read its mtime may be before
/// the file is read again whatever its key says.
pub(crate) const RACY_NS: i128 = 2_000_000_000;

/// How much older than the oldest open scope (ns) a path's ctime must be
/// for a path never seen before to count as already there.
const CREATED_SLACK_NS: i128 = 1_000_000_000;

/// What a path was when last looked at.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its state (`None`: absent, or not reachable inside the project).
    pub(crate) state: Option<FileState>,
    /// The key it was read under.
    pub(crate) key: Option<StatKey>,
    /// When it was read, ns since the epoch.
    pub(crate) seen_ns: i128,
}

impl Entry {
    /// Its state, when an entry with `key` needs no new read.
    pub(crate) fn reusable(&self, key: &StatKey) -> Option<FileState> {
        if dir_fd::kind_of_mode(key.mode) == Kind::Dir {
            return Some(FileState::Dir {
                mode: key.mode & 0o7777,
            });
        }
        let racy = key.mtime_ns + RACY_NS >= self.seen_ns;
        (self.key.as_ref() == Some(key) && !racy)
            .then(|| self.state.clone())
            .flatten()
    }
}

/// How a scan treats what it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The state found becomes the known state; nothing is recorded.
    Baseline,
    /// What differs from the known state is a change.
    Compare,
}

/// The known state and records of one root.
#[derive(Debug, Default)]
pub(crate) struct RootState {
    /// Relative path → what it was when last looked at.
    pub(crate) entries: BTreeMap<String, Entry>,
    /// Whether the whole project has been walked once.
    pub(crate) built: bool,
    /// How many times the whole project was walked.
    pub(crate) walks: u64,
    /// The watcher of the root, after a walk that could watch every
    /// folder it visited (`None`: the next project scope walks again).
    pub(crate) watcher: Option<Watcher>,
    /// Session id → its changes since the last take.
    pub(crate) records: HashMap<String, Vec<FileChange>>,
    /// The open scopes (a `before_change` without its `after_change` yet):
    /// when each began, and whether it is a project scope.
    open: Vec<(i128, bool)>,
    /// The folders the current scan found created: what is inside them is
    /// created too, whatever its ctime (a folder moved in keeps its
    /// contents' ctimes).
    created_dirs: std::collections::HashSet<String>,
}

/// Now, in ns since the epoch.
pub(crate) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos() as i128)
        .unwrap_or_default()
}

impl RootState {
    /// Notes that a scope opens (`before_change`): how its scan treats
    /// differences. While a project scope is open, a command may be
    /// changing anything, so a new `before_change` records what differs
    /// instead of taking it as the starting point.
    pub(crate) fn open_scope(&mut self, project: bool) -> Mode {
        let mode = if self.open.iter().any(|(_, project)| *project) {
            Mode::Compare
        } else {
            Mode::Baseline
        };
        self.open.push((now_ns(), project));
        mode
    }

    /// Notes that a scope closes (`after_change`): the latest-begun open
    /// scope of that kind is removed.
    pub(crate) fn close_scope(&mut self, project: bool) {
        let latest = (self.open.iter().enumerate())
            .filter(|(_, (_, kind))| *kind == project)
            .max_by_key(|(_, (began, _))| *began)
            .map(|(at, _)| at);
        if let Some(at) = latest {
            self.open.remove(at);
        }
    }

    /// Starts a scan (forgets the folders the last one found created).
    pub(crate) fn begin_scan(&mut self) {
        self.created_dirs.clear();
    }

    /// Sets `rel` to what was found; in [`Mode::Compare`], the change from
    /// the known state when it differs.
    pub(crate) fn settle(
        &mut self,
        rel: &str,
        found: Found,
        state: Option<FileState>,
        mode: Mode,
    ) -> Option<FileChange> {
        let key = match found {
            Found::Present(key) => Some(key),
            Found::Absent | Found::Blocked => None,
        };
        let before = match self.entries.get(rel) {
            Some(entry) => Some(entry.state.clone()),
            None => self.unknown_before(rel, key.as_ref()),
        };
        if before == Some(None) && matches!(state, Some(FileState::Dir { .. })) {
            self.created_dirs.insert(rel.to_string());
        }
        match self.entries.get_mut(rel) {
            Some(entry) => {
                entry.state.clone_from(&state);
                entry.key = key;
                entry.seen_ns = now_ns();
            }
            None => {
                let entry = Entry {
                    state: state.clone(),
                    key,
                    seen_ns: now_ns(),
                };
                self.entries.insert(rel.to_string(), entry);
            }
        }
        match (mode, before) {
            (Mode::Compare, Some(before)) if before != state => {
                Some(FileChange::new(rel, before, state))
            }
            _ => None,
        }
    }

    /// The state before of a path never looked at: absent when it was
    /// created after the oldest open scope began (its ctime says so) or its
    /// folder was, otherwise unknown (`None`: taken as the starting point;
    /// a path that was ignored until now, say).
    fn unknown_before(&self, rel: &str, key: Option<&StatKey>) -> Option<Option<FileState>> {
        let oldest = self.open.iter().map(|(began, _)| *began).min()?;
        let parent = rel.rsplit_once('/').map(|(parent, _)| parent);
        if parent.is_some_and(|parent| self.created_dirs.contains(parent)) {
            return Some(None);
        }
        match key {
            Some(key) if key.ctime_ns < oldest - CREATED_SLACK_NS => None,
            _ => Some(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(mtime_ns: i128, ctime_ns: i128) -> StatKey {
        StatKey {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns,
            ctime_ns,
            mode: 0o100_644,
        }
    }

    fn file(blob: &str) -> Option<FileState> {
        Some(FileState::File {
            blob: blob.into(),
            mode: 0o644,
            size: 3,
        })
    }

    #[test]
    fn a_racy_entry_is_read_again() {
        let entry = Entry {
            state: file("a"),
            key: Some(key(10 * RACY_NS, 0)),
            seen_ns: 10 * RACY_NS + 1,
        };
        assert_eq!(entry.reusable(&key(10 * RACY_NS, 0)), None);
        let settled = Entry {
            seen_ns: 20 * RACY_NS,
            ..entry
        };
        assert_eq!(settled.reusable(&key(10 * RACY_NS, 0)), file("a"));
        assert_eq!(settled.reusable(&key(10 * RACY_NS + 1, 0)), None);
    }

    #[test]
    fn baseline_records_nothing_and_compare_records_the_difference() {
        let mut root = RootState::default();
        assert_eq!(root.open_scope(false), Mode::Baseline);
        let found = Found::Present(key(0, 0));
        assert_eq!(
            root.settle("a", found.clone(), file("1"), Mode::Baseline),
            None
        );
        let change = root.settle("a", found.clone(), file("2"), Mode::Compare);
        assert_eq!(change, Some(FileChange::new("a", file("1"), file("2"))));
        root.close_scope(false);
        // Never seen and no scope open: the starting point.
        assert_eq!(root.settle("b", found, file("1"), Mode::Compare), None);
    }

    #[test]
    fn a_path_never_seen_is_created_only_when_its_ctime_is_recent() {
        let mut root = RootState::default();
        root.open_scope(true);
        let old = Found::Present(key(0, 0));
        assert_eq!(
            root.settle("ignored-before", old, file("1"), Mode::Compare),
            None
        );
        let new = Found::Present(key(now_ns(), now_ns()));
        let change = root.settle("new", new, file("1"), Mode::Compare);
        assert_eq!(change, Some(FileChange::new("new", None, file("1"))));
        assert_eq!(
            root.open_scope(false),
            Mode::Compare,
            "a command is running"
        );
    }

    #[test]
    fn what_is_inside_a_folder_moved_in_is_created_whatever_its_ctime() {
        let mut root = RootState::default();
        root.open_scope(true);
        root.begin_scan();
        let moved = Found::Present(StatKey {
            mode: 0o040_755,
            ..key(now_ns(), now_ns())
        });
        let dir = Some(FileState::Dir { mode: 0o755 });
        let change = root.settle("moved", moved, dir.clone(), Mode::Compare);
        assert_eq!(change, Some(FileChange::new("moved", None, dir)));
        let old_inside = Found::Present(key(0, 0));
        let change = root.settle("moved/x", old_inside, file("1"), Mode::Compare);
        assert_eq!(change, Some(FileChange::new("moved/x", None, file("1"))));
    }
}
