//! Instruction files (§15, item 3): the global one, the project's
//! `AGENTS.md` / `CLAUDE.md` / `CONTEXT.md`, and the configured
//! `instructions` entries, each read as `Instructions from: <path>` and its
//! content.

use std::path::{Path, PathBuf};

/// The project file names, in order of preference: the first name found
/// walking up from the directory to the worktree wins, and every file of
/// that name on the way is used.
pub const PROJECT_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];

/// The instruction files for a session in `directory` under `worktree`,
/// in order: the global file (the first existing of
/// `<global_dir>/AGENTS.md` and `<home>/.claude/CLAUDE.md`), the project
/// files (nearest first), then `configured` entries — paths or globs,
/// relative to `directory` unless absolute, `~/` meaning `home`. Each
/// file once.
pub fn instruction_files(
    directory: &Path,
    worktree: &Path,
    global_dir: Option<&Path>,
    home: Option<&Path>,
    configured: &[String],
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let global = [
        global_dir.map(|d| d.join("AGENTS.md")),
        home.map(|h| h.join(".claude").join("CLAUDE.md")),
    ];
    if let Some(found) = global.into_iter().flatten().find(|p| p.is_file()) {
        files.push(found);
    }
    let walk: Vec<&Path> = directory
        .ancestors()
        .take_while(|dir| dir.starts_with(worktree))
        .collect();
    for name in PROJECT_FILES {
        let found: Vec<PathBuf> = walk
            .iter()
            .map(|dir| dir.join(name))
            .filter(|p| p.is_file())
            .collect();
        if !found.is_empty() {
            files.extend(found);
            break;
        }
    }
    for entry in configured {
        let expanded = match (entry.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(entry),
        };
        let path = if expanded.is_absolute() {
            expanded
        } else {
            directory.join(expanded)
        };
        files.extend(expand_glob(&path));
    }
    let mut seen = Vec::new();
    files.retain(|f| {
        let key = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    files
}

/// The files a path or glob names (`*`, `?`, `[...]`, `{a,b}` in any
/// component after the first wildcard-free prefix), sorted.
fn expand_glob(path: &Path) -> Vec<PathBuf> {
    let text = path.to_string_lossy();
    if !text.contains(['*', '?', '[', '{']) {
        return if path.is_file() {
            vec![path.to_path_buf()]
        } else {
            tracing::warn!(path = %path.display(), "configured instruction file not found");
            Vec::new()
        };
    }
    let base: PathBuf = path
        .components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect();
    let Ok(glob) = globset::GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
    else {
        tracing::warn!(pattern = %text, "invalid instructions glob");
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![(base, 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if depth < 16 {
                    stack.push((path, depth + 1));
                }
            } else if glob.is_match(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Reads `files` into prompt sections: `Instructions from: <path>` and the
/// content. Unreadable files are skipped with a warning.
pub fn read_instructions(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|path| match crate::bounded_read::read_text(path) {
            Ok(text) => Some(format!("Instructions from: {}\n{text}", path.display())),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read instruction file");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "agentgate-core-instr-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn first_name_wins_and_every_file_of_it_counts() {
        let root = scratch("walk");
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root").unwrap();
        std::fs::write(root.join("a/AGENTS.md"), "a").unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "claude").unwrap();
        std::fs::create_dir_all(root.join("rules")).unwrap();
        std::fs::write(root.join("rules/x.md"), "x").unwrap();
        std::fs::write(root.join("rules/y.txt"), "y").unwrap();
        let global = root.join("global");
        std::fs::create_dir_all(&global).unwrap();
        std::fs::write(global.join("AGENTS.md"), "global").unwrap();
        let files = instruction_files(
            &sub,
            &root,
            Some(&global),
            None,
            &["../../rules/*.md".to_string()],
        );
        let names: Vec<String> = files
            .iter()
            .map(|f| {
                f.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(
            names,
            [
                "global/AGENTS.md",
                "a/AGENTS.md",
                "AGENTS.md",
                "a/b/../../rules/x.md"
            ]
        );
        let sections = read_instructions(&files);
        assert!(sections[1].starts_with("Instructions from: ") && sections[1].ends_with("\na"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
