//! The descent along changed paths: what [`walk::some`](crate::checkpoint::walk::some)
//! finds, found without a walker. Each path the events named is reached
//! through its parent folders, each checked as the walk checks it (a real
//! folder, not a link; not ignored by the [`IgnoreRules`]); a folder that
//! appeared is listed entry by entry, each folder watched before it is
//! listed. Its cost is an `lstat` per path and per parent folder, and the
//! listing of new folders: about what a one-file change costs to see.
//!
//! When it cannot decide (the rules cannot say, or an `lstat` fails other
//! than by the path's absence), it says so and the walk is used instead.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::Path;

use crate::checkpoint::observe::StatKey;
use crate::checkpoint::rel_path;
use crate::checkpoint::rules::IgnoreRules;
use crate::checkpoint::watch::Watches;

/// The descent's state: the root, the rules, what it found, and which
/// folders it knows to be reached (or not).
struct Descent<'a> {
    root: &'a Path,
    rules: &'a mut IgnoreRules,
    reached: HashMap<String, bool>,
    found: Vec<(String, StatKey)>,
}

/// Why the descent stops: the walk must decide.
struct Undecided;

/// The entries of the project under `root` among `paths`, and everything
/// under the folders `deep` (each watched before it is listed), as
/// [`walk::some`](crate::checkpoint::walk::some) finds them; `None` when
/// the descent cannot decide.
pub(crate) fn some(
    root: &Path,
    paths: &BTreeSet<String>,
    deep: &BTreeSet<String>,
    watches: &Watches,
    rules: &mut IgnoreRules,
) -> Option<Vec<(String, StatKey)>> {
    let mut descent = Descent {
        root,
        rules,
        reached: HashMap::new(),
        found: Vec::new(),
    };
    descent.run(paths, deep, watches).ok()?;
    let mut found = descent.found;
    // Folders before what is in them, as the whole walk yields them.
    found.sort_by(|(a, _), (b, _)| a.cmp(b));
    found.dedup_by(|(a, _), (b, _)| a == b);
    Some(found)
}

/// Whether `error` says the path is not there (it, or a folder on its
/// way, was removed or replaced by a file).
fn gone(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(nix::libc::ENOTDIR)
}

/// `lstat` of `path`: `None` when it does not exist.
fn lstat(path: &Path) -> Result<Option<std::fs::Metadata>, Undecided> {
    match path.symlink_metadata() {
        Ok(metadata) => Ok(Some(metadata)),
        Err(error) if gone(&error) => Ok(None),
        Err(_) => Err(Undecided),
    }
}

impl Descent<'_> {
    /// Finds each path, then lists each folder that appeared (not under
    /// another one: listing that one lists it).
    fn run(
        &mut self,
        paths: &BTreeSet<String>,
        deep: &BTreeSet<String>,
        watches: &Watches,
    ) -> Result<(), Undecided> {
        for rel in paths.iter().chain(deep) {
            self.entry(rel)?;
        }
        for rel in deep {
            let nested = rel_path::ancestors(rel).iter().any(|up| deep.contains(*up));
            if !nested && self.reached(rel)? {
                self.list(rel, watches)?;
            }
        }
        Ok(())
    }

    /// Whether the walk reaches `rel` and returns it; if so, it is found.
    fn entry(&mut self, rel: &str) -> Result<bool, Undecided> {
        let parent = rel.rfind('/').map_or("", |at| &rel[..at]);
        if !parent.is_empty() && !self.reached(parent)? {
            return Ok(false);
        }
        let Some(metadata) = lstat(&self.root.join(rel))? else {
            return Ok(false);
        };
        let is_dir = metadata.file_type().is_dir();
        match self.rules.ignored(self.root, rel, is_dir) {
            None => Err(Undecided),
            Some(true) => Ok(false),
            Some(false) => {
                self.found
                    .push((rel.to_string(), StatKey::of_metadata(&metadata)));
                Ok(true)
            }
        }
    }

    /// Whether the walk descends into `rel`: it is reached, not ignored,
    /// and a folder (not a link to one), as are its parents.
    fn reached(&mut self, rel: &str) -> Result<bool, Undecided> {
        if let Some(known) = self.reached.get(rel) {
            return Ok(*known);
        }
        let parent = rel.rfind('/').map_or("", |at| &rel[..at]);
        let mut reached = parent.is_empty() || self.reached(parent)?;
        if reached {
            reached = match lstat(&self.root.join(rel))? {
                Some(metadata) if metadata.file_type().is_dir() => {
                    !self.rules.ignored(self.root, rel, true).ok_or(Undecided)?
                }
                _ => false,
            };
        }
        self.reached.insert(rel.to_string(), reached);
        Ok(reached)
    }

    /// Finds everything under the reached folder `rel`, watching each
    /// folder before it is listed. A folder that vanished meanwhile has
    /// nothing to find; one that cannot be listed otherwise (out of file
    /// descriptors, no permission) leaves the decision to the walk, so a
    /// change under it is never silently missed.
    fn list(&mut self, rel: &str, watches: &Watches) -> Result<(), Undecided> {
        let mut pending = vec![rel.to_string()];
        while let Some(folder) = pending.pop() {
            watches.add(&folder);
            let entries = match std::fs::read_dir(self.root.join(&folder)) {
                Ok(entries) => entries,
                Err(error) if gone(&error) => continue,
                Err(_) => return Err(Undecided),
            };
            for entry in entries {
                let entry = entry.map_err(|_| Undecided)?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                let child = format!("{folder}/{name}");
                if rel_path::invalid(&child).is_some() {
                    continue;
                }
                let is_dir = entry.file_type().map_err(|_| Undecided)?.is_dir();
                if self.entry(&child)? && is_dir {
                    self.reached.insert(child.clone(), true);
                    pending.push(child);
                }
            }
        }
        Ok(())
    }
}
