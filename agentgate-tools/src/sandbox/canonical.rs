//! Canonical paths of many entries of a few folders, as
//! [`Path::canonicalize`] gives them, for one call's sandbox setup.
//!
//! `canonicalize` (glibc's `realpath`) reads every component of its path
//! as a possible link: a project's twenty-odd protected names, each five
//! or six components deep, cost a hundred `readlink` calls per command.
//! Here each folder is resolved once; an entry that is not itself a link
//! is its folder's answer joined with its name (exactly `realpath`'s
//! answer), and anything else (a link, an odd path, an error other than
//! "not found") takes `canonicalize` itself.
//!
//! Like `canonicalize`, an answer is about the moment it was computed: the
//! caller binds or opens what it names, it does not trust it later.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The canonical folders resolved so far in one call.
#[derive(Debug, Default)]
pub(super) struct CanonicalPaths {
    folders: Vec<(PathBuf, Option<PathBuf>)>,
}

impl CanonicalPaths {
    /// `path` canonical, or `None` where [`Path::canonicalize`] fails.
    pub(super) fn of(&mut self, path: &Path) -> Option<PathBuf> {
        let Some((folder, name)) = split_plain(path) else {
            return path.canonicalize().ok();
        };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_symlink() => {
                self.folder(folder).map(|folder| folder.join(name))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            _ => path.canonicalize().ok(),
        }
    }

    /// `folder` canonical, resolved on its first use in this call.
    fn folder(&mut self, folder: &Path) -> Option<PathBuf> {
        if let Some((_, answer)) = self.folders.iter().find(|(known, _)| known == folder) {
            return answer.clone();
        }
        let answer = folder.canonicalize().ok();
        self.folders.push((folder.to_path_buf(), answer.clone()));
        answer
    }
}

/// An absolute path's folder and last name, when the path is written as
/// plain names only: no `.` or `..`, no doubled or trailing separator
/// (which [`Path::components`] would quietly drop but `realpath`
/// interprets).
fn split_plain(path: &Path) -> Option<(&Path, &OsStr)> {
    let mut plain = PathBuf::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Normal(_) => plain.push(component),
            _ => return None,
        }
    }
    if !path.is_absolute() || plain.as_os_str() != path.as_os_str() {
        return None;
    }
    Some((path.parent()?, path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::symlink;

    /// A tree with folders, files, links to each, a link out of the tree,
    /// a dangling link and a loop.
    fn tree(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("canonical-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("a/f"), "").unwrap();
        std::fs::write(root.join("a/b/g"), "").unwrap();
        std::fs::write(root.join("out/s"), "").unwrap();
        symlink(root.join("a/b"), root.join("a/lb")).unwrap();
        symlink("../out", root.join("a/lo")).unwrap();
        symlink("f", root.join("a/lf")).unwrap();
        symlink("missing", root.join("a/dangling")).unwrap();
        symlink("loop", root.join("a/loop")).unwrap();
        symlink(root.join("a"), root.join("la")).unwrap();
        root
    }

    const NAMES: &[&str] = &[
        "a", "b", "f", "g", "s", "out", "lb", "lo", "lf", "la", "dangling", "loop", "missing", ".",
        "..", "", "f/",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Every answer is `canonicalize`'s, for paths through links,
        /// dots, missing names and files used as folders, with the folder
        /// answers shared across the paths of one call.
        #[test]
        fn answers_as_canonicalize_does(
            paths in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(NAMES), 1..5), 1..8),
        ) {
            let root = tree("prop");
            let mut resolved = CanonicalPaths::default();
            for names in paths {
                let path = names.iter().fold(root.clone(), |p, n| p.join(n));
                prop_assert_eq!(resolved.of(&path), path.canonicalize().ok(), "{}", path.display());
            }
        }
    }

    #[test]
    fn a_folder_is_resolved_once_and_links_still_followed() {
        let root = tree("once");
        let mut resolved = CanonicalPaths::default();
        assert_eq!(
            resolved.of(&root.join("la/f")),
            Some(root.canonicalize().unwrap().join("a/f"))
        );
        assert_eq!(
            resolved.of(&root.join("la/lo")),
            Some(root.canonicalize().unwrap().join("out"))
        );
        assert_eq!(resolved.of(&root.join("la/missing")), None);
        assert_eq!(resolved.of(&root.join("la/dangling")), None);
        assert_eq!(resolved.folders.len(), 1);
        assert_eq!(resolved.of(Path::new("relative")), None);
    }
}
