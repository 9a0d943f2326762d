//! The watcher of one project root: an inotify instance watching every
//! folder the project walk visits, whose events name the paths changed
//! since the last project scope, so that scope looks only at them
//! (`docs/checkpoints.md`, "What a command's scope costs").
//!
//! Any doubt makes the watcher unusable and the next project scope walks
//! the whole project again (building a new watcher): the event queue
//! overflowed, a watch could not be added (the user's inotify limits), the
//! root itself moved or went away, an ignore file changed.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};

use crate::checkpoint::observe::StatKey;
use crate::checkpoint::rel_path;
use crate::checkpoint::rules::IgnoreRules;

/// What each watched folder reports: its entries created, deleted,
/// written, closed after writing, changed in mode or owner, moved in or
/// out; and the folder itself deleted or moved. Never through a link.
fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// The inotify instance and its watches, shared with the walk that adds
/// them (from the walker's filter, before each folder is listed).
#[derive(Debug)]
pub(crate) struct Watches {
    root: PathBuf,
    inotify: Inotify,
    folders: Mutex<HashMap<WatchDescriptor, String>>,
    failed: AtomicBool,
}

impl Watches {
    /// Watches the folder `rel` (`""`: the root) before it is listed; a
    /// failure (`ENOSPC`: `max_user_watches` reached) makes the watcher
    /// unusable.
    pub(crate) fn add(&self, rel: &str) {
        let path = if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        };
        match self.inotify.add_watch(&path, mask()) {
            Ok(wd) => {
                lock(&self.folders).insert(wd, rel.to_string());
            }
            // Gone or replaced by a file before it could be watched: its
            // parent's event already names it.
            Err(Errno::ENOENT | Errno::ENOTDIR) => {}
            Err(error) => {
                tracing::debug!(%error, rel, "checkpoint watcher: add_watch failed");
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Stops watching `rel` and every folder under it (a folder moved
    /// away: its watches would name its old paths).
    fn remove_under(&self, rel: &str) {
        let prefix = format!("{rel}/");
        let mut folders = lock(&self.folders);
        let gone: Vec<WatchDescriptor> = (folders.iter())
            .filter(|(_, folder)| *folder == rel || folder.starts_with(&prefix))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            folders.remove(&wd);
            let _ = self.inotify.rm_watch(wd);
        }
    }
}

/// A mutex's guard, also when a panic poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// What changed since the last project scope, by the events.
#[derive(Debug, Default)]
pub(crate) struct Dirty {
    /// Paths to look at again (each with what is known under it).
    pub(crate) paths: BTreeSet<String>,
    /// Folders that appeared (created or moved in): everything in them is
    /// walked, and their folders watched.
    pub(crate) deep: BTreeSet<String>,
    /// Paths an entry left (deleted, moved away): what was known under
    /// them is looked at again.
    pub(crate) gone: BTreeSet<String>,
}

/// The watcher of one root: its watches and the changes seen so far.
#[derive(Debug)]
pub(crate) struct Watcher {
    watches: Arc<Watches>,
    dirty: Dirty,
    /// A reason to walk the whole project again, once seen.
    doubt: Option<&'static str>,
    /// The key of `.git/info/exclude` when the watcher was built (it is
    /// not watched: `.git` is not).
    exclude: Option<StatKey>,
    /// The ignore rules of the folders the descent looked at, each
    /// forgotten when an event names the folder, its `.gitignore` or its
    /// `.git`; a new watcher starts with none.
    rules: Arc<Mutex<IgnoreRules>>,
}

/// The key of `<root>/.git/info/exclude`, if there is one.
fn exclude_key(root: &Path) -> Option<StatKey> {
    let metadata = root.join(".git/info/exclude").symlink_metadata().ok()?;
    Some(StatKey::of_metadata(&metadata))
}

impl Watcher {
    /// A new watcher of `root`, watching the root itself; its folders are
    /// watched by the walk that follows ([`Watcher::watches`]). `Err` when
    /// no inotify instance can be had (`EMFILE`: `max_user_instances`).
    pub(crate) fn new(root: &Path) -> io::Result<Watcher> {
        let flags = InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC;
        let inotify = Inotify::init(flags).map_err(io::Error::from)?;
        let watches = Arc::new(Watches {
            root: root.to_path_buf(),
            inotify,
            folders: Mutex::new(HashMap::new()),
            failed: AtomicBool::new(false),
        });
        watches.add("");
        Ok(Watcher {
            watches,
            dirty: Dirty::default(),
            doubt: None,
            exclude: exclude_key(root),
            rules: Arc::default(),
        })
    }

    /// The watches, for a walk to add the folders it visits.
    pub(crate) fn watches(&self) -> Arc<Watches> {
        Arc::clone(&self.watches)
    }

    /// The ignore rules the descent along changed paths keeps.
    pub(crate) fn rules(&self) -> Arc<Mutex<IgnoreRules>> {
        Arc::clone(&self.rules)
    }

    /// Whether every watch could be added so far.
    pub(crate) fn complete(&self) -> bool {
        !self.watches.failed.load(Ordering::Relaxed)
    }

    /// The paths changed since the last call, or `None` when the whole
    /// project must be walked again (the reason is logged).
    pub(crate) fn take(&mut self) -> Option<Dirty> {
        self.drain();
        if self.doubt.is_none() && !self.complete() {
            self.doubt = Some("a watch could not be added");
        }
        if self.doubt.is_none() && exclude_key(&self.watches.root) != self.exclude {
            self.doubt = Some(".git/info/exclude changed");
        }
        if let Some(reason) = self.doubt {
            tracing::debug!(reason, "checkpoint watcher: walking the whole project");
            return None;
        }
        Some(std::mem::take(&mut self.dirty))
    }

    /// Reads every queued event, without blocking.
    fn drain(&mut self) {
        loop {
            match self.watches.inotify.read_events() {
                Ok(events) => events.iter().for_each(|event| self.note(event)),
                Err(Errno::EAGAIN) => return,
                Err(Errno::EINTR) => continue,
                Err(_) => {
                    self.doubt = Some("the event queue could not be read");
                    return;
                }
            }
        }
    }

    /// Notes what one event says changed.
    fn note(&mut self, event: &InotifyEvent) {
        if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            self.doubt = Some("the event queue overflowed");
            return;
        }
        let folder = lock(&self.watches.folders).get(&event.wd).cloned();
        if event.mask.contains(AddWatchFlags::IN_IGNORED) {
            lock(&self.watches.folders).remove(&event.wd);
        }
        // A watch already removed (a folder moved away) or the root's
        // own event: nothing inside the project to name.
        let Some(folder) = folder else { return };
        let Some(name) = &event.name else {
            self.note_self(&folder, event.mask);
            return;
        };
        let Ok(name) = std::str::from_utf8(name.as_bytes()) else {
            return;
        };
        if name == ".gitignore" || name == ".git" {
            lock(&self.rules).forget(&folder);
        }
        if name == ".gitignore" {
            self.doubt = Some("an ignore file changed");
            return;
        }
        let rel = if folder.is_empty() {
            name.to_string()
        } else {
            format!("{folder}/{name}")
        };
        if rel_path::invalid(&rel).is_some() {
            return;
        }
        let is_dir = event.mask.contains(AddWatchFlags::IN_ISDIR);
        if is_dir && event.mask.contains(AddWatchFlags::IN_MOVED_FROM) {
            self.watches.remove_under(&rel);
        }
        if is_dir
            && event
                .mask
                .intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
        {
            self.dirty.deep.insert(rel.clone());
        }
        if event
            .mask
            .intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM)
        {
            self.dirty.gone.insert(rel.clone());
        }
        lock(&self.rules).forget_under(&rel);
        self.dirty.paths.insert(rel);
    }

    /// An event of a watched folder itself (`folder`).
    fn note_self(&mut self, folder: &str, mask: AddWatchFlags) {
        let gone = AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF;
        if folder.is_empty() && mask.intersects(gone | AddWatchFlags::IN_IGNORED) {
            self.doubt = Some("the project root moved or went away");
        } else if mask.contains(AddWatchFlags::IN_UNMOUNT) {
            self.doubt = Some("a watched file system was unmounted");
        } else if !folder.is_empty() {
            if mask.intersects(gone | AddWatchFlags::IN_IGNORED) {
                self.dirty.gone.insert(folder.to_string());
                lock(&self.rules).forget_under(folder);
            }
            self.dirty.paths.insert(folder.to_string());
        }
    }

    /// Makes the watcher report an overflow, as the kernel would (tests).
    #[cfg(test)]
    pub(crate) fn simulate_overflow(&mut self) {
        self.doubt = Some("the event queue overflowed");
    }
}
