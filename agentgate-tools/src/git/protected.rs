//! The derived protected set of one project, and its cache.
//!
//! The repositories read are those whose work tree's top is the project
//! directory or a folder above it up to the worktree (where git finds the
//! nearest `.git`), and the submodules their `.gitmodules` name (to a
//! small depth). A path is kept when it lies strictly inside one of the
//! project's outermost folders, or is a configuration file git read
//! (an include, wherever it is).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::executed::{Kind, Place, kind_of, named_paths};
use super::repository::{read_repo, submodule_paths};
use crate::sandbox::protected_names::TOP_LEVEL_NAMES;
use crate::sandbox::roots::{protected_folders, protected_roots};

/// One protected path found for a project, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// The path (lexically normal; it may not exist yet).
    pub path: PathBuf,
    /// The key and the file that name it (`core.hookspath in
    /// /w/.git/config`), or what reads a fixed name.
    pub why: String,
}

/// How deep submodules of submodules are followed.
const MAX_SUBMODULE_DEPTH: usize = 3;

/// At most this many projects are cached; past it the cache starts over.
const MAX_CACHED: usize = 128;

/// A file's identity and state when it was read (`None`: absent).
type Stamp = Option<(SystemTime, u64, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.modified().ok()?, meta.len(), inode))
}

struct Cached {
    stamps: Vec<(PathBuf, Stamp)>,
    paths: Arc<Vec<ProtectedPath>>,
}

type Cache = Mutex<HashMap<(PathBuf, PathBuf), Cached>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The protected paths of the project (`directory`, `worktree`) besides
/// the names protected at any depth ([`PROTECTED_NAMES`](crate::PROTECTED_NAMES)):
/// the [`TOP_LEVEL_NAMES`](crate::TOP_LEVEL_NAMES) in the project directory
/// and each folder above it up to the worktree, then every path inside the
/// project that the repository's git configuration names as something git
/// executes or loads (hooks folder, drivers, commands, includes). Paths
/// may not exist yet.
pub fn protected_paths(directory: &Path, worktree: &Path) -> Vec<ProtectedPath> {
    let mut paths: Vec<ProtectedPath> = Vec::new();
    for root in protected_roots(directory, worktree) {
        for entry in TOP_LEVEL_NAMES {
            paths.push(ProtectedPath {
                path: root.join(entry.name),
                why: entry.reason.to_string(),
            });
        }
    }
    for derived in git_protected(directory, worktree).iter() {
        if !paths.iter().any(|p| p.path == derived.path) {
            paths.push(derived.clone());
        }
    }
    paths
}

/// The paths inside the project that the repository's git configuration
/// names as something git executes or loads; derived again when a file it
/// was read from changed (or appeared).
pub fn git_protected(directory: &Path, worktree: &Path) -> Arc<Vec<ProtectedPath>> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute());
    let key = (directory.to_path_buf(), worktree.to_path_buf());
    let mut held = match cache().lock() {
        Ok(held) => held,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(cached) = held.get(&key)
        && cached.stamps.iter().all(|(path, was)| stamp(path) == *was)
    {
        return Arc::clone(&cached.paths);
    }
    let mut files = Vec::new();
    let paths = Arc::new(derive(directory, worktree, home.as_deref(), &mut files));
    files.sort();
    files.dedup();
    let stamps = files.into_iter().map(|path| {
        let now = stamp(&path);
        (path, now)
    });
    if held.len() >= MAX_CACHED {
        held.clear();
    }
    held.insert(
        key,
        Cached {
            stamps: stamps.collect(),
            paths: Arc::clone(&paths),
        },
    );
    paths
}

/// The derivation itself, every file looked at added to `files`.
pub(crate) fn derive(
    directory: &Path,
    worktree: &Path,
    home: Option<&Path>,
    files: &mut Vec<PathBuf>,
) -> Vec<ProtectedPath> {
    let tree: Vec<PathBuf> = protected_folders(directory, worktree);
    let mut tops: Vec<(PathBuf, usize)> = protected_roots(directory, worktree)
        .into_iter()
        .map(|top| (top, 0))
        .collect();
    let mut found: Vec<ProtectedPath> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    while let Some((top, depth)) = tops.pop() {
        if seen.contains(&top) {
            continue;
        }
        seen.push(top.clone());
        let Some(repo) = read_repo(&top, home, files) else {
            continue;
        };
        for (key, value, file) in &repo.loaded.entries {
            // An included file is protected wherever it is: it is config.
            let is_config = kind_of(key) == Some(Kind::Include);
            let place = Place {
                top: &repo.top,
                file,
                home,
            };
            for path in named_paths(key, value.as_deref(), &place) {
                if !(is_config || strictly_inside(&path, &tree)) {
                    continue;
                }
                if !found.iter().any(|f| f.path == path) {
                    let why = format!("{key} in {}", file.display());
                    found.push(ProtectedPath { path, why });
                }
            }
        }
        if depth < MAX_SUBMODULE_DEPTH {
            for sub in submodule_paths(&repo.top, files) {
                if strictly_inside(&sub, &tree) {
                    tops.push((sub, depth + 1));
                }
            }
        }
    }
    found
}

/// Whether `path` is below (not at) one of `folders`.
fn strictly_inside(path: &Path, folders: &[PathBuf]) -> bool {
    folders
        .iter()
        .any(|folder| path != folder && path.starts_with(folder))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        agentgate_testing::scratch::scratch_dir(&format!("git-protected-{name}"))
    }

    fn paths(dir: &Path) -> Vec<PathBuf> {
        derive(dir, dir, None, &mut Vec::new())
            .into_iter()
            .map(|p| p.path)
            .collect()
    }

    #[test]
    fn hooks_drivers_includes_and_commands_in_the_tree() {
        let dir = scratch("derive");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        std::fs::write(dir.join("tools/clean.sh"), "").unwrap();
        std::fs::write(
            dir.join(".git/config"),
            "[core]\n\thooksPath = .husky\n\tfsmonitor = true\n\teditor = /usr/bin/vi\n\
             [filter \"x\"]\n\tclean = sh tools/clean.sh %f\n\
             [include]\n\tpath = ../shared.gitconfig\n\
             [remote \"origin\"]\n\turl = git@example.com:a/b.git\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("shared.gitconfig"),
            "[diff \"y\"]\n\ttextconv = ./bin/conv\n[includeIf \"gitdir:/nowhere/\"]\n\tpath = more.inc\n",
        )
        .unwrap();
        let found = paths(&dir);
        for expected in [
            ".husky",
            "tools/clean.sh",
            "shared.gitconfig",
            "bin/conv",
            "more.inc",
        ] {
            assert!(found.contains(&dir.join(expected)), "{expected}: {found:?}");
        }
        assert!(!found.iter().any(|p| p.starts_with("/usr")), "{found:?}");
        assert_eq!(found.len(), 5, "{found:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A key the table does not know still protects an existing file of
    /// the tree it names with a `/`; never a folder, never the tree itself.
    #[test]
    fn an_unknown_key_naming_a_file_of_the_tree_protects_it() {
        let dir = scratch("unknown");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        std::fs::write(dir.join("tools/msg.txt"), "").unwrap();
        std::fs::write(
            dir.join(".git/config"),
            "[commit]\n\ttemplate = tools/msg.txt\n[future]\n\tdir = tools/\n\
             [remote \"self\"]\n\turl = ./\n\tfetch = +refs/heads/*:refs/remotes/self/*\n",
        )
        .unwrap();
        assert_eq!(paths(&dir), [dir.join("tools/msg.txt")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cache_notices_a_changed_config() {
        let dir = scratch("cache");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
        assert!(git_protected(&dir, &dir).is_empty());
        std::fs::write(dir.join(".git/config"), "[core]\n\thooksPath = hooks\n").unwrap();
        assert_eq!(git_protected(&dir, &dir)[0].path, dir.join("hooks"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_submodule_is_read_through_its_gitdir_file() {
        let dir = scratch("submodule");
        let modules = dir.join(".git/modules/lib");
        std::fs::create_dir_all(&modules).unwrap();
        std::fs::create_dir_all(dir.join("vendor/lib")).unwrap();
        std::fs::write(dir.join(".git/config"), "").unwrap();
        std::fs::write(
            dir.join(".gitmodules"),
            "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("vendor/lib/.git"),
            "gitdir: ../../.git/modules/lib\n",
        )
        .unwrap();
        std::fs::write(modules.join("config"), "[core]\n\thooksPath = githooks\n").unwrap();
        assert_eq!(paths(&dir), [dir.join("vendor/lib/githooks")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
