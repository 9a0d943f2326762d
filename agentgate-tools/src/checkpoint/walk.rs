//! The walk of a whole project (a [`ChangeScope::Project`](agentgate_core::ChangeScope)
//! scope): every file, folder and symbolic link under the root, with its
//! `lstat` key, never following a link, skipping `.git` and what the
//! project's git ignore rules ignore (its `.gitignore` files and
//! `.git/info/exclude`; not the user's global excludes, and hidden files
//! are included). Paths that are not UTF-8 are skipped.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::checkpoint::observe::StatKey;
use crate::checkpoint::rel_path;
use crate::checkpoint::watch::Watches;

/// Every entry of the project under `root`: its relative path and key.
/// Each folder visited is first added to `watches`, when given, so no
/// change made while it is listed goes unseen.
pub(crate) fn project(
    root: &Path,
    watches: Option<Arc<Watches>>,
) -> io::Result<Vec<(String, StatKey)>> {
    let keep = move |rel: &str, is_dir: bool| {
        if is_dir && let Some(watches) = &watches {
            watches.add(rel);
        }
        true
    };
    walk(root, keep, |_| true)
}

/// The entries of the project under `root` among `paths`, and everything
/// under the folders `deep` (folders that appeared: each watched before it
/// is listed), as the whole walk would find them (same ignore rules),
/// descending only towards them.
pub(crate) fn some(
    root: &Path,
    paths: &BTreeSet<String>,
    deep: &BTreeSet<String>,
    watches: Arc<Watches>,
) -> io::Result<Vec<(String, StatKey)>> {
    let towards: BTreeSet<String> = (paths.iter().chain(deep))
        .flat_map(|rel| rel_path::ancestors(rel))
        .map(str::to_string)
        .collect();
    let deep = Arc::new(deep.clone());
    let in_deep = {
        let deep = Arc::clone(&deep);
        move |rel: &str| {
            deep.contains(rel) || rel_path::ancestors(rel).iter().any(|up| deep.contains(*up))
        }
    };
    let wanted = {
        let (in_deep, paths) = (in_deep.clone(), paths.clone());
        move |rel: &str| paths.contains(rel) || in_deep(rel)
    };
    let keep = {
        let wanted = wanted.clone();
        move |rel: &str, is_dir: bool| {
            if is_dir && in_deep(rel) {
                watches.add(rel);
            }
            wanted(rel) || towards.contains(rel)
        }
    };
    let mut found = walk_parallel(root, keep, wanted)?;
    // Folders before what is in them, as the whole walk yields them.
    found.sort_by(|(a, _), (b, _)| a.cmp(b));
    Ok(found)
}

/// The walk: `keep` says whether to yield and descend into an entry not
/// ignored (with whether it is a folder); `wanted`, whether to return it.
/// Unlike the sequential walker, the parallel one (on one thread) never
/// opens a folder it was told to skip: its cost is what it descends into.
fn walk_parallel(
    root: &Path,
    keep: impl Fn(&str, bool) -> bool + Send + Sync + 'static,
    wanted: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> io::Result<Vec<(String, StatKey)>> {
    let found = std::sync::Mutex::new(Vec::new());
    let failed = std::sync::Mutex::new(None);
    let base = root.to_path_buf();
    let walker = builder(root, keep).threads(1).build_parallel();
    walker.run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            let Some(rel) = relative(&base, entry.path()).filter(|rel| wanted(rel)) else {
                return ignore::WalkState::Continue;
            };
            match entry.path().symlink_metadata() {
                Ok(metadata) => lock(&found).push((rel, StatKey::of_metadata(&metadata))),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => {
                    *lock(&failed) = Some(error);
                    return ignore::WalkState::Quit;
                }
            }
            ignore::WalkState::Continue
        })
    });
    match lock(&failed).take() {
        Some(error) => Err(error),
        None => Ok(std::mem::take(&mut *lock(&found))),
    }
}

/// A mutex's guard, also when a panic poisoned it.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The walker of `root` with the walk's rules, `keep` filtering entries.
fn builder(
    root: &Path,
    keep: impl Fn(&str, bool) -> bool + Send + Sync + 'static,
) -> ignore::WalkBuilder {
    let base = root.to_path_buf();
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if entry.file_name() == ".git" {
                return false;
            }
            let Some(rel) = relative(&base, entry.path()) else {
                return entry.depth() == 0;
            };
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            keep(&rel, is_dir)
        });
    builder
}

/// The walk: `keep` says whether to yield and descend into an entry not
/// ignored (with whether it is a folder); `wanted`, whether to return it.
fn walk(
    root: &Path,
    keep: impl Fn(&str, bool) -> bool + Send + Sync + 'static,
    wanted: impl Fn(&str) -> bool,
) -> io::Result<Vec<(String, StatKey)>> {
    let walker = builder(root, keep).build();
    let mut found = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            // A folder that vanished or cannot be read mid-walk: what
            // could be read is still compared.
            Err(error) => {
                tracing::debug!(%error, "checkpoint walk: skipped an entry");
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Some(rel) = relative(root, entry.path()).filter(|rel| wanted(rel)) else {
            continue;
        };
        match entry.path().symlink_metadata() {
            Ok(metadata) => found.push((rel, StatKey::of_metadata(&metadata))),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(found)
}

/// `path`, under `root`, as a `/`-separated relative path.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let inside = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = inside.iter().map(|part| part.to_str()).collect();
    let rel = parts?.join("/");
    rel_path::invalid(&rel).is_none().then_some(rel)
}

/// Every entry under the folder `rel` of `root` (not following links,
/// skipping `.git`, ignore rules not applied: the folder was named).
pub(crate) fn under(root: &Path, rel: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![rel.to_string()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let child = format!("{folder}/{name}");
            if rel_path::invalid(&child).is_some() {
                continue;
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(child.clone());
            }
            found.push(child);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_skips_git_and_ignored_paths_and_does_not_follow_links() {
        let dir = std::env::temp_dir().join(format!("cp-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".git/info")).unwrap();
        std::fs::create_dir_all(dir.join("src/target")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        std::fs::write(dir.join(".git/info/exclude"), "secret.txt\n").unwrap();
        std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(dir.join("src/a.rs"), "").unwrap();
        std::fs::write(dir.join("src/.hidden"), "").unwrap();
        std::fs::write(dir.join("src/target/out"), "").unwrap();
        std::fs::write(dir.join("secret.txt"), "").unwrap();
        std::os::unix::fs::symlink(dir.join("src"), dir.join("link")).unwrap();
        let mut names: Vec<String> = project(&dir, None)
            .unwrap()
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".gitignore",
                "link",
                "outside",
                "src",
                "src/.hidden",
                "src/a.rs"
            ]
        );
        let mut inside = under(&dir, "src");
        inside.sort();
        assert_eq!(
            inside,
            ["src/.hidden", "src/a.rs", "src/target", "src/target/out"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
