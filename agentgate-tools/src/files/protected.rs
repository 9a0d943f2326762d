//! Protected paths: what the next run, or the user's next `git`, trusts
//! inside the workspace — [`PROTECTED_NAMES`] (`.git`, `opencode.json`,
//! `opencode.jsonc`, `.opencode`) in the project directory, each folder
//! above it up to the worktree ([`protected_roots`], the folders the
//! configuration loader reads) and every folder below them
//! ([`protected_folders`]: a later run started in a subfolder reads its
//! names too); and [`protected_paths`](crate::protected_paths): the
//! [`TOP_LEVEL_NAMES`](crate::TOP_LEVEL_NAMES) (`.envrc`, `.husky`,
//! `.vscode` …) in those top folders, and every path inside the project
//! that the repository's git configuration names as something git
//! executes or loads (`core.hooksPath`, driver scripts, includes, …). The
//! file tools still change them, but first ask
//! [`PROTECTED_PATH`] with the path as pattern, judged only by rules that
//! name `protected_path` (a rule for every permission, `"*": "allow"` as in
//! the agent defaults, does not answer it), so an `edit` allow never lets a
//! turn rewrite the configuration the next session starts from.

use std::path::{Path, PathBuf};

use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::sandbox::PROTECTED_AT_ANY_DEPTH;
pub use crate::sandbox::{PROTECTED_NAMES, protected_folders, protected_roots};

/// The permission name of the ask.
pub const PROTECTED_PATH: &str = "protected_path";

/// The protected entry `path` is in (as written or where it leads), if
/// any: `<folder>/<name>` for the outermost name of [`PROTECTED_NAMES`] on
/// the path below a folder of [`protected_folders`], else the path of
/// [`protected_paths`](crate::protected_paths) it is at or below (a name
/// at the project's top, or what the repository's git configuration makes
/// git execute or load).
pub fn protected_entry(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<std::path::PathBuf> {
    protected_match(path, directory, worktree).map(|(entry, _)| entry)
}

/// [`protected_entry`] and why it is protected.
fn protected_match(path: &Path, directory: &Path, worktree: &Path) -> Option<(PathBuf, String)> {
    let views = paths::views(path, directory, worktree);
    views
        .iter()
        .find_map(|view| {
            crate::sandbox::protected_folders(&view.directory, &view.worktree)
                .into_iter()
                .find_map(|folder| name_below(&view.target, &folder))
        })
        .or_else(|| {
            views.iter().find_map(|view| {
                crate::git::protected_paths(&view.directory, &view.worktree)
                    .into_iter()
                    .find(|entry| view.target.starts_with(&entry.path))
                    .map(|entry| (entry.path, entry.why))
            })
        })
}

/// `<folder>/…/<name>` for the outermost protected name on `target` below
/// `folder`.
fn name_below(target: &Path, folder: &Path) -> Option<(PathBuf, String)> {
    let rest = target.strip_prefix(folder).ok()?;
    let mut entry = folder.to_path_buf();
    for component in rest.components() {
        entry.push(component);
        let name = component.as_os_str().to_str();
        if let Some(known) = PROTECTED_AT_ANY_DEPTH
            .iter()
            .find(|known| name == Some(known.name))
        {
            return Some((entry, known.reason.to_string()));
        }
    }
    None
}

/// The `protected_path` request for a change of `path`, when it is
/// protected: pattern and "always" pattern the path itself.
pub(crate) fn protected_request(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<ToolRequest> {
    let (entry, why) = protected_match(path, directory, worktree)?;
    let target = paths::normalize(path).display().to_string();
    Some(
        ToolRequest::new(PROTECTED_PATH, target.clone(), &target).with_metadata(
            serde_json::json!({"filepath": target, "protected": entry.display().to_string(), "why": why}),
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

    /// The top-level names (`.envrc`, `.vscode`, `.gitattributes` …) are
    /// protected in the folders from the directory up to the worktree, not
    /// below them; each request says why.
    #[test]
    fn top_level_names_are_protected_at_the_top_only_with_a_reason() {
        let worktree = Path::new("/w");
        let directory = Path::new("/w/app");
        for (path, entry) in [
            ("/w/.envrc", "/w/.envrc"),
            ("/w/app/.vscode/tasks.json", "/w/app/.vscode"),
            ("/w/.gitattributes", "/w/.gitattributes"),
            ("/w/.husky/pre-commit", "/w/.husky"),
        ] {
            assert_eq!(
                protected_entry(Path::new(path), directory, worktree).as_deref(),
                Some(Path::new(entry)),
                "{path}"
            );
        }
        for path in ["/w/app/node_modules/x/.vscode/a.json", "/w/other/.envrc"] {
            assert!(
                protected_entry(Path::new(path), directory, worktree).is_none(),
                "{path}"
            );
        }
        let request = protected_request(Path::new("/w/.envrc"), directory, worktree).unwrap();
        let why = request.metadata["why"].as_str().unwrap_or_default();
        assert!(why.contains("direnv"), "{why}");
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
