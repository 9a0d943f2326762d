//! Protected paths: what the next run, or the user's next `git`, trusts
//! inside the workspace — [`PROTECTED_NAMES`] (`.git`, `opencode.json`,
//! `opencode.jsonc`, `.opencode`) in the project directory, each folder
//! above it up to the worktree ([`protected_roots`], the folders the
//! configuration loader reads) and every folder below them
//! ([`protected_folders`]: a later run started in a subfolder reads its
//! names too). The file tools still change them, but first ask
//! [`PROTECTED_PATH`] with the path as pattern, judged only by rules that
//! name `protected_path` (a rule for every permission, `"*": "allow"` as in
//! the agent defaults, does not answer it), so an `edit` allow never lets a
//! turn rewrite the configuration the next session starts from.

use std::path::Path;

use crate::files::paths;
use crate::files::request::ToolRequest;
pub use crate::sandbox::{PROTECTED_NAMES, protected_folders, protected_roots};

/// The permission name of the ask.
pub const PROTECTED_PATH: &str = "protected_path";

/// The protected entry `path` is in (as written or where it leads), if
/// any: `<folder>/<name>` for the outermost name of [`PROTECTED_NAMES`] on
/// the path below a folder of [`protected_folders`].
pub fn protected_entry(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<std::path::PathBuf> {
    paths::views(path, directory, worktree)
        .into_iter()
        .find_map(|view| {
            crate::sandbox::protected_folders(&view.directory, &view.worktree)
                .into_iter()
                .find_map(|folder| {
                    let rest = view.target.strip_prefix(&folder).ok()?;
                    let mut entry = folder.clone();
                    for component in rest.components() {
                        entry.push(component);
                        let name = component.as_os_str().to_str();
                        if name.is_some_and(|name| PROTECTED_NAMES.contains(&name)) {
                            return Some(entry);
                        }
                    }
                    None
                })
        })
}

/// The `protected_path` request for a change of `path`, when it is
/// protected: pattern and "always" pattern the path itself.
pub(crate) fn protected_request(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<ToolRequest> {
    let entry = protected_entry(path, directory, worktree)?;
    let target = paths::normalize(path).display().to_string();
    Some(
        ToolRequest::new(PROTECTED_PATH, target.clone(), &target).with_metadata(
            serde_json::json!({"filepath": target, "protected": entry.display().to_string()}),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_names_of_the_project_and_worktree_are_protected() {
        let worktree = Path::new("/w");
        let directory = Path::new("/w/app");
        for path in [
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/opencode.json",
            "/w/app/opencode.jsonc",
            "/w/.opencode/plugin/x.ts",
            "/w/app/.opencode",
            "/w/app/deeper/../opencode.json",
        ] {
            assert!(
                protected_request(Path::new(path), directory, worktree).is_some(),
                "{path}"
            );
        }
        for path in [
            "/w/gitconfig",
            "/w/src/opencode.json.bak",
            "/elsewhere/.git",
        ] {
            assert!(
                protected_request(Path::new(path), directory, worktree).is_none(),
                "{path}"
            );
        }
        assert!(protected_request(Path::new("/.git"), Path::new("/"), Path::new("/")).is_none());
    }

    /// A later run started in a subfolder reads that subfolder's names,
    /// and `git` there the nearest `.git`: protected at any depth, the
    /// outermost name being the entry.
    #[test]
    fn names_below_the_project_are_protected_at_any_depth() {
        let worktree = Path::new("/w");
        let directory = Path::new("/w");
        for (path, entry) in [
            ("/w/src/opencode.json", "/w/src/opencode.json"),
            (
                "/w/packages/a/.opencode/agent/x.md",
                "/w/packages/a/.opencode",
            ),
            (
                "/w/vendor/lib/.git/hooks/post-checkout",
                "/w/vendor/lib/.git",
            ),
            ("/w/a/.opencode/b/opencode.json", "/w/a/.opencode"),
        ] {
            assert_eq!(
                protected_entry(Path::new(path), directory, worktree).as_deref(),
                Some(Path::new(entry)),
                "{path}"
            );
        }
        assert!(protected_entry(Path::new("/w/src/main.rs"), directory, worktree).is_none());
    }

    /// The configuration loader reads `opencode.json` and `.opencode` in
    /// every folder from the project directory up to the worktree, and git
    /// finds the nearest `.git`: each of those folders is protected.
    #[test]
    fn every_folder_between_the_directory_and_the_worktree_is_protected() {
        let worktree = Path::new("/w");
        let directory = Path::new("/w/app/sub");
        assert_eq!(
            protected_roots(directory, worktree),
            [
                Path::new("/w/app/sub"),
                Path::new("/w/app"),
                Path::new("/w")
            ]
        );
        for path in [
            "/w/app/opencode.json",
            "/w/app/.opencode/agent/x.md",
            "/w/app/.git/config",
        ] {
            assert!(
                protected_request(Path::new(path), directory, worktree).is_some(),
                "{path}"
            );
        }
        assert!(
            protected_request(Path::new("/w/other/opencode.json"), directory, worktree).is_some(),
            "below the worktree at any depth: a run started in /w/other reads it"
        );
        // A directory outside the worktree: both, nothing in between.
        assert_eq!(
            protected_roots(Path::new("/p"), Path::new("/w")),
            [Path::new("/p"), Path::new("/w")]
        );
        assert!(protected_roots(Path::new("/"), Path::new("/")).is_empty());
    }
}
