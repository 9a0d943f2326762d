//! The fixed names of the protected set, each with why: what stays a name
//! because no configuration names it (or names it only after the fact).
//! What the repository's git configuration names is derived instead
//! (`crate::git`).
//!
//! [`PROTECTED_NAMES`] are protected at any depth below the project (a
//! later run started in a subfolder reads them there, `git` finds the
//! nearest `.git`); [`TOP_LEVEL_NAMES`] only in the project directory and
//! each folder above it up to the worktree, where the tools that read them
//! look (a package under `node_modules` shipping its own `.vscode` is not
//! the user's editor's).

/// One fixed name and why it is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectedName {
    /// The file or folder name.
    pub name: &'static str,
    /// What reads or runs it.
    pub reason: &'static str,
}

const fn name(name: &'static str, reason: &'static str) -> ProtectedName {
    ProtectedName { name, reason }
}

/// The names protected at any depth, with why ([`PROTECTED_NAMES`] in the
/// same order).
pub const PROTECTED_AT_ANY_DEPTH: &[ProtectedName] = &[
    name(
        ".git",
        "git's own folder: its config, hooks and info/attributes decide what the user's next git command runs",
    ),
    name(
        "opencode.json",
        "the next agent run's configuration: MCP commands, plugins, permission rules",
    ),
    name("opencode.jsonc", "as opencode.json"),
    name(
        ".opencode",
        "the next agent run's agents, commands, plugins and configuration",
    ),
];

/// Names inside the workspace a command may read but not change in
/// `workspace-write`, at any depth: what the next run, or the user's next
/// `git`, trusts (see [`PROTECTED_AT_ANY_DEPTH`] for why each).
pub const PROTECTED_NAMES: &[&str] = &[".git", "opencode.json", "opencode.jsonc", ".opencode"];

/// The names protected in the project directory and each folder above it
/// up to the worktree, with why.
pub const TOP_LEVEL_NAMES: &[ProtectedName] = &[
    name(
        ".gitmodules",
        "names the submodules git clones and checks out, and whose own configuration it reads",
    ),
    name(
        ".gitattributes",
        "selects which filter, diff and merge drivers git runs on which files",
    ),
    name(
        ".envrc",
        "direnv runs it in the user's shell on entering the folder (once allowed, and users allow by habit)",
    ),
    name(
        ".husky",
        "husky's hooks: core.hooksPath = .husky/_ runs the scripts here, and husky sets that key only when npm install runs, after the folder exists",
    ),
    name(
        ".pre-commit-config.yaml",
        "the pre-commit framework's hook runs the commands it lists on the next git commit",
    ),
    name(
        "lefthook.yml",
        "lefthook's hooks run the commands it lists on the next git commit",
    ),
    name(".lefthook.yml", "as lefthook.yml"),
    name(
        ".vscode",
        "tasks.json tasks can run when the folder is opened; settings.json names programs the editor starts (terminal profiles, formatters, language servers)",
    ),
    name(
        ".idea",
        "JetBrains run configurations, startup tasks and external tools",
    ),
    name(
        ".devcontainer",
        "devcontainer.json's initializeCommand runs on the host when the folder is opened in a dev container",
    ),
    name(".devcontainer.json", "as .devcontainer"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_and_the_reasons_agree() {
        let names: Vec<&str> = PROTECTED_AT_ANY_DEPTH.iter().map(|n| n.name).collect();
        assert_eq!(names, PROTECTED_NAMES);
        for entry in PROTECTED_AT_ANY_DEPTH.iter().chain(TOP_LEVEL_NAMES) {
            assert!(
                !entry.reason.is_empty() && !entry.name.contains('/'),
                "{entry:?}"
            );
        }
        assert!(
            TOP_LEVEL_NAMES
                .iter()
                .all(|n| !PROTECTED_NAMES.contains(&n.name))
        );
    }
}
