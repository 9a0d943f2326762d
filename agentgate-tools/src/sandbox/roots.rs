//! The fixed roots of a session: the writable set, the denied paths and
//! the read rules around them, resolved **once** per session (per
//! [`Sandbox`](super::Sandbox), so once per policy) and held as opened
//! descriptors.
//!
//! Paths a command can replace (the project directory under a writable
//! parent, anything under the temporary directories) are never resolved
//! again: a later call builds its Landlock ruleset from the descriptors
//! opened on the first one, so a command that swaps such a path for a
//! symbolic link to `$HOME` between two calls moves nothing. Each path is
//! opened component by component without following links (`handles`),
//! after being made canonical once.

use std::path::{Path, PathBuf};

use super::policy::{SandboxMode, SandboxPolicy, expand_home};

pub use super::protected_names::PROTECTED_NAMES;

/// The folders whose [`PROTECTED_NAMES`] are protected: the project
/// directory and each folder above it up to the worktree, as the
/// configuration loader walks them (`opencode.json` and `.opencode` are
/// read in every one, and `git` finds the nearest `.git`); neither `/` nor
/// an empty path.
pub fn protected_roots(directory: &Path, worktree: &Path) -> Vec<PathBuf> {
    let usable = |dir: &Path| !dir.as_os_str().is_empty() && dir != Path::new("/");
    let mut roots: Vec<PathBuf> = Vec::new();
    if usable(worktree) && directory.starts_with(worktree) {
        roots.extend(
            directory
                .ancestors()
                .take_while(|dir| dir.starts_with(worktree))
                .map(Path::to_path_buf),
        );
    } else {
        roots.extend(
            [directory, worktree]
                .into_iter()
                .filter(|d| usable(d))
                .map(Path::to_path_buf),
        );
    }
    roots.retain(|dir| usable(dir));
    roots.dedup();
    roots
}

/// The folders below which a protected name is protected at any depth:
/// the worktree when it holds the project directory (a later run started
/// in any subfolder reads that subfolder's `opencode.json` and `.opencode`
/// up to the worktree, and `git` there trusts the nearest `.git`), else the
/// directory and the worktree; neither `/` nor an empty path.
pub fn protected_folders(directory: &Path, worktree: &Path) -> Vec<PathBuf> {
    let usable = |dir: &Path| !dir.as_os_str().is_empty() && dir != Path::new("/");
    if usable(worktree) && directory.starts_with(worktree) {
        return vec![worktree.to_path_buf()];
    }
    let mut folders: Vec<PathBuf> = [directory, worktree]
        .into_iter()
        .filter(|d| usable(d))
        .map(Path::to_path_buf)
        .collect();
    folders.dedup();
    folders
}

/// One opened path: its canonical name when it was opened, and (on Linux)
/// the `O_PATH` descriptor that the Landlock rules are built from.
#[derive(Debug)]
pub(super) struct Held {
    /// The canonical path at the time it was opened.
    pub(super) path: PathBuf,
    /// Whether it is a directory.
    pub(super) dir: bool,
    #[cfg(target_os = "linux")]
    pub(super) fd: std::os::fd::OwnedFd,
}

impl Held {
    /// Opens the canonical form of `path`; `None` when it does not exist or
    /// cannot be opened without following a link.
    pub(super) fn open(path: &Path) -> Option<Held> {
        let canonical = path.canonicalize().ok()?;
        #[cfg(target_os = "linux")]
        {
            let (fd, dir) = super::handles::open_path(&canonical).ok()?;
            Some(Held {
                path: canonical,
                dir,
                fd,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let dir = canonical.is_dir();
            Some(Held {
                path: canonical,
                dir,
            })
        }
    }
}

/// What every session of a sandbox may not read, and the read rules
/// around it: resolved once per [`Sandbox`](super::Sandbox).
#[derive(Debug)]
pub(super) struct DeniedSet {
    /// The denied paths that exist, canonical.
    pub(super) paths: Vec<PathBuf>,
    /// Read rules: `/`, or every sibling along the way to each denied path.
    pub(super) readable: Vec<Held>,
    /// The ancestors of the denied paths: they may be listed (`ls ~` and
    /// `ls /` work; so does listing the names in a denied directory), not
    /// read through.
    pub(super) listable: Vec<Held>,
}

impl DeniedSet {
    /// Resolves the policy's denied paths and opens the read rules.
    pub(super) fn resolve(policy: &SandboxPolicy, home: Option<&Path>) -> DeniedSet {
        let paths = denied_paths(policy, home);
        let mut readable = Vec::new();
        let mut listable = Vec::new();
        if policy.mode.restricts_files() {
            // Beneath a shared writable root every call's ruleset grants
            // all, so those read rules would add nothing; for a path denied
            // in `/tmp` they were one held descriptor per entry of `/tmp`,
            // which every spawn then copies and closes.
            let shared = shared_roots(policy, home);
            let mut around = Around {
                readable: &mut readable,
                listable: &mut listable,
                denied: &paths,
                shared: &shared,
            };
            around.add(Path::new("/"));
        }
        DeniedSet {
            paths,
            readable,
            listable,
        }
    }
}

/// What a session's commands may write and may not read.
#[derive(Debug)]
pub(super) struct FixedRoots {
    /// The writable roots (`None`: writes are not restricted).
    pub(super) writable: Option<Vec<Held>>,
    /// Denied paths that are enforced (outside every writable root).
    pub(super) denied: Vec<PathBuf>,
    /// Denied paths inside a writable root (not enforceable).
    pub(super) unenforced: Vec<PathBuf>,
}

/// The inputs the roots are resolved from.
pub(super) struct RootInputs<'a> {
    pub(super) policy: &'a SandboxPolicy,
    pub(super) directory: &'a Path,
    pub(super) worktree: &'a Path,
    pub(super) home: Option<&'a Path>,
}

impl FixedRoots {
    /// Resolves and opens everything once.
    pub(super) fn resolve(inputs: &RootInputs<'_>, denied: &DeniedSet) -> FixedRoots {
        let all_denied = denied.paths.clone();
        let writable = match inputs.policy.mode {
            SandboxMode::DangerFullAccess => None,
            SandboxMode::ReadOnly => Some(Vec::new()),
            _ => Some(writable_roots(inputs)),
        };
        let (denied, unenforced): (Vec<PathBuf>, Vec<PathBuf>) =
            all_denied.into_iter().partition(|path| {
                !writable
                    .as_deref()
                    .is_some_and(|roots| roots.iter().any(|r| path.starts_with(&r.path)))
            });
        FixedRoots {
            writable,
            denied,
            unenforced,
        }
    }

    /// The writable roots' paths, as resolved.
    pub(super) fn writable_paths(&self) -> Option<Vec<PathBuf>> {
        self.writable
            .as_ref()
            .map(|roots| roots.iter().map(|r| r.path.clone()).collect())
    }
}

/// The writable roots of `workspace-write`: the project directory, the
/// worktree (unless `/`, or `$HOME` while the project is elsewhere), the
/// temporary directories and the policy's `writable` list. `$HOME` itself
/// is a root only when the policy's list names it.
fn writable_roots(inputs: &RootInputs<'_>) -> Vec<Held> {
    let home = inputs
        .home
        .and_then(|home| home.canonicalize().ok())
        .filter(|home| home != Path::new("/"));
    let mut candidates: Vec<(PathBuf, bool)> = vec![(inputs.directory.to_path_buf(), false)];
    let worktree = inputs.worktree;
    if worktree != Path::new("/") && !worktree.as_os_str().is_empty() {
        candidates.push((worktree.to_path_buf(), false));
    }
    candidates.extend(shared_candidates(inputs.policy, inputs.home));
    let mut roots: Vec<Held> = Vec::new();
    for (candidate, named_by_policy) in candidates {
        let Some(root) = Held::open(&candidate) else {
            continue;
        };
        if !root.dir || root.path == Path::new("/") {
            continue;
        }
        if !named_by_policy && home.as_deref() == Some(root.path.as_path()) {
            tracing::debug!(
                path = %root.path.display(),
                "sandbox: the home directory is not a writable root (the project directory is)"
            );
            continue;
        }
        if !roots.iter().any(|r| r.path == root.path) {
            roots.push(root);
        }
    }
    roots
}

/// The writable roots every project of `policy` shares: the temporary
/// directories and the policy's `writable` list (`true`: named by it).
fn shared_candidates(policy: &SandboxPolicy, home: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut candidates: Vec<(PathBuf, bool)> = [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ]
    .into_iter()
    .map(|dir| (dir, false))
    .collect();
    candidates.extend(policy.writable.iter().map(|p| (expand_home(p, home), true)));
    candidates
}

/// The shared writable roots (see [`shared_candidates`]) as
/// [`writable_roots`] resolves them, canonical: every call's ruleset grants
/// everything beneath them, so no read rule is needed there.
fn shared_roots(policy: &SandboxPolicy, home: Option<&Path>) -> Vec<PathBuf> {
    if policy.mode != SandboxMode::WorkspaceWrite {
        return Vec::new();
    }
    let home = home
        .and_then(|home| home.canonicalize().ok())
        .filter(|home| home != Path::new("/"));
    shared_candidates(policy, home.as_deref())
        .into_iter()
        .filter_map(|(candidate, named_by_policy)| {
            let path = candidate.canonicalize().ok()?;
            let keep = path.is_dir()
                && path != Path::new("/")
                && (named_by_policy || home.as_deref() != Some(path.as_path()));
            keep.then_some(path)
        })
        .collect()
}

/// The policy's denied paths that exist, canonical.
fn denied_paths(policy: &SandboxPolicy, home: Option<&Path>) -> Vec<PathBuf> {
    let mut denied: Vec<PathBuf> = Vec::new();
    for path in policy.denied_read() {
        if let Ok(path) = expand_home(&path, home).canonicalize()
            && !denied.contains(&path)
        {
            denied.push(path);
        }
    }
    denied
}

/// The read rules being gathered around the denied paths.
struct Around<'a> {
    readable: &'a mut Vec<Held>,
    listable: &'a mut Vec<Held>,
    denied: &'a [PathBuf],
    /// Shared writable roots: nothing beneath them needs a read rule.
    shared: &'a [PathBuf],
}

impl Around<'_> {
    /// Read rules for `dir`, leaving out `denied` paths beneath it: a rule on
    /// `dir` itself when nothing beneath is denied, else a listing rule on it
    /// and rules on its entries (symbolic links among them get none; their
    /// targets are covered where they live).
    fn add(&mut self, dir: &Path) {
        if self.shared.iter().any(|root| dir.starts_with(root)) {
            return;
        }
        let denied = self.denied;
        if !denied.iter().any(|d| d.starts_with(dir)) {
            if let Some(held) = held_as_is(dir) {
                self.readable.push(held);
            }
            return;
        }
        if denied.iter().any(|d| d == dir) {
            return;
        }
        if let Some(held) = held_as_is(dir) {
            self.listable.push(held);
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
            if is_symlink || denied.iter().any(|d| d == &path) {
                continue;
            }
            self.add(&path);
        }
    }
}

/// `path` (already canonical) opened without following links.
fn held_as_is(path: &Path) -> Option<Held> {
    #[cfg(target_os = "linux")]
    {
        let (fd, dir) = super::handles::open_path(path).ok()?;
        Some(Held {
            path: path.to_path_buf(),
            dir,
            fd,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        Some(Held {
            path: path.to_path_buf(),
            dir: path.is_dir(),
        })
    }
}

/// Device files every mode may read and write.
pub(super) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The device files, opened once per process.
pub(super) fn devices() -> &'static [Held] {
    static DEVICE_FILES: std::sync::OnceLock<Vec<Held>> = std::sync::OnceLock::new();
    DEVICE_FILES.get_or_init(|| {
        DEVICES
            .iter()
            .filter_map(|device| held_as_is(Path::new(device)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_read_rules_are_held_beneath_the_temporary_directory() {
        // A path denied inside a project under the temporary directory:
        // every call grants all beneath it, so none of its entries needs a
        // rule (they were one held descriptor each).
        let project = scratch("shared");
        let secret = project.join("secrets");
        std::fs::create_dir_all(&secret).unwrap();
        let temp = std::env::temp_dir().canonicalize().unwrap();
        let write = SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_deny_read(secret.clone());
        let set = DeniedSet::resolve(&write, None);
        assert!(set.paths.contains(&secret));
        let beneath = |held: &Vec<Held>| held.iter().filter(|h| h.path.starts_with(&temp)).count();
        assert_eq!(beneath(&set.readable), 0);
        assert_eq!(beneath(&set.listable), 0);
        // Read-only has no writable root: the rules around the path stay.
        let read_only = SandboxPolicy::new(SandboxMode::ReadOnly).with_deny_read(secret.clone());
        let set = DeniedSet::resolve(&read_only, None);
        assert!(beneath(&set.listable) > 0, "the ancestors are listable");
        let _ = std::fs::remove_dir_all(&project);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .canonicalize()
            .unwrap()
            .join(format!("roots-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn roots(
        policy: &SandboxPolicy,
        directory: &Path,
        worktree: &Path,
        home: &Path,
    ) -> Vec<PathBuf> {
        let inputs = RootInputs {
            policy,
            directory,
            worktree,
            home: Some(home),
        };
        let denied = DeniedSet::resolve(policy, Some(home));
        FixedRoots::resolve(&inputs, &denied)
            .writable_paths()
            .unwrap_or_default()
    }

    #[test]
    fn a_home_that_is_the_work_tree_is_not_a_root_the_project_is() {
        let home = scratch("home-worktree");
        std::fs::create_dir_all(home.join(".git")).unwrap();
        let project = home.join("code").join("app");
        std::fs::create_dir_all(&project).unwrap();
        let policy = SandboxPolicy::default();
        let writable = roots(&policy, &project, &home, &home);
        assert!(writable.contains(&project), "{writable:?}");
        assert!(!writable.contains(&home), "{writable:?}");
        // Only the policy's own list can make the home writable.
        let named = SandboxPolicy::default().with_writable("~/");
        assert!(roots(&named, &project, &home, &home).contains(&home));
        std::fs::remove_dir_all(home).unwrap();
    }

    #[test]
    fn roots_are_opened_where_they_were_and_links_are_not_roots() {
        let base = scratch("links");
        let real = base.join("real");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(&real, base.join("link")).unwrap();
        let policy = SandboxPolicy::default();
        let writable = roots(
            &policy,
            &base.join("link"),
            Path::new("/"),
            Path::new("/nonexistent"),
        );
        // A link given by the host is resolved once, to where it led then.
        assert!(writable.contains(&real), "{writable:?}");
        assert!(!writable.contains(&base.join("link")));
        std::fs::remove_dir_all(base).unwrap();
    }
}
