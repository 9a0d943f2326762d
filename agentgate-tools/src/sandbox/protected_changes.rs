//! Protected names a command may still create: what the next run trusts
//! ([`PROTECTED_NAMES`](super::PROTECTED_NAMES)) but that did not exist, or
//! was a symbolic link, when the command started.
//!
//! The protected paths that exist are read-only mounts in the command's
//! mount namespace (`mounts`), so it cannot change them. A name that is
//! absent has nothing to mount over, and Landlock cannot refuse one name in
//! a writable directory; a symbolic link is mounted where it leads, not
//! where it is. So the sandbox notes those names before the command runs
//! ([`watch`]) and compares after it ended ([`Watched::changed`]), when
//! every process of the call has ended with it (the PID namespace's init).
//! The bash tool then asks `protected_path` for each change, and one that
//! is not allowed is undone ([`ProtectedChange::undo`]): the new entry is
//! renamed beside itself (nothing is deleted; the next run does not read
//! the new name) and a replaced link is put back. Nothing reads the
//! configuration between the command's end and that answer.

use std::path::PathBuf;

/// What a protected name was when the command started.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Before {
    /// Nothing at that name.
    Absent,
    /// A symbolic link, with its target as written.
    Link(PathBuf),
}

/// One protected name noted before a command.
#[derive(Debug, Clone)]
pub(super) struct Watched {
    path: PathBuf,
    before: Before,
}

/// A protected name the command created or replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedChange {
    /// The protected path (`<root>/<name>`).
    pub path: PathBuf,
    /// The link that was there before, when the command replaced one.
    pub replaced_link: Option<PathBuf>,
}

/// The protected names of `roots`, and the `paths` protected besides
/// (the project's top-level names and what its git configuration names),
/// that are absent or symbolic links now, except those in `opened` (named
/// exactly by the policy's `writable` list).
pub(super) fn watch(roots: &[PathBuf], paths: &[PathBuf], opened: &[PathBuf]) -> Vec<Watched> {
    let named = roots
        .iter()
        .flat_map(|root| super::PROTECTED_NAMES.iter().map(|name| root.join(name)));
    let mut watched: Vec<Watched> = Vec::new();
    for path in named.chain(paths.iter().cloned()) {
        if watched.iter().any(|w| w.path == path) || opened.contains(&path) {
            continue;
        }
        let before = match std::fs::symlink_metadata(&path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Before::Absent,
            Err(_) => continue,
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(&path) {
                Ok(target) => Before::Link(target),
                Err(_) => continue,
            },
            // Present: a read-only mount covers it.
            Ok(_) => continue,
        };
        watched.push(Watched { path, before });
    }
    watched
}

impl Watched {
    /// The change the command made to this name, if any.
    pub(super) fn changed(&self) -> Option<ProtectedChange> {
        let now = match std::fs::symlink_metadata(&self.path) {
            Err(_) => return None,
            Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(&self.path).ok(),
            Ok(_) => None,
        };
        match &self.before {
            Before::Absent => Some(ProtectedChange {
                path: self.path.clone(),
                replaced_link: None,
            }),
            Before::Link(target) if now.as_ref() == Some(target) => None,
            Before::Link(target) => Some(ProtectedChange {
                path: self.path.clone(),
                replaced_link: Some(target.clone()),
            }),
        }
    }
}

impl ProtectedChange {
    /// Undoes the change: the new entry is renamed to
    /// `<name>.rejected-<n>` beside it (the first free `n`), and a replaced
    /// link is restored. Returns the new entry's name.
    ///
    /// # Errors
    /// When the entry cannot be renamed (or the link not restored): the
    /// message names the path, for the user to remove it by hand.
    pub fn undo(&self) -> std::io::Result<PathBuf> {
        let name = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut aside = None;
        for n in 1..1000 {
            let candidate = self.path.with_file_name(format!("{name}.rejected-{n}"));
            if std::fs::symlink_metadata(&candidate).is_err() {
                aside = Some(candidate);
                break;
            }
        }
        let aside = aside.ok_or_else(|| {
            std::io::Error::other(format!(
                "no free name beside {} to move it to; remove it by hand",
                self.path.display()
            ))
        })?;
        std::fs::rename(&self.path, &aside).map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!(
                    "{} could not be moved aside ({error}); remove it by hand before the next run",
                    self.path.display()
                ),
            )
        })?;
        #[cfg(unix)]
        if let Some(link) = &self.replaced_link {
            std::os::unix::fs::symlink(link, &self.path).map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!(
                        "the link {} → {} could not be restored ({error})",
                        self.path.display(),
                        link.display()
                    ),
                )
            })?;
        }
        Ok(aside)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scratch(name: &str) -> PathBuf {
        agentgate_testing::scratch::scratch_dir(&format!("protected-unit-{name}"))
    }

    #[test]
    fn absent_names_and_links_are_watched_and_compared() {
        let dir = scratch("watch");
        let root = dir.as_path();
        std::fs::write(root.join("elsewhere.json"), "{}").unwrap();
        std::os::unix::fs::symlink("elsewhere.json", root.join("opencode.json")).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let watched = watch(&[root.to_path_buf()], &[root.join("hooks")], &[]);
        let names: Vec<_> = watched.iter().map(|w| w.path.clone()).collect();
        assert!(names.contains(&root.join("opencode.json")));
        assert!(names.contains(&root.join(".opencode")));
        assert!(names.contains(&root.join("hooks")), "a derived path absent");
        assert!(
            !names.contains(&root.join(".git")),
            "an existing directory is mounted, not watched"
        );
        assert!(
            watched.iter().all(|w| w.changed().is_none()),
            "nothing changed yet"
        );

        // The command creates one name and replaces the link.
        std::fs::create_dir_all(root.join(".opencode/agent")).unwrap();
        std::fs::remove_file(root.join("opencode.json")).unwrap();
        std::fs::write(root.join("opencode.json"), r#"{"mcp":{}}"#).unwrap();
        let changes: Vec<_> = watched.iter().filter_map(Watched::changed).collect();
        assert_eq!(changes.len(), 2, "{changes:?}");
        for change in &changes {
            let aside = change.undo().unwrap();
            assert!(aside.exists());
        }
        assert!(!root.join(".opencode").exists());
        assert_eq!(
            std::fs::read_link(root.join("opencode.json")).unwrap(),
            Path::new("elsewhere.json")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("opencode.json.rejected-1")).unwrap(),
            r#"{"mcp":{}}"#
        );
        assert!(root.join(".opencode.rejected-1/agent").is_dir());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_the_writable_list_opens_is_not_watched() {
        let dir = scratch("opened");
        let watched = watch(std::slice::from_ref(&dir), &[], &[dir.join(".git")]);
        assert!(watched.iter().all(|w| w.path != dir.join(".git")));
        assert!(watched.iter().any(|w| w.path == dir.join("opencode.json")));
    }
}
