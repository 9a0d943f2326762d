//! Project-relative paths: checking a [`FileChange`](agentgate_core::FileChange)'s
//! path (read back from a store, so input) and turning a scope's paths into
//! the `/`-separated form changes are recorded in.

use std::path::{Component, Path};

use crate::files::paths;

/// Why a recorded path is refused.
pub(crate) fn invalid(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("the path is empty");
    }
    if path.contains('\0') {
        return Some("the path contains a NUL byte");
    }
    if path.starts_with('/') {
        return Some("the path is absolute");
    }
    for part in path.split('/') {
        match part {
            "" => return Some("the path has an empty component"),
            "." | ".." => return Some("the path has a `.` or `..` component"),
            ".git" => return Some("the path is inside `.git`, which checkpoints never touch"),
            _ => {}
        }
    }
    None
}

/// The components of a valid relative path (see [`invalid`]).
pub(crate) fn components(path: &str) -> Vec<&str> {
    path.split('/').collect()
}

/// How deep `path` is: `a` is 1, `a/b` is 2.
pub(crate) fn depth(path: &str) -> usize {
    path.split('/').count()
}

/// Each proper ancestor of `path`, shallowest first: `a/b/c` gives `a`, `a/b`.
pub(crate) fn ancestors(path: &str) -> Vec<&str> {
    path.match_indices('/').map(|(at, _)| &path[..at]).collect()
}

/// `path` (absolute, or relative to `root`) as a `/`-separated path
/// relative to `root`, resolved lexically; `None` when it is `root`
/// itself, outside it, not UTF-8, or refused by [`invalid`].
pub(crate) fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let root = paths::normalize(root);
    let full = paths::resolve(&root, path);
    let inside = full.strip_prefix(&root).ok()?;
    let mut parts = Vec::new();
    for component in inside.components() {
        match component {
            Component::Normal(name) => parts.push(name.to_str()?),
            _ => return None,
        }
    }
    let joined = parts.join("/");
    invalid(&joined).is_none().then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_paths_are_refused() {
        for path in [
            "",
            "/etc/passwd",
            "a/../../x",
            "./a",
            "a//b",
            "a/\0b",
            ".git/hooks/x",
            "a/",
        ] {
            assert!(invalid(path).is_some(), "{path:?}");
        }
        assert_eq!(invalid("src/main.rs"), None);
        assert_eq!(invalid(".gitignore"), None);
    }

    #[test]
    fn scope_paths_are_made_relative_to_the_root_or_skipped() {
        let root = Path::new("/p");
        assert_eq!(
            relative_to(root, Path::new("/p/a/b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(
            relative_to(root, Path::new("a/./c/../b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(relative_to(root, Path::new("/p")), None);
        assert_eq!(relative_to(root, Path::new("/q/a")), None);
        assert_eq!(relative_to(root, Path::new("../p2/a")), None);
    }

    #[test]
    fn ancestors_and_depth() {
        assert_eq!(ancestors("a/b/c"), ["a", "a/b"]);
        assert!(ancestors("a").is_empty());
        assert_eq!(depth("a/b/c"), 3);
        assert_eq!(components("a/b"), ["a", "b"]);
    }
}
