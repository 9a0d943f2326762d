//! The `read` rules bind bash arguments: every literal
//! argument of every command ([`BashScan::arguments`]) that names a file
//! a `read` rule denies or asks makes the call ask `read` for that file
//! exactly as the read tool would (same permission, same patterns,
//! `always: ["*"]`), before anything runs: the deny rule then denies the
//! call, the ask rule asks. Files no `read` rule names (or that one
//! allows) ask nothing, so ordinary commands are not asked more.
//!
//! An argument names a file when, resolved like the file tools resolve
//! paths (against the command's directory, `~` from `$HOME`, `..` folded),
//! or as the kernel will open it (symlinks and `..` resolved physically),
//! it exists. Also looked at: the value of `--opt=value` and `name=value`
//! words, a leading `@` (`curl -d @.env`), glob words expanded against the
//! file system as bash would (a leading `.` is matched only by a pattern
//! starting with `.`, unless the line mentions `dotglob` or `GLOBIGNORE`;
//! `**` is always taken as recursive), and each argument against every
//! directory another argument names (so `cd sub; cat prod.env` judges
//! `sub/prod.env`). Files only named at run time (`$F`, a pipe into
//! `xargs`, a program that walks a folder) are not known here: see
//! docs/security.md, "read rules and bash".

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::file_requests;
use crate::search::read_rules::ReadRules;
use crate::shell::bash_scan::BashScan;

/// File system look-ups (directory entries a glob examines, paths an
/// argument resolves to) one line may make at most; beyond it the call is
/// refused, never judged on part of its files.
pub(crate) const MAX_GLOB_ENTRIES: usize = 100_000;
/// Deepest folder a `**` descends to.
const MAX_GLOB_DEPTH: usize = 16;

/// The line would need more than [`MAX_GLOB_ENTRIES`] look-ups: the files
/// it names cannot all be checked, so the call is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooManyEntries;

/// How bash expands globs on this line.
#[derive(Debug, Clone, Copy)]
struct GlobOptions {
    /// A leading `.` may be matched by `*`, `?` and `[…]`.
    dotglob: bool,
    /// Case-insensitive matching.
    nocase: bool,
}

/// The `read` requests for the files the arguments of `scan` name that a
/// rule of `rules` denies or asks, in first-seen order, without duplicates.
pub(crate) fn read_requests(
    scan: &BashScan,
    command: &str,
    cwd: &Path,
    directory: &Path,
    worktree: &Path,
    rules: &ReadRules,
) -> Result<Vec<ToolRequest>, TooManyEntries> {
    let options = GlobOptions {
        dotglob: command.contains("dotglob") || command.contains("GLOBIGNORE"),
        nocase: command.contains("nocaseglob"),
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let words: Vec<String> = scan
        .arguments
        .iter()
        .flat_map(|argument| candidates(argument, home.as_deref()))
        .collect();
    let mut budget = MAX_GLOB_ENTRIES;
    let bases = bases(&words, cwd, &mut budget)?;
    let mut requests: Vec<ToolRequest> = Vec::new();
    for word in &words {
        for base in &bases {
            for file in named_files(base, word, options, &mut budget)? {
                for judged in [file.clone(), physical(&file)] {
                    if !rules.restricts(&judged) {
                        continue;
                    }
                    let is_dir = judged.is_dir();
                    for request in file_requests("read", &judged, is_dir, directory, worktree)
                        .into_iter()
                        .filter(|request| request.permission == "read")
                    {
                        if !requests.iter().any(|r| r.patterns == request.patterns) {
                            requests.push(request.with_metadata(serde_json::json!({
                                "command": command,
                                "argument": word,
                                "filePath": judged.display().to_string(),
                            })));
                        }
                    }
                }
            }
        }
    }
    Ok(requests)
}

/// The texts of one argument that may name a file: itself, the value of
/// `name=value`, each without a leading `@`, with `~/` expanded.
fn candidates(argument: &str, home: Option<&Path>) -> Vec<String> {
    let mut texts = vec![argument.to_string()];
    if let Some((_, value)) = argument.split_once('=') {
        texts.push(value.to_string());
    }
    let mut out: Vec<String> = Vec::new();
    for text in texts {
        let bare = text.strip_prefix('@').unwrap_or(&text).to_string();
        for text in [text.clone(), bare] {
            let expanded = match (text.as_str(), home) {
                ("~", Some(home)) => home.display().to_string(),
                (rest, Some(home)) if rest.starts_with("~/") => {
                    home.join(&rest[2..]).display().to_string()
                }
                _ => text,
            };
            if !expanded.is_empty() && !out.contains(&expanded) {
                out.push(expanded);
            }
        }
    }
    out
}

/// The command's directory, then every existing directory a word names
/// (against it, then against those: `cd a; cd b`).
fn bases(words: &[String], cwd: &Path, budget: &mut usize) -> Result<Vec<PathBuf>, TooManyEntries> {
    let mut bases = vec![cwd.to_path_buf()];
    for _ in 0..2 {
        for word in words.iter().filter(|w| !has_glob(w)) {
            for base in bases.clone() {
                *budget = budget.checked_sub(1).ok_or(TooManyEntries)?;
                let dir = paths::resolve(&base, Path::new(word));
                if dir.is_dir() && !bases.contains(&dir) {
                    bases.push(dir);
                }
            }
        }
    }
    Ok(bases)
}

/// Where the kernel opens `path` (symlinks and `..` resolved physically),
/// or `path` itself when it does not exist.
fn physical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The existing files `word` names from `base`: itself, or what it
/// matches as a glob.
fn named_files(
    base: &Path,
    word: &str,
    options: GlobOptions,
    budget: &mut usize,
) -> Result<Vec<PathBuf>, TooManyEntries> {
    if !has_glob(word) {
        *budget = budget.checked_sub(1).ok_or(TooManyEntries)?;
        // Both the lexical form (as the file tools resolve) and the
        // physical one (`sub/../x` with `sub` a symlink) are judged.
        let lexical = paths::resolve(base, Path::new(word));
        let mut found = Vec::new();
        if std::fs::symlink_metadata(&lexical).is_ok() {
            found.push(lexical);
        }
        if let Ok(real) = std::fs::canonicalize(base.join(word))
            && !found.contains(&real)
        {
            found.push(real);
        }
        return Ok(found);
    }
    let (start, rest) = match word.strip_prefix('/') {
        Some(rest) => (PathBuf::from("/"), rest),
        None => (base.to_path_buf(), word),
    };
    let mut current = vec![start];
    let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
    for (at, component) in components.iter().copied().enumerate() {
        let mut next = Vec::new();
        if component == "**" {
            for dir in &current {
                descend(dir, 0, &mut next, budget)?;
            }
            // Last, `**` names files too: every entry of those folders
            // (`*` without globstar, every file beneath with it).
            if at + 1 == components.len() {
                let folders = std::mem::take(&mut next);
                for dir in &folders {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    for entry in entries.flatten() {
                        *budget = budget.checked_sub(1).ok_or(TooManyEntries)?;
                        let name = entry.file_name();
                        if options.dotglob || !name.to_string_lossy().starts_with('.') {
                            next.push(dir.join(name));
                        }
                    }
                }
                next.extend(folders);
            }
        } else if !has_glob(component) {
            next = current.iter().map(|dir| dir.join(component)).collect();
        } else {
            let matcher = component_matcher(component, options);
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    *budget = budget.checked_sub(1).ok_or(TooManyEntries)?;
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    let dot_ok = options.dotglob || component.starts_with('.');
                    if name.starts_with('.') && !dot_ok {
                        continue;
                    }
                    if matcher.as_ref().is_none_or(|m| m.is_match(name.as_ref())) {
                        next.push(dir.join(name.as_ref()));
                    }
                }
            }
        }
        current = next;
    }
    Ok(current
        .into_iter()
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .map(|path| paths::normalize(&path))
        .collect())
}

/// `dir` and every folder under it (not through symlinks), for `**`.
fn descend(
    dir: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    budget: &mut usize,
) -> Result<(), TooManyEntries> {
    // A file where the word names a folder (`.env/**`) matches nothing:
    // bash only descends into folders (symlinked ones included).
    if !dir.is_dir() {
        return Ok(());
    }
    out.push(dir.to_path_buf());
    if depth >= MAX_GLOB_DEPTH {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        *budget = budget.checked_sub(1).ok_or(TooManyEntries)?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            descend(&entry.path(), depth + 1, out, budget)?;
        }
    }
    Ok(())
}

/// A matcher for one glob component; `None` (match every name, dot files
/// included by the caller's rule) when the component uses syntax globset
/// does not read as bash does (extended globs, alternation).
fn component_matcher(component: &str, options: GlobOptions) -> Option<GlobMatcher> {
    if component.contains(['(', '{', '\\']) {
        return None;
    }
    GlobBuilder::new(component)
        .literal_separator(true)
        .case_insensitive(options.nocase)
        .build()
        .ok()
        .map(|glob| glob.compile_matcher())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn names(base: &Path, word: &str, dotglob: bool) -> Vec<String> {
        let options = GlobOptions {
            dotglob,
            nocase: false,
        };
        let mut budget = MAX_GLOB_ENTRIES;
        let mut found: Vec<String> = named_files(base, word, options, &mut budget)
            .unwrap()
            .iter()
            .map(|p| paths::relative(base, p))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn globs_expand_as_bash_does() {
        let dir =
            std::env::temp_dir().join(format!("agentgate-tools-read-args-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub/deep")).unwrap();
        for file in [".env", "a.txt", "sub/prod.env", "sub/deep/.env"] {
            std::fs::write(dir.join(file), "").unwrap();
        }
        let dir = dir.canonicalize().unwrap();
        assert_eq!(names(&dir, "*", false), ["a.txt", "sub"]);
        assert_eq!(names(&dir, "*", true), [".env", "a.txt", "sub"]);
        assert_eq!(names(&dir, ".en*", false), [".env"]);
        assert_eq!(names(&dir, "?env", false), Vec::<String>::new());
        assert_eq!(names(&dir, "s*/*.env", false), ["sub/prod.env"]);
        assert_eq!(names(&dir, "**/.env", false), [".env", "sub/deep/.env"]);
        assert_eq!(names(&dir, "sub/../.env", false), [".env"]);
        // A file is no folder to descend into: bash expands these to nothing.
        assert_eq!(names(&dir, ".env/**", false), Vec::<String>::new());
        assert_eq!(names(&dir, "a.txt/**/x", false), Vec::<String>::new());
        let mut budget = 2;
        let options = GlobOptions {
            dotglob: false,
            nocase: false,
        };
        assert_eq!(
            named_files(&dir, "*", options, &mut budget),
            Err(TooManyEntries)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn option_values_and_at_files_are_candidates() {
        assert_eq!(
            candidates("--data=@.env", None),
            ["--data=@.env", "@.env", ".env"]
        );
        assert_eq!(candidates("~/x", Some(Path::new("/home/u"))), ["/home/u/x"]);
    }
}
