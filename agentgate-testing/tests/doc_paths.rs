//! Every repository path the documentation names exists.
//!
//! README.md and docs/*.md name files in backticks (`docs/sandbox.md`,
//! `agentgate-tools/src/shell/programs.rs`, `tests/data/ordinary-commands.json` of a
//! crate, `bash_scan.rs`) and link to them; when a file moves, the text goes
//! stale silently. This test reads those names and fails naming each one
//! that leads nowhere. docs/reference/ is left out: it describes opencode's
//! own source tree, not this repository.

use std::path::{Path, PathBuf};

/// Text in backticks that looks like a path but is an example in prose,
/// not a file of this repository.
const NOT_PATHS: &[&str] = &[
    // docs/permissions.md: what `src/*` matches.
    "src/a/b.rs",
];

/// Names known to be stale in a document another change rewrites (none
/// now): an entry here is excused, not checked; remove it once that
/// document is fixed.
const PENDING: &[(&str, &str)] = &[];

/// File endings of source and data a bare or partial name is looked up by.
/// Markdown and JSON are not among them: the docs name users' files
/// (`opencode.json`, `agents/team/review.md`) the same way.
const SOURCE_ENDINGS: &[&str] = &[".rs", ".sh", ".py", ".sse"];

/// Top-level folders that are not part of the sources.
const NOT_SOURCES: &[&str] = &["target", ".git", "node_modules"];

fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .unwrap_or(manifest)
        .canonicalize()
        .unwrap_or_else(|e| panic!("repository root: {e}"))
}

/// README.md and docs/*.md, relative to the root, sorted.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![PathBuf::from("README.md")];
    let entries = std::fs::read_dir(root.join("docs")).unwrap_or_else(|e| panic!("docs/: {e}"));
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "md"))
        .filter_map(|path| Some(Path::new("docs").join(path.file_name()?)))
        .collect();
    found.sort();
    docs.extend(found);
    docs
}

/// Every file and folder below `dir`, relative to `root`, with `/`
/// separators, skipping build output and VCS data.
fn tree(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if NOT_SOURCES.iter().any(|n| name == *n) {
            continue;
        }
        if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            tree(root, &path, out);
        }
    }
}

/// What a document names, with the line it is on.
#[derive(Debug, PartialEq)]
enum Mention {
    /// Text in backticks.
    Code(usize, String),
    /// The target of a markdown link.
    Link(usize, String),
}

/// The code spans and link targets outside fenced code blocks.
fn mentions(text: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Between the first and second backtick, the third and fourth, …
        let mut prose = String::new();
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                found.push(Mention::Code(line_no, piece.to_string()));
            } else {
                prose.push_str(piece);
                prose.push(' ');
            }
        }
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or_default();
            found.push(Mention::Link(line_no, target.to_string()));
            rest = &rest[end..];
        }
    }
    found
}

/// A code span as a path to check, or `None` when it is not one: text
/// with other characters than a path's, absolute paths, home and working
/// directory relative ones. A `:line` suffix is dropped.
fn path_text(code: &str) -> Option<&str> {
    let code = match code.rsplit_once(':') {
        Some((path, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => path,
        _ => code,
    };
    let path_chars = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    let looks_like_path = !code.is_empty()
        && code.chars().all(path_chars)
        && !code.starts_with(['/', '-'])
        && !code.starts_with("./")
        && !code.contains("//")
        && !code.contains("..");
    let exempt = NOT_PATHS.contains(&code);
    (looks_like_path && !exempt).then_some(code)
}

/// Whether a named path exists, or `None` when the name is not one this
/// test can place in the repository (a model id like `openai/gpt-5`, a
/// user's `opencode.json`).
fn exists(root: &Path, files: &[String], crates: &[PathBuf], path: &str) -> Option<bool> {
    let trimmed = path.trim_end_matches('/');
    let first = trimmed.split('/').next().unwrap_or_default();
    let is_source = SOURCE_ENDINGS.iter().any(|e| trimmed.ends_with(e));
    if trimmed.contains('/') && !NOT_SOURCES.contains(&first) && root.join(first).exists() {
        // From the root: `docs/sandbox.md`, `agentgate-tools/src/shell/programs.rs`.
        Some(root.join(trimmed).exists())
    } else if first == "src" || first == "tests" {
        // Relative to a crate: `tests/data/ordinary-commands.json`.
        Some(crates.iter().any(|c| c.join(trimmed).exists()))
    } else if is_source {
        // A file by its name or its last folders: `bash_scan.rs`,
        // `sandbox/handles.rs`.
        let suffix = format!("/{trimmed}");
        Some(files.iter().any(|f| f == trimmed || f.ends_with(&suffix)))
    } else {
        None
    }
}

/// The folders of the root holding a Cargo.toml: the workspace's crates
/// (and the fuzz crate).
fn crates(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .collect()
}

/// Each stale name as `doc:line: what`.
fn stale(root: &Path) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    tree(root, root, &mut files);
    let crates = crates(root);
    let (mut stale, mut checked) = (Vec::new(), 0);
    for doc in documents(root) {
        let text = std::fs::read_to_string(root.join(&doc))
            .unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let doc_name = doc.to_string_lossy().replace('\\', "/");
        let folder = doc.parent().map(Path::to_path_buf).unwrap_or_default();
        for mention in mentions(&text) {
            let (line, found, name) = match &mention {
                Mention::Code(line, code) => {
                    let Some(path) = path_text(code) else {
                        continue;
                    };
                    let Some(found) = exists(root, &files, &crates, path) else {
                        continue;
                    };
                    (*line, found, path.to_string())
                }
                Mention::Link(line, target) => {
                    let local =
                        !target.is_empty() && !target.starts_with('#') && !target.contains(':');
                    if !local {
                        continue;
                    }
                    let path = target.split('#').next().unwrap_or_default();
                    (
                        *line,
                        root.join(&folder).join(path).exists(),
                        path.to_string(),
                    )
                }
            };
            if PENDING.contains(&(doc_name.as_str(), name.as_str())) {
                continue;
            }
            checked += 1;
            if !found {
                stale.push(format!("{doc_name}:{line}: `{name}` does not exist"));
            }
        }
    }
    (stale, checked)
}

#[test]
fn every_path_the_docs_name_exists() {
    let (stale, checked) = stale(&root());
    assert!(
        stale.is_empty(),
        "stale paths in the docs (fix the text, or the file moved):\n{}",
        stale.join("\n")
    );
    println!("{checked} paths named by the docs exist");
    // The docs name dozens of files; finding few means the scan broke.
    assert!(checked >= 50, "only {checked} paths checked");
}

#[test]
fn code_spans_and_links_are_found_outside_code_blocks() {
    let text =
        "See `docs/a.md` and [b](docs/b.md#part \"title\").\n```\n`not/this.rs`\n```\n[c](../c.md)";
    assert_eq!(
        mentions(text),
        [
            Mention::Code(1, "docs/a.md".into()),
            Mention::Link(1, "docs/b.md#part".into()),
            Mention::Link(5, "../c.md".into()),
        ]
    );
}

#[test]
fn only_repository_names_are_checked() {
    assert_eq!(path_text("paths.rs:130"), Some("paths.rs"));
    assert_eq!(path_text(".ci/run"), Some(".ci/run"));
    for not_a_path in [
        "/proc",
        "~/.ssh",
        "./build.sh",
        "../x.rs",
        "src/*.rs",
        "git status",
        "a//b",
    ] {
        assert_eq!(path_text(not_a_path), None, "{not_a_path}");
    }
    let root = root();
    let mut files = Vec::new();
    tree(&root, &root, &mut files);
    let crates = crates(&root);
    let check = |path| exists(&root, &files, &crates, path);
    assert_eq!(check("docs/sandbox.md"), Some(true));
    assert_eq!(check("docs/no-such.md"), Some(false));
    assert_eq!(check("tests/data/ordinary-commands.json"), Some(true));
    assert_eq!(check("tests/data/no-such.json"), Some(false));
    assert_eq!(check("programs.rs"), Some(true));
    assert_eq!(check("no_such_module.rs"), Some(false));
    // A model id and a user's config file are not repository paths.
    assert_eq!(check("openai/gpt-5"), None);
    assert_eq!(check("opencode.json"), None);
}
