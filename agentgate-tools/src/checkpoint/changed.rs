//! A project scope served by the root's watcher: only the paths its
//! events named are looked at (with what is known under a path an entry
//! left, and everything in a folder that appeared), so a command's step
//! costs what it changed, not what the project holds.

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use agentgate_core::FileChange;

use crate::checkpoint::known::{Mode, RootState};
use crate::checkpoint::observe::{self, Found};
use crate::checkpoint::rules::IgnoreRules;
use crate::checkpoint::scan::Scan;
use crate::checkpoint::watch::{Dirty, Watches};
use crate::checkpoint::{descent, rel_path, walk};

impl Scan<'_> {
    /// Settles the paths of `dirty` as the whole walk would: those the
    /// walk would reach (not ignored, not behind a link) by their key,
    /// then the known paths among them or under a path an entry left that
    /// it did not reach.
    pub(crate) fn changed_paths(
        &self,
        known: &mut RootState,
        dirty: Dirty,
        watches: Arc<Watches>,
        rules: &Mutex<IgnoreRules>,
        mode: Mode,
    ) -> io::Result<Vec<FileChange>> {
        let descended = {
            let mut rules = lock(rules);
            descent::some(self.root, &dirty.paths, &dirty.deep, &watches, &mut rules)
        };
        let walked = match descended {
            Some(found) => found,
            None => walk::some(self.root, &dirty.paths, &dirty.deep, watches)?,
        };
        let mut changes = Vec::new();
        known.begin_scan();
        let mut seen = HashSet::with_capacity(walked.len());
        for (rel, key) in walked {
            changes.extend(self.settle(known, &rel, Found::Present(key), mode)?);
            seen.insert(rel);
        }
        for rel in unreached(known, &dirty, &seen) {
            let found = observe::look(self.root_fd, &rel_path::components(&rel))?;
            changes.extend(self.settle(known, &rel, found, mode)?);
        }
        Ok(changes)
    }
}

/// A mutex's guard, also when a panic poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The known paths (present when last seen) that the events name, or that
/// are under a folder that left or appeared, which the walk did not reach.
fn unreached(known: &RootState, dirty: &Dirty, seen: &HashSet<String>) -> BTreeSet<String> {
    let present = |rel: &String| {
        known
            .entries
            .get(rel)
            .is_some_and(|entry| entry.state.is_some())
            && !seen.contains(rel)
    };
    let mut found: BTreeSet<String> = dirty
        .paths
        .iter()
        .filter(|rel| present(rel))
        .cloned()
        .collect();
    let unseen = dirty.paths.iter().filter(|rel| !seen.contains(*rel));
    for rel in dirty.gone.iter().chain(&dirty.deep).chain(unseen) {
        let prefix = format!("{rel}/");
        let inside = known.entries.range(prefix.clone()..);
        let inside = inside.take_while(|(path, _)| path.starts_with(&prefix));
        found.extend(
            inside
                .map(|(path, _)| path)
                .filter(|path| present(path))
                .cloned(),
        );
    }
    found
}
