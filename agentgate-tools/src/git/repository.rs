//! Which configuration files git reads for a work tree, found the way git
//! finds them, without running git: `<top>/.git` as a folder, or as a file
//! `gitdir: <path>` (a linked worktree, a submodule); `commondir` in that
//! folder for the shared one; `config` there, and `config.worktree` of the
//! worktree's own folder when `extensions.worktreeConfig` is on; the
//! user's and the system's files, whose relative paths git resolves in
//! the repository too (a global `core.hooksPath = .githooks`).

use std::path::{Path, PathBuf};

use super::config::{Includes, Loaded, load};

/// One repository's configuration, every file read or looked for.
#[derive(Debug, Default)]
pub(crate) struct RepoConfig {
    /// The work tree's top folder (holding `.git`).
    pub(crate) top: PathBuf,
    /// The entries, includes followed (every `includeIf`, whatever its
    /// condition: all git might load).
    pub(crate) loaded: Loaded,
}

/// The repository whose work tree's top is `top`, if `top/.git` exists;
/// `files` receives every file looked at (for the cache).
pub(crate) fn read_repo(
    top: &Path,
    home: Option<&Path>,
    files: &mut Vec<PathBuf>,
) -> Option<RepoConfig> {
    let dot_git = top.join(".git");
    files.push(dot_git.clone());
    let meta = std::fs::metadata(&dot_git).ok()?;
    let git_dir = if meta.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
        top.join(target)
    };
    let commondir_file = git_dir.join("commondir");
    files.push(commondir_file.clone());
    let common = match std::fs::read_to_string(&commondir_file) {
        Ok(text) => git_dir.join(text.trim_end_matches(['\n', '\r'])),
        Err(_) => git_dir.clone(),
    };
    let mut loaded = Loaded::default();
    for global in global_files(home) {
        append(&mut loaded, load(&global, home, Includes::All));
    }
    let shared = load(&common.join("config"), home, Includes::All);
    let per_worktree = shared.entries.iter().any(|(key, value, _)| {
        key == "extensions.worktreeconfig" && value.as_deref().is_none_or(is_true)
    });
    append(&mut loaded, shared);
    if per_worktree {
        append(
            &mut loaded,
            load(&git_dir.join("config.worktree"), home, Includes::All),
        );
    }
    files.extend(loaded.files.iter().cloned());
    Some(RepoConfig {
        top: top.to_path_buf(),
        loaded,
    })
}

fn append(into: &mut Loaded, more: Loaded) {
    into.entries.extend(more.entries);
    into.files.extend(more.files);
    into.errors.extend(more.errors);
}

/// The user's and the system's configuration files git reads before the
/// repository's.
fn global_files(home: Option<&Path>) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("/etc/gitconfig")];
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| home.map(|home| home.join(".config")));
    if let Some(xdg) = xdg {
        files.push(xdg.join("git").join("config"));
    }
    if let Some(home) = home {
        files.push(home.join(".gitconfig"));
    }
    files
}

/// git's booleans that are true (`git_parse_maybe_bool`), or a non-zero
/// number.
pub(crate) fn is_true(value: &str) -> bool {
    let value = value.to_ascii_lowercase();
    matches!(value.as_str(), "true" | "yes" | "on") || value.parse::<i64>().is_ok_and(|n| n != 0)
}

/// Whether `value` is one of git's booleans (either way).
pub(crate) fn is_bool(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    is_true(value) || matches!(lower.as_str(), "false" | "no" | "off" | "" | "0")
}

/// The paths `.gitmodules` at `top` gives its submodules (relative to
/// `top`), the file looked at added to `files`.
pub(crate) fn submodule_paths(top: &Path, files: &mut Vec<PathBuf>) -> Vec<PathBuf> {
    let gitmodules = top.join(".gitmodules");
    files.push(gitmodules.clone());
    let Ok(text) = std::fs::read(&gitmodules) else {
        return Vec::new();
    };
    super::config::parse(&text)
        .entries
        .into_iter()
        .filter(|(key, _)| key.starts_with("submodule.") && key.ends_with(".path"))
        .filter_map(|(_, value)| value)
        .filter(|value| !value.is_empty() && !Path::new(value).is_absolute())
        .map(|value| top.join(value))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_reads_the_shared_config_and_its_own() {
        let dir = agentgate_testing::scratch::scratch_dir("git-repo-worktree");
        let main_git = dir.join("main/.git");
        let own = main_git.join("worktrees/wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::create_dir_all(dir.join("wt")).unwrap();
        std::fs::write(dir.join("wt/.git"), format!("gitdir: {}\n", own.display())).unwrap();
        std::fs::write(own.join("commondir"), "../..\n").unwrap();
        std::fs::write(
            main_git.join("config"),
            "[extensions]\n\tworktreeConfig = true\n[core]\n\teditor = vi\n",
        )
        .unwrap();
        std::fs::write(own.join("config.worktree"), "[core]\n\thooksPath = h\n").unwrap();
        let mut files = Vec::new();
        let repo = read_repo(&dir.join("wt"), None, &mut files).unwrap();
        let keys: Vec<&str> = repo.loaded.entries.iter().map(|e| e.0.as_str()).collect();
        assert!(keys.contains(&"core.editor"), "{keys:?}");
        assert!(keys.contains(&"core.hookspath"), "{keys:?}");
        assert!(files.contains(&own.join("commondir")));
        assert!(read_repo(&dir.join("none"), None, &mut files).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn booleans() {
        for value in ["true", "Yes", "on", "1", "-2"] {
            assert!(is_true(value) && is_bool(value), "{value}");
        }
        for value in ["false", "no", "OFF", "0", ""] {
            assert!(!is_true(value) && is_bool(value), "{value}");
        }
        assert!(!is_bool("./watchman-hook"));
    }
}
