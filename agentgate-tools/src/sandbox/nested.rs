//! Protected names below the project directory: a later run started from
//! a subdirectory (`cd packages/foo && agent run`) reads
//! `packages/foo/opencode.json` and `packages/foo/.opencode`, and `git`
//! there trusts the nearest `.git`, so a command must not plant or change
//! them either.
//!
//! Once per project the sandbox walks its writable project folders (the
//! directory and the worktree), notes every [`PROTECTED_NAMES`] entry
//! below them and puts an inotify watch on every folder. The entries that
//! exist are bound read-only for each command (with the top-level ones);
//! what a command creates, moves in or writes is read from the watch
//! queue after it ended and asked like a created top-level name. Events
//! that arrive while no command of the project runs are the agent's own
//! file tools (which ask `protected_path` first) or the user: they only
//! update the index.
//!
//! Where the watch cannot cover the project (the kernel's watch limit, an
//! overflowing queue), the index falls back to walking the folders again
//! after each command and comparing; the walk is bounded
//! ([`MAX_FOLDERS`]), and what lies past the bound is not covered (a debug
//! log says where).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

use super::PROTECTED_NAMES;
use super::protected_changes::ProtectedChange;

/// At most this many folders are walked and watched per project.
pub(super) const MAX_FOLDERS: usize = 200_000;

/// What a folder's watch reports: entries created, moved in or written.
fn watch_mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

fn is_protected(name: &OsStr) -> bool {
    name.to_str()
        .is_some_and(|name| PROTECTED_NAMES.contains(&name))
}

/// An entry's identity, to tell a changed entry from the one noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    ctime: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(Stamp {
        ino: meta.ino(),
        ctime: (meta.ctime(), meta.ctime_nsec()),
    })
}

/// The protected entries below one project and the watch on its folders.
#[derive(Debug)]
pub(super) struct NestedIndex {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The writable project folders walked.
    roots: Vec<PathBuf>,
    /// The folders whose protected names the top-level mechanism covers
    /// (`protected_roots`): their direct entries are not indexed here.
    top: Vec<PathBuf>,
    /// The paths the policy's `writable` list opens exactly.
    opened: Vec<PathBuf>,
    /// The inotify instance, while the watch covers every folder.
    inotify: Option<Inotify>,
    /// Watched folders by descriptor.
    folders: HashMap<WatchDescriptor, PathBuf>,
    /// The protected entries below the roots, as noted.
    known: BTreeMap<PathBuf, Option<Stamp>>,
    /// Commands of this project running now.
    in_flight: usize,
    /// Folders visited by the walk under way.
    walked: usize,
}

/// A command's hold on the index: its changes are read from the queue
/// once it ended ([`NestedIndex::changes`]); dropped, the command no
/// longer counts as running.
#[derive(Debug)]
pub(super) struct InFlight {
    index: Arc<NestedIndex>,
}

impl InFlight {
    /// What the command created, moved in or changed (see
    /// [`NestedIndex::changes`]).
    pub(super) fn changes(&self) -> Vec<ProtectedChange> {
        self.index.changes()
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.index.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
    }
}

impl NestedIndex {
    /// Walks `roots` (without following links), watching every folder.
    pub(super) fn new(roots: Vec<PathBuf>, top: Vec<PathBuf>, opened: Vec<PathBuf>) -> Self {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
            .map_err(|error| {
                tracing::debug!(%error, "sandbox: no inotify; protected names below the project are compared by walking");
            })
            .ok();
        let mut state = State {
            roots,
            top,
            opened,
            inotify,
            folders: HashMap::new(),
            known: BTreeMap::new(),
            in_flight: 0,
            walked: 0,
        };
        let mut found = BTreeSet::new();
        state.walk_roots(&mut found);
        state.known = found
            .into_iter()
            .map(|path| {
                let stamp = stamp(&path);
                (path, stamp)
            })
            .collect();
        NestedIndex {
            state: Mutex::new(state),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A command is about to start: what changed while none ran is taken
    /// into the index without a question (the agent's file tools ask
    /// before they write; the user may edit what they like). Returns the
    /// hold and the protected entries that exist now (canonical), for
    /// read-only mounts.
    pub(super) fn begin(self: &Arc<Self>) -> (InFlight, Vec<PathBuf>) {
        let mut state = self.lock();
        if state.in_flight == 0 {
            let changed = state.collect();
            for path in changed {
                let stamp = stamp(&path);
                state.known.insert(path, stamp);
            }
        }
        state.in_flight += 1;
        state
            .known
            .retain(|path, _| std::fs::symlink_metadata(path).is_ok());
        let existing = state
            .known
            .keys()
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| !state.opened.contains(path))
            .collect();
        (
            InFlight {
                index: Arc::clone(self),
            },
            existing,
        )
    }

    /// The protected entries below the project that commands created,
    /// moved in or changed since the last look, each once. Call when the
    /// command has ended (with every process it started).
    fn changes(&self) -> Vec<ProtectedChange> {
        let mut state = self.lock();
        let changed = state.collect();
        let mut changes = Vec::new();
        for path in changed {
            if state.opened.contains(&path) {
                continue;
            }
            let stamp = stamp(&path);
            // Noted now: the caller asks, and keeps or moves it aside; a
            // kept one is mounted from the next command on.
            state.known.insert(path.clone(), stamp);
            changes.push(ProtectedChange {
                path,
                replaced_link: None,
            });
        }
        changes
    }
}

impl State {
    /// Whether `path`'s protected names are this index's: below a root,
    /// not a direct entry of a top-level folder.
    fn indexes(&self, entry: &Path) -> bool {
        let Some(parent) = entry.parent() else {
            return false;
        };
        self.roots
            .iter()
            .any(|root| entry.starts_with(root) && entry != root)
            && !self.top.iter().any(|top| top == parent)
    }

    /// Walks `folder` (watching each folder before listing it, so nothing
    /// created meanwhile is missed), adding its protected entries to
    /// `found`. Protected folders are not entered: they are mounted whole.
    fn walk(&mut self, folder: &Path, found: &mut BTreeSet<PathBuf>) {
        let mut pending = vec![folder.to_path_buf()];
        while let Some(folder) = pending.pop() {
            self.walked += 1;
            if self.walked > MAX_FOLDERS {
                tracing::debug!(
                    folder = %folder.display(),
                    "sandbox: too many folders to watch; protected names below this one are not covered"
                );
                self.give_up_watching();
                return;
            }
            self.watch(&folder);
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                if is_protected(&name) {
                    if self.indexes(&path) {
                        found.insert(path);
                    }
                    continue;
                }
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(path);
                }
            }
        }
    }

    /// Walks every root from the start (see [`walk`](Self::walk)).
    fn walk_roots(&mut self, found: &mut BTreeSet<PathBuf>) {
        self.walked = 0;
        for root in self.roots.clone() {
            self.walk(&root, found);
        }
    }

    fn watch(&mut self, folder: &Path) {
        let Some(inotify) = &self.inotify else {
            return;
        };
        match inotify.add_watch(folder, watch_mask()) {
            Ok(wd) => {
                self.folders.insert(wd, folder.to_path_buf());
            }
            Err(Errno::ENOENT | Errno::ENOTDIR | Errno::EACCES) => {}
            Err(error) => {
                tracing::debug!(%error, folder = %folder.display(), "sandbox: cannot watch a folder; protected names below the project are compared by walking");
                self.give_up_watching();
            }
        }
    }

    /// Falls back to walking and comparing after each command.
    fn give_up_watching(&mut self) {
        self.inotify = None;
    }

    /// The protected entries created, moved in or changed since the last
    /// look: from the watch queue, or by walking everything again.
    fn collect(&mut self) -> BTreeSet<PathBuf> {
        self.walked = 0;
        let mut candidates = BTreeSet::new();
        let mut rewalk = self.inotify.is_none();
        let mut new_folders = Vec::new();
        if let Some(inotify) = &self.inotify {
            loop {
                match inotify.read_events() {
                    Ok(events) if events.is_empty() => break,
                    Ok(events) => {
                        for event in events {
                            if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                                rewalk = true;
                                continue;
                            }
                            if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                                self.folders.remove(&event.wd);
                                continue;
                            }
                            let (Some(folder), Some(name)) =
                                (self.folders.get(&event.wd), event.name.as_ref())
                            else {
                                continue;
                            };
                            let path = folder.join(name);
                            if is_protected(name) {
                                candidates.insert(path);
                            } else if event.mask.contains(AddWatchFlags::IN_ISDIR)
                                && event.mask.intersects(
                                    AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO,
                                )
                            {
                                new_folders.push(path);
                            }
                        }
                    }
                    Err(Errno::EINTR) => continue,
                    Err(_) => break,
                }
            }
        }
        // A folder created or moved in: watched, then walked, so entries
        // made inside it before the watch are found.
        for folder in new_folders {
            let mut found = BTreeSet::new();
            self.walk(&folder, &mut found);
            candidates.extend(found);
        }
        if rewalk {
            let mut found = BTreeSet::new();
            self.folders.clear();
            self.walk_roots(&mut found);
            for path in found {
                let now = stamp(&path);
                if self.known.get(&path) != Some(&now) {
                    candidates.insert(path);
                }
            }
        }
        // A noted entry changed through another name (a hard link made
        // while it was not yet protected) leaves no event under its own
        // name: its inode's change time says so.
        for (path, noted) in &self.known {
            if stamp(path) != *noted {
                candidates.insert(path.clone());
            }
        }
        candidates
            .into_iter()
            .filter(|path| self.indexes(path))
            .filter(|path| {
                // What a command removed, or what is as noted, is no change.
                let now = stamp(path);
                now.is_some() && self.known.get(path) != Some(&now)
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let root = agentgate_testing::scratch::scratch_dir(&format!("nested-unit-{name}"));
        std::fs::create_dir_all(root.join("pkg/a/.opencode/agent")).unwrap();
        std::fs::write(root.join("pkg/a/opencode.json"), "{}").unwrap();
        std::fs::write(root.join("opencode.json"), "{}").unwrap();
        root
    }

    fn index(root: &Path) -> Arc<NestedIndex> {
        Arc::new(NestedIndex::new(
            vec![root.to_path_buf()],
            vec![root.to_path_buf()],
            Vec::new(),
        ))
    }

    fn paths(changes: &[ProtectedChange]) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
        paths.sort();
        paths
    }

    /// Both ways of looking — the watch queue, and walking again (no
    /// inotify, the watch limit, or a queue that overflowed) — report the
    /// same changes: names created at any depth, moved in inside a folder,
    /// a known entry changed; not the top-level names (another mechanism
    /// covers those), not what changed while no command ran.
    #[test]
    fn the_watch_and_the_walk_report_the_same_changes() {
        for watched in [true, false] {
            let root = tree(if watched { "watched" } else { "walked" });
            let index = index(&root);
            if !watched {
                index.lock().give_up_watching();
            }
            let (hold, existing) = index.begin();
            assert_eq!(
                existing.len(),
                2,
                "the nested entries that exist are mounted: {existing:?}"
            );
            std::fs::create_dir_all(root.join("src/deep")).unwrap();
            std::fs::write(root.join("src/deep/opencode.jsonc"), "{}").unwrap();
            let outside = agentgate_testing::scratch::scratch_dir("nested-unit-outside");
            std::fs::create_dir_all(outside.join("x/y/.git")).unwrap();
            std::fs::rename(outside.join("x"), root.join("pkg/moved")).unwrap();
            std::fs::write(root.join("pkg/a/opencode.json"), r#"{"changed":1}"#).unwrap();
            std::fs::write(root.join(".opencode"), "top level: not this index's").unwrap();
            assert_eq!(
                paths(&hold.changes()),
                [
                    root.join("pkg/a/opencode.json"),
                    root.join("pkg/moved/y/.git"),
                    root.join("src/deep/opencode.jsonc"),
                ],
                "watched: {watched}"
            );
            assert!(hold.changes().is_empty(), "each change is reported once");
            drop(hold);

            // Between commands: taken in without a question.
            std::fs::create_dir_all(root.join("lib/.opencode")).unwrap();
            let (hold, existing) = index.begin();
            assert!(existing.contains(&root.join("lib/.opencode").canonicalize().unwrap()));
            assert!(hold.changes().is_empty());
            drop(hold);
            let _ = std::fs::remove_dir_all(&root);
        }
    }

    /// A noted file changed through a hard link elsewhere is reported as
    /// changed, though no event names it.
    #[test]
    fn a_change_through_a_hard_link_is_seen() {
        let root = tree("hardlink");
        let index = index(&root);
        std::fs::hard_link(root.join("pkg/a/opencode.json"), root.join("alias")).unwrap();
        // Taken in between commands (the link itself is no protected name).
        drop(index.begin().0);
        let (hold, _) = index.begin();
        std::fs::write(root.join("alias"), r#"{"changed":1}"#).unwrap();
        assert_eq!(paths(&hold.changes()), [root.join("pkg/a/opencode.json")]);
        drop(hold);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The queue overflowing (a command making more events than the kernel
    /// keeps) makes the index walk again: nothing is lost.
    #[test]
    fn an_overflowing_queue_walks_again() {
        let root = tree("overflow");
        let index = index(&root);
        let (hold, _) = index.begin();
        let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(16384);
        // In a folder watched from the start. Alternating names are not
        // merged by the kernel: an event each (a mode change is quick;
        // writes would be slow on some disks).
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (root.join("pkg/flood-a"), root.join("pkg/flood-b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        for i in 0..limit {
            let mode = std::fs::Permissions::from_mode(if i % 2 == 0 { 0o600 } else { 0o644 });
            std::fs::set_permissions(&a, mode.clone()).unwrap();
            std::fs::set_permissions(&b, mode).unwrap();
        }
        std::fs::create_dir_all(root.join("pkg/x/.git")).unwrap();
        assert_eq!(paths(&hold.changes()), [root.join("pkg/x/.git")]);
        drop(hold);
        let _ = std::fs::remove_dir_all(&root);
    }
}
