//! Comparing a scope with the known state: which paths a scope covers
//! (named paths with their parents and, for a folder, its contents; or the
//! whole project), what each is now, and what changed.

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use agentgate_core::FileChange;

use crate::checkpoint::dir_fd::{self, Kind};
use crate::checkpoint::known::{Mode, RootState};
use crate::checkpoint::objects::ObjectStore;
use crate::checkpoint::observe::{self, Found};
use crate::checkpoint::watch::Watcher;
use crate::checkpoint::{rel_path, walk};

/// What a scan needs: the root, opened and as a path, and the store.
pub(crate) struct Scan<'a> {
    /// The project root, opened.
    pub(crate) root_fd: &'a OwnedFd,
    /// The project root.
    pub(crate) root: &'a Path,
    /// Where file contents go.
    pub(crate) objects: &'a ObjectStore,
}

impl Scan<'_> {
    /// Looks at the named paths `rels` (each with its parents, and a
    /// folder with its contents, then and now); a path reached through a
    /// link is skipped.
    pub(crate) fn paths(
        &self,
        known: &mut RootState,
        rels: &[String],
        mode: Mode,
    ) -> io::Result<Vec<FileChange>> {
        let mut covered = BTreeSet::new();
        for rel in rels {
            let components = rel_path::components(rel);
            let found = observe::look(self.root_fd, &components)?;
            if found == Found::Blocked {
                continue;
            }
            covered.extend(rel_path::ancestors(rel).into_iter().map(str::to_string));
            covered.insert(rel.clone());
            if let Found::Present(key) = found
                && dir_fd::kind_of_mode(key.mode) == Kind::Dir
            {
                covered.extend(walk::under(self.root, rel));
            }
            let prefix = format!("{rel}/");
            let known_inside = known.entries.range(prefix.clone()..);
            let known_inside = known_inside.take_while(|(path, _)| path.starts_with(&prefix));
            covered.extend(known_inside.map(|(path, _)| path.clone()));
        }
        let mut changes = Vec::new();
        known.begin_scan();
        for rel in covered {
            let found = observe::look(self.root_fd, &rel_path::components(&rel))?;
            changes.extend(self.settle(known, &rel, found, mode)?);
        }
        Ok(changes)
    }

    /// Looks at the whole project: only the paths the root's watcher saw
    /// change, when it has one and has no doubt
    /// ([`Scan::changed_paths`]); otherwise by a walk of everything.
    pub(crate) fn project(&self, known: &mut RootState, mode: Mode) -> io::Result<Vec<FileChange>> {
        if known.built
            && let Some(watcher) = known.watcher.as_mut()
            && let Some(dirty) = watcher.take()
        {
            let (watches, rules) = (watcher.watches(), watcher.rules());
            return self.changed_paths(known, dirty, watches, &rules, mode);
        }
        self.walk_all(known, mode)
    }

    /// Walks the whole project (building the known state at the first
    /// walk: every file read once), then looks again at known paths the
    /// walk did not reach (deleted, now ignored, or behind a link). A new
    /// watcher watches each folder walked; it is kept when every watch
    /// could be added.
    fn walk_all(&self, known: &mut RootState, mode: Mode) -> io::Result<Vec<FileChange>> {
        let mode = if known.built { mode } else { Mode::Baseline };
        // The old watches go first: the user's watch limit is shared.
        known.watcher = None;
        let watcher = match Watcher::new(self.root) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::debug!(%error, "checkpoint watcher: no inotify instance");
                None
            }
        };
        let walked = walk::project(self.root, watcher.as_ref().map(Watcher::watches))?;
        known.walks += 1;
        let mut changes = Vec::new();
        known.begin_scan();
        let mut seen = HashSet::with_capacity(walked.len());
        for (rel, key) in walked {
            changes.extend(self.settle(known, &rel, Found::Present(key), mode)?);
            seen.insert(rel);
        }
        let unreached: Vec<String> = (known.entries.iter())
            .filter(|(rel, entry)| entry.state.is_some() && !seen.contains(*rel))
            .map(|(rel, _)| rel.clone())
            .collect();
        for rel in unreached {
            let found = observe::look(self.root_fd, &rel_path::components(&rel))?;
            changes.extend(self.settle(known, &rel, found, mode)?);
        }
        known.built = true;
        known.watcher = watcher.filter(Watcher::complete);
        Ok(changes)
    }

    /// Reads `rel` unless its known entry is still good, and settles it.
    pub(crate) fn settle(
        &self,
        known: &mut RootState,
        rel: &str,
        found: Found,
        mode: Mode,
    ) -> io::Result<Option<FileChange>> {
        let (found, state) = match (&found, known.entries.get(rel)) {
            (Found::Present(key), Some(entry)) => match entry.reusable(key) {
                Some(state) => (found, Some(state)),
                None => observe::read(self.root_fd, rel, self.objects)?,
            },
            (Found::Present(_), None) => observe::read(self.root_fd, rel, self.objects)?,
            _ => (found, None),
        };
        Ok(known.settle(rel, found, state, mode))
    }

    /// Re-reads each path of `rels` as the new known state (after
    /// [`apply`](crate::checkpoint::apply)), recording nothing.
    pub(crate) fn refresh(&self, known: &mut RootState, rels: &[String]) -> io::Result<()> {
        for rel in rels {
            let (found, state) = observe::read(self.root_fd, rel, self.objects)?;
            known.settle(rel, found, state, Mode::Baseline);
        }
        Ok(())
    }
}
