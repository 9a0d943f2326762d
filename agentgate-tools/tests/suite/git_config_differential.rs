//! The git configuration reader against the installed git: on generated
//! files (sections, subsections old and new, key case, spacing, quotes,
//! escapes, continuation lines, comments, empty and missing values, CRLF,
//! and `include.path` chains relative, absolute and `~/`), `load` gives
//! exactly the entries `git config --file X --list --includes -z` prints,
//! and refuses exactly the files git refuses. Skipped where git is not
//! installed (the reader never runs it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use agentgate_tools::git_config::{Includes, load};
use proptest::prelude::*;

fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

const HEADERS: &[&str] = &[
    "[core]",
    "[Core]",
    "  [filter \"lfs\"]",
    "[diff \"Two Words\"]",
    "[merge \"q\\\"x\\\\y\"]",
    "[a.B]",
    "[alias]",
    "[includeIf \"gitdir:/nowhere/\"]",
    "[x-y \"\"]",
    "[ \"no section\"]",
    "[core] inline = 1",
    "[a\t\"tab\"]",
    "[a.b.C \"d\"]",
];
const KEYS: &[&str] = &["hooksPath", "fsmonitor", "clean", "K-2", "editor", "Path"];
const VALUES: &[&str] = &[
    "plain",
    "  lead and trail  ",
    "two\tinner\t\tspaces",
    "\"quoted # not a comment\"",
    "a\"b c\"d",
    "x ; comment",
    "x # comment",
    "esc\\t\\n\\b\\\\\\\"",
    "cont\\\n  inued",
    "\"open \\\n still\"",
    "",
    "!./tools/run --flag=\"a b\"",
    "tab\\",
    "a=b==c",
    "\"\"",
    "mid\"quote\" # c",
    ";only comment",
];
/// Lines git refuses.
const BAD: &[&str] = &[
    "[unterminated",
    "9key = 1",
    "[a]\nk = \"open",
    "[a]\nk = \\q",
    "[a \"b\" ]",
    "[a]\nk v",
];

#[derive(Debug, Clone)]
enum Line {
    Header(&'static str),
    Entry {
        key: &'static str,
        pad: &'static str,
        value: Option<&'static str>,
    },
    Comment(&'static str),
    Blank,
    /// `include.path` to file `n` (only later files: no cycles), written
    /// relative, absolute or from `~/`.
    Include(usize, u8),
    Bad(&'static str),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        3 => prop::sample::select(HEADERS).prop_map(Line::Header),
        6 => (
            prop::sample::select(KEYS),
            prop::sample::select(vec!["", " ", "\t", "  "]),
            prop::option::weighted(0.9, prop::sample::select(VALUES)),
        )
            .prop_map(|(key, pad, value)| Line::Entry { key, pad, value }),
        1 => prop::sample::select(vec!["# c", "; c", "\t# [not] = header"]).prop_map(Line::Comment),
        1 => Just(Line::Blank),
        2 => (0usize..4, 0u8..3).prop_map(|(n, how)| Line::Include(n, how)),
        1 => prop::sample::select(BAD).prop_map(Line::Bad),
    ]
}

fn render(lines: &[Line], index: usize, dir: &Path, crlf: bool) -> String {
    let mut out = String::new();
    for line in lines {
        let text = match line {
            Line::Header(h) => (*h).to_string(),
            Line::Entry { key, pad, value } => match value {
                Some(v) => format!("\t{key}{pad}={pad}{v}"),
                None => format!("\t{key}"),
            },
            Line::Comment(c) => (*c).to_string(),
            Line::Blank => String::new(),
            Line::Include(n, how) if *n > index => {
                let name = format!("c{n}.inc");
                let path = match how {
                    0 => name,
                    1 => dir.join(name).display().to_string(),
                    _ => format!("~/{name}"),
                };
                format!("[include]\n\tpath = {path}")
            }
            Line::Include(..) => "[include]\n\tpath = missing.inc".to_string(),
            Line::Bad(b) => (*b).to_string(),
        };
        out.push_str(&text);
        out.push_str(if crlf { "\r\n" } else { "\n" });
    }
    out
}

type Entries = Vec<(String, Option<String>)>;

/// What git prints (`None`: git refused the file).
fn git_list(file: &Path, home: &Path) -> Option<Entries> {
    let out = Command::new("git")
        .args(["config", "--file"])
        .arg(file)
        .args(["--list", "--includes", "-z"])
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .output()
        .unwrap();
    if !out.status.success() {
        return None;
    }
    let mut entries = Vec::new();
    for record in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let text = String::from_utf8_lossy(record).into_owned();
        match text.split_once('\n') {
            Some((key, value)) => entries.push((key.to_string(), Some(value.to_string()))),
            None => entries.push((text, None)),
        }
    }
    Some(entries)
}

fn scratch() -> PathBuf {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    agentgate_testing::scratch_dir(&format!("git-config-diff-{n}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_reader_lists_what_git_lists(
        files in prop::collection::vec(prop::collection::vec(line(), 0..10), 1..4),
        crlf in any::<bool>(),
    ) {
        if !git_available() {
            eprintln!("git is not installed: the differential is skipped");
            return Ok(());
        }
        let dir = scratch();
        for (i, lines) in files.iter().enumerate() {
            std::fs::write(dir.join(format!("c{i}.inc")), render(lines, i, &dir, crlf)).unwrap();
        }
        let top = dir.join("c0.inc");
        let expected = git_list(&top, &dir);
        let loaded = load(&top, Some(&dir), Includes::Unconditional);
        let ours: Entries = loaded.entries.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
        match expected {
            Some(expected) => {
                prop_assert!(loaded.errors.is_empty(), "git read it; we refused: {:?}\n{}", loaded.errors, std::fs::read_to_string(&top).unwrap());
                prop_assert_eq!(ours, expected);
            }
            None => prop_assert!(!loaded.errors.is_empty(), "git refused it; we read {:?}", ours),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Where git itself says it runs hooks from (`git rev-parse --git-path hooks`).
fn git_hooks_dir(dir: &Path) -> PathBuf {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--path-format=absolute", "--git-path", "hooks"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Repositories as git makes them: a husky-style `core.hooksPath`, a linked
/// worktree whose own `config.worktree` (with `extensions.worktreeConfig`)
/// names its hooks, and a submodule (`.git` a file, its configuration
/// under the superproject's `.git/modules`): the derived set holds the
/// hooks folder git itself reports for each.
#[test]
fn the_hooks_folder_git_reports_is_derived_for_worktrees_and_submodules() {
    if !git_available() {
        eprintln!("git is not installed: skipped");
        return;
    }
    let root = scratch();
    let main = root.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["config", "core.hooksPath", ".husky"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-qm", "a"]);
    let derived = |dir: &Path| -> Vec<PathBuf> {
        agentgate_tools::git_protected(dir, dir)
            .iter()
            .map(|p| p.path.clone())
            .collect()
    };
    assert_eq!(git_hooks_dir(&main), main.join(".husky"));
    assert!(
        derived(&main).contains(&main.join(".husky")),
        "{:?}",
        derived(&main)
    );

    let linked = root.join("linked");
    git(&main, &["worktree", "add", "-q", linked.to_str().unwrap()]);
    git(&main, &["config", "extensions.worktreeConfig", "true"]);
    git(
        &linked,
        &["config", "--worktree", "core.hooksPath", "wt-hooks"],
    );
    assert_eq!(git_hooks_dir(&linked), linked.join("wt-hooks"));
    assert!(
        derived(&linked).contains(&linked.join("wt-hooks")),
        "{:?}",
        derived(&linked)
    );

    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    std::fs::write(lib.join("l.txt"), "l\n").unwrap();
    git(&lib, &["add", "l.txt"]);
    git(&lib, &["commit", "-qm", "l"]);
    git(
        &main,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.to_str().unwrap(),
            "vendor/lib",
        ],
    );
    let sub = main.join("vendor/lib");
    git(&sub, &["config", "core.hooksPath", "sub-hooks"]);
    assert_eq!(git_hooks_dir(&sub), sub.join("sub-hooks"));
    assert!(
        derived(&main).contains(&sub.join("sub-hooks")),
        "{:?}",
        derived(&main)
    );
    let _ = std::fs::remove_dir_all(&root);
}
