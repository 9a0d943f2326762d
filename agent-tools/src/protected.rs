//! Protected paths: what the next run, or the user's next `git`, trusts
//! inside the workspace — [`PROTECTED_NAMES`] (`.git`, `opencode.json`,
//! `opencode.jsonc`, `.opencode`) at the top of the project directory or
//! the worktree. The file tools still change them, but first ask
//! [`PROTECTED_PATH`] with the path as pattern, judged only by rules that
//! name `protected_path` (a rule for every permission, `"*": "allow"` as in
//! the agent defaults, does not answer it), so an `edit` allow never lets a
//! turn rewrite the configuration the next session starts from.

use std::path::Path;

use crate::paths;
use crate::request::ToolRequest;
pub use crate::sandbox::PROTECTED_NAMES;

/// The permission name of the ask.
pub const PROTECTED_PATH: &str = "protected_path";

/// The protected entry `path` is in (as written or where it leads), if
/// any: `<root>/<name>` for a root of the project and a name of
/// [`PROTECTED_NAMES`].
pub fn protected_entry(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<std::path::PathBuf> {
    paths::views(path, directory, worktree)
        .into_iter()
        .find_map(|view| {
            [&view.directory, &view.worktree]
                .into_iter()
                .filter(|root| *root != Path::new("/") && !root.as_os_str().is_empty())
                .find_map(|root| {
                    let rest = view.target.strip_prefix(root).ok()?;
                    let first = rest.components().next()?;
                    let name = first.as_os_str().to_str()?;
                    PROTECTED_NAMES.contains(&name).then(|| root.join(name))
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
        ] {
            assert!(
                protected_request(Path::new(path), directory, worktree).is_some(),
                "{path}"
            );
        }
        for path in [
            "/w/src/opencode.json",
            "/w/app/src/.git",
            "/w/gitconfig",
            "/elsewhere/.git",
        ] {
            assert!(
                protected_request(Path::new(path), directory, worktree).is_none(),
                "{path}"
            );
        }
        assert!(protected_request(Path::new("/.git"), Path::new("/"), Path::new("/")).is_none());
    }
}
