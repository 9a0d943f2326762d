//! Lexical path helpers with Node's `path` semantics: resolving a tool's
//! path argument against the working directory, the "inside" test of §7.3
//! and the worktree-relative form used in permission patterns (§7.2).
//!
//! Everything here is lexical (nothing touches the file system, `..` is
//! folded against the preceding component, never above the root, so
//! `/../out/secret` is `/out/secret` as for Node's `path.resolve`), except
//! [`real_path`] and [`views`], which resolve symlinks so the
//! permission checks also see where a link leads.

use std::path::{Component, Path, PathBuf};

/// `path` with `.` removed and `..` folded against the preceding component
/// (never above the root), like Node's `path.normalize`. A relative path
/// is first made absolute against the process's current directory.
pub fn normalize(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(cwd) => cwd.join(path),
            Err(_) => path.to_path_buf(),
        }
    };
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // At the root `..` stays at the root (`/..` is `/`).
                if out.parent().is_some() {
                    out.pop();
                } else if out.as_os_str().is_empty() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A tool's path argument as an absolute, normalised path: absolute paths
/// are kept, relative ones are joined to `directory` (Node's
/// `path.resolve(directory, path)`).
pub fn resolve(directory: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&directory.join(path))
    }
}

/// The relative path from `from` to `to`, with `/` separators, like Node's
/// `path.relative`: `""` when they are the same, `..` components for each
/// level `to` is outside `from`.
///
/// ```
/// use std::path::Path;
/// use agentgate_tools::paths::relative;
/// assert_eq!(relative(Path::new("/home/u/proj"), Path::new("/etc/hosts")), "../../../etc/hosts");
/// assert_eq!(relative(Path::new("/home/u/proj"), Path::new("/home/u/proj/pkg/a.ts")), "pkg/a.ts");
/// ```
pub fn relative(from: &Path, to: &Path) -> String {
    let from = normalize(from);
    let to = normalize(to);
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let common = from
        .iter()
        .zip(to.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..from.len() {
        parts.push("..".to_string());
    }
    for component in &to[common..] {
        parts.push(component.as_os_str().to_string_lossy().into_owned());
    }
    parts.join("/")
}

/// Whether `child` is `parent` or below it (§7.3's path-relative test: the
/// relative path is empty, or neither absolute nor `..` nor starting with
/// `../`). `/a/projX` is not inside `/a/proj`.
pub fn contains(parent: &Path, child: &Path) -> bool {
    let rel = relative(parent, child);
    rel.is_empty() || (!Path::new(&rel).is_absolute() && rel != ".." && !rel.starts_with("../"))
}

/// The pattern read, write and edit ask with (§7.2): `target` relative to
/// the worktree, `../..`-style for paths outside it.
pub fn worktree_pattern(worktree: &Path, target: &Path) -> String {
    relative(worktree, target)
}

/// How many dangling symlinks [`real_path`] follows (as the kernel's limit
/// of 40 links per lookup).
const MAX_LINK_HOPS: usize = 40;

/// Where `path` (absolute, normalised) leads on the file system: symlinks
/// resolved for the longest part of it that exists, the rest appended
/// (so a new file in a linked folder is placed where the link leads). A
/// symlink whose target does not exist yet leads to that target (`echo x
/// > link` creates it). `path` itself when nothing of it can be resolved.
///
/// While a file tool builds its permission requests, its own path gets
/// the answer the tool found (the place it will read or write).
pub fn real_path(path: &Path) -> PathBuf {
    let pinned = PINNED.with_borrow(|pins| {
        pins.iter()
            .find(|(pinned, _)| pinned == path)
            .map(|(_, real)| real.clone())
    });
    pinned.unwrap_or_else(|| real_path_within(path, MAX_LINK_HOPS))
}

thread_local! {
    /// The answers [`with_pinned`] fixed for this thread.
    static PINNED: std::cell::RefCell<Vec<(PathBuf, PathBuf)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with [`real_path`] of each pinned path (absolute, normalised)
/// answering where the caller found it leads: the permission requests a
/// call builds in `f` are then about the very place the call will hold its
/// opens to, even while a link on the way is being changed by another
/// process (each resolution would otherwise see its own moment).
pub(crate) fn with_pinned<T>(pins: &[(PathBuf, PathBuf)], f: impl FnOnce() -> T) -> T {
    /// Restores the pins before, however `f` ends.
    struct Restore(Vec<(PathBuf, PathBuf)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = std::mem::take(&mut self.0);
            PINNED.with_borrow_mut(|pins| *pins = before);
        }
    }
    let before = PINNED.with_borrow_mut(|current| {
        let before = current.clone();
        current.extend(pins.iter().cloned());
        before
    });
    let _restore = Restore(before);
    f()
}

fn real_path_within(path: &Path, hops: usize) -> PathBuf {
    let mut existing = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        if let Some(hops) = hops.checked_sub(1)
            && let Ok(target) = std::fs::read_link(existing)
        {
            let base = existing.parent().unwrap_or(Path::new("/"));
            let mut next = normalize(&base.join(target));
            for part in rest.iter().rev() {
                next.push(part);
            }
            return real_path_within(&next, hops);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// A path as a permission check sees it, with the project it is judged
/// against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathView {
    /// The path.
    pub target: PathBuf,
    /// The project directory, in the same terms (lexical or resolved).
    pub directory: PathBuf,
    /// The worktree, in the same terms.
    pub worktree: PathBuf,
}

/// The views a permission check must look at: `path` as written against
/// the project as given, and, when a symlink makes it lead elsewhere,
/// where it leads ([`real_path`]) against the project's own resolved
/// location (so a project opened through a symlinked folder is still
/// inside itself).
pub fn views(path: &Path, directory: &Path, worktree: &Path) -> Vec<PathView> {
    let lexical = PathView {
        target: normalize(path),
        directory: normalize(directory),
        worktree: normalize(worktree),
    };
    let real = real_path(&lexical.target);
    if real == lexical.target {
        return vec![lexical];
    }
    let real = PathView {
        target: real,
        directory: real_path(&lexical.directory),
        worktree: real_path(&lexical.worktree),
    };
    vec![lexical, real]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../..")), PathBuf::from("/"));
        assert_eq!(
            normalize(Path::new("/../out/secret")),
            PathBuf::from("/out/secret")
        );
        assert_eq!(
            resolve(Path::new("/w/p"), Path::new("../../../../out/s")),
            PathBuf::from("/out/s")
        );
        assert_eq!(
            resolve(Path::new("/w/pkg"), Path::new("../x")),
            PathBuf::from("/w/x")
        );
        assert_eq!(
            resolve(Path::new("/w/pkg"), Path::new("/etc/hosts")),
            PathBuf::from("/etc/hosts")
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("/a"), Path::new("/a")), "");
        assert_eq!(relative(Path::new("/"), Path::new("/a/b")), "a/b");
        assert_eq!(
            relative(Path::new("/a/proj"), Path::new("/a/projX")),
            "../projX"
        );
        assert!(!contains(Path::new("/a/proj"), Path::new("/a/projX/f")));
        assert!(contains(Path::new("/a/proj"), Path::new("/a/proj/..f")));
        assert!(contains(Path::new("/a/proj"), Path::new("/a/proj")));
        assert!(!contains(Path::new("/a/proj"), Path::new("/a")));
    }
}
