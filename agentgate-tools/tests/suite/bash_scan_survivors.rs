//! Tests for the mutants of `bash_scan.rs` and `external.rs` that survived
//! `scripts/mutation.sh tools` (the list and each mutant's fate are in
//! `docs/mutation-testing.md`). Each test pins
//! behaviour no other test checked, and each was seen failing under its
//! mutant.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recording_context, temp_dir};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentgate_core::ToolContext;
use agentgate_permission::{PermissionError, PermissionRequest};
use agentgate_tools::bash_scan::{
    BASH_OPAQUE, MAX_NESTING, ScanError, plan_requests, scan, shell_c_script,
};
use agentgate_tools::{EXTERNAL_DIRECTORY, ToolRequest, ask_external_directory, file_requests};

/// A project path that does not exist: nothing in it is a symlink, and
/// every path outside it is outside the project.
const PROJECT: &str = "/nonexistent/proj";

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The `external_directory` patterns of a plan (empty when it asks none).
fn external_patterns(requests: &[ToolRequest]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.permission == EXTERNAL_DIRECTORY)
        .flat_map(|r| r.patterns.clone())
        .collect()
}

fn plan(command: &str, directory: &Path) -> Vec<ToolRequest> {
    plan_requests(command, None, directory, directory).unwrap()
}

// ---------------------------------------------------------------------
// Nesting limits: exactly MAX_NESTING levels are scanned, one more is
// refused, for each way a line nests another.
// ---------------------------------------------------------------------

fn substitutions(levels: usize) -> String {
    format!("{}ls{}", "echo $(".repeat(levels), ")".repeat(levels))
}

fn evals(levels: usize) -> String {
    format!("{}ls", "eval ".repeat(levels))
}

/// `bash <<D0` whose heredoc is `bash <<D1` … down to `ls`.
fn heredocs(levels: usize) -> String {
    let mut line = String::new();
    for level in 0..levels {
        line += &format!("bash <<D{level}\n");
    }
    line += "ls\n";
    for level in (0..levels).rev() {
        line += &format!("D{level}\n");
    }
    line
}

fn assert_scanned(line: &str, what: &str) {
    match scan(line) {
        Ok(scanned) => assert!(
            scanned.patterns.contains(&"ls".to_string()),
            "{what}: the innermost command is missing: {:?}",
            scanned.patterns
        ),
        Err(error) => panic!("{what}: refused: {error}"),
    }
}

fn assert_refused(line: &str, what: &str) {
    assert!(
        matches!(scan(line), Err(ScanError::TooComplex)),
        "{what}: scanned, but it nests deeper than MAX_NESTING"
    );
}

#[test]
fn substitutions_exactly_max_nesting_deep_are_scanned() {
    assert_scanned(&substitutions(MAX_NESTING), "32 nested $( )");
    assert_refused(&substitutions(MAX_NESTING + 1), "33 nested $( )");
}

#[test]
fn eval_scripts_nest_up_to_max_nesting() {
    assert_scanned(&evals(MAX_NESTING), "eval nested 32 times");
    assert_refused(&evals(MAX_NESTING + 1), "eval nested 33 times");
}

#[test]
fn heredoc_scripts_nest_up_to_max_nesting() {
    assert_scanned(&heredocs(MAX_NESTING), "heredocs nested 32 deep");
    assert_refused(&heredocs(MAX_NESTING + 1), "heredocs nested 33 deep");
}

/// A backtick nested in a backtick is scanned again once unescaped: the
/// substitution is one level and the re-scanned text inside it another,
/// as for `bash -c` (the inner backtick is then a third). Inside 29
/// levels of `$( )` that is 32 levels; inside 30 it is one too many.
#[test]
fn backticks_in_backticks_count_towards_max_nesting() {
    let line = |levels: usize| {
        format!(
            "{}echo `echo \\`ls\\``{}",
            "echo $(".repeat(levels),
            ")".repeat(levels)
        )
    };
    assert_scanned(&line(MAX_NESTING - 3), "backticks inside 29 $( )");
    assert_refused(&line(MAX_NESTING - 2), "backticks inside 30 $( )");
}

// ---------------------------------------------------------------------
// Which nodes are commands.
// ---------------------------------------------------------------------

/// A compound statement with a redirection asks for the commands in it,
/// as opencode does (the redirected `{ …; }` is not a command itself); the
/// redirection target is a path.
#[test]
fn a_redirected_compound_statement_asks_for_its_commands() {
    for line in ["{ ls; } > out", "(ls) > out", "if true; then ls; fi > out"] {
        let scanned = scan(line).unwrap();
        let expected: &[&str] = if line.starts_with("if") {
            &["true", "ls"]
        } else {
            &["ls"]
        };
        assert_eq!(scanned.patterns, strings(expected), "{line:?}");
        assert_eq!(scanned.path_args, ["out"], "{line:?}");
    }
}

/// Assignments alone run nothing: no bash request. A substitution in an
/// assignment still runs, and is asked for.
#[test]
fn assignments_alone_ask_nothing() {
    assert!(scan("A=1 B=2").unwrap().patterns.is_empty());
    assert!(plan("A=1 B=2", Path::new(PROJECT)).is_empty());
    assert_eq!(scan("A=$(rm -f x) B=2").unwrap().patterns, ["rm -f x"]);
}

/// A command without words and without a file redirection has no
/// effect and asks nothing, also when tree-sitter recovers one from a
/// broken line (`A=1 <<< x`: assignments and a here-string); the whole
/// line is still a pattern.
#[test]
fn a_recovered_command_without_words_or_file_redirect_asks_nothing() {
    for (line, part) in [
        ("ls; A=1 <<< x", "A=1 <<< x"),
        ("echo $(A=1 <<< x)", "A=1 <<< x"),
        ("ls; A=1 <<< $(id)", "A=1 <<< $(id)"),
    ] {
        let scanned = scan(line).unwrap();
        assert!(scanned.syntax_error, "{line:?}");
        assert!(
            scanned.patterns.contains(&line.to_string()),
            "{line:?}: {:?}",
            scanned.patterns
        );
        assert!(
            !scanned.patterns.contains(&part.to_string()),
            "{line:?}: {:?}",
            scanned.patterns
        );
    }
}

/// A redirection on a statement that holds no command (assignments,
/// `[[ ]]`, `(( ))`, a declaration, `cd`) still creates or truncates its
/// target, so the statement is a pattern (found by these tests: without
/// one the line asked nothing and ran even under `"bash": {"*": "deny"}`,
/// `A=1 B=2 > src/main.rs` emptied a project file unasked).
#[test]
fn a_redirect_on_a_statement_without_a_command_is_asked_for() {
    let unasked: Vec<&str> = [
        "A=1 B=2 > victim",
        "A=1 B=2 2> victim",
        "cd . > victim",
        "cd > victim",
        "export A=1 > victim",
        "declare A > victim",
        "readonly A=1 > victim",
        "unset X > victim",
        "[[ -n x ]] > victim",
        "[ -n x ] > victim",
        "(( 1 )) > victim",
        "{ A=1; } > victim",
    ]
    .into_iter()
    .filter(|line| {
        !plan(line, Path::new(PROJECT))
            .iter()
            .any(|r| r.permission == "bash" || r.permission == BASH_OPAQUE)
    })
    .collect();
    assert!(
        unasked.is_empty(),
        "no bash permission asked for {unasked:?}"
    );
}

/// A first word that is empty after quote removal (`""`, `''`,
/// `{'',x}`) is a command bash cannot find; the scanner still asks for
/// the words after it as a command, so a mistake in telling kept empty
/// words from dropped ones (`{,}` is dropped) cannot hide a program.
#[test]
fn the_words_after_an_empty_command_name_are_asked_for() {
    for line in ["\"\" rm -f x", "'' rm -f x", "{'',rm} -f x"] {
        let scanned = scan(line).unwrap();
        assert!(
            scanned.patterns.contains(&"rm -f x".to_string()),
            "{line:?}: {:?}",
            scanned.patterns
        );
    }
    // Dropped by bash, so the program is `rm`.
    let scanned = scan("A=1 {,} rm -f x").unwrap();
    assert!(scanned.patterns.contains(&"rm -f x".to_string()));
}

// ---------------------------------------------------------------------
// Redirection targets.
// ---------------------------------------------------------------------

/// `>& FILE` (without a number or `-`) sends output to a file: the file
/// is a path, and outside the project it is asked for.
#[test]
fn a_duplicating_redirect_to_a_file_is_a_path() {
    let scanned = scan("echo x >& /nonexistent/out/f").unwrap();
    assert_eq!(scanned.path_args, ["/nonexistent/out/f"]);
    let requests = plan("ls >& /nonexistent/out/f", Path::new(PROJECT));
    assert_eq!(external_patterns(&requests), ["/nonexistent/out/*"]);
    // A duplicated descriptor or a close is not a path.
    for line in ["echo x >& 2", "echo x 2>&1", "echo x 2>&-", "cat <&0"] {
        assert!(scan(line).unwrap().path_args.is_empty(), "{line:?}");
    }
}

/// `> 5` and `> -` (without `&`) write to files named `5` and `-`; when
/// such a name is a symlink out of the project, the write is asked for.
#[cfg(unix)]
#[test]
fn a_plain_redirect_to_a_number_or_dash_is_a_path() {
    for name in ["5", "-"] {
        let root = temp_dir("survivors", "redirect");
        let project = root.join("proj");
        let out = root.join("out");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("target"), "kept").unwrap();
        std::os::unix::fs::symlink(out.join("target"), project.join(name)).unwrap();

        let line = format!("echo x > {name}");
        assert_eq!(scan(&line).unwrap().path_args, [name]);
        let requests = plan(&line, &project);
        assert_eq!(
            external_patterns(&requests),
            [format!("{}/*", out.display())],
            "{line:?}: {requests:?}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}

/// A symlink in the project whose target does not exist yet: bash's
/// `> link` creates the target, outside the project, so the target's
/// folder is asked for (found by these tests, fixed in `paths::real_path`).
#[cfg(unix)]
#[test]
fn a_redirect_through_a_dangling_symlink_is_asked_for() {
    let root = temp_dir("survivors", "dangling");
    let project = root.join("proj");
    let out = root.join("out");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(out.join("new"), project.join("link")).unwrap();
    let requests = plan("echo x > link", &project);
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(
        external_patterns(&requests),
        [format!("{}/*", out.display())],
        "{requests:?}"
    );
}

// ---------------------------------------------------------------------
// The lexical split after a syntax error: which leading words are
// assignments.
// ---------------------------------------------------------------------

/// tree-sitter stops at the quoted heredoc delimiter, so the last line is
/// only seen by the lexical split; bash runs it.
const BROKEN_PREFIX: &str = "cat <<E''OF\nhi\nEOF\n";

fn lexical_patterns(last_line: &str) -> Vec<String> {
    let scanned = scan(&format!("{BROKEN_PREFIX}{last_line}")).unwrap();
    assert!(scanned.syntax_error, "{last_line:?}");
    scanned.patterns
}

/// `NAME=value` words before the command are dropped, `NAME` being a
/// shell identifier (letters, digits, `_`, not starting with a digit);
/// so are `NAME+=value` and `NAME[i]=value`, which bash also takes as
/// assignments (found by these tests: they were not dropped, and a
/// `"rm *": "deny"` rule became an ask through `bash_opaque`).
#[test]
fn leading_assignments_are_dropped_in_the_lexical_split() {
    for last in [
        "MY_VAR=1 rm -f x",
        "_A=1 B2=2 rm -f x",
        "A+=1 rm -f x",
        "A[0]=1 rm -f x",
    ] {
        let patterns = lexical_patterns(last);
        assert!(
            patterns.contains(&"rm -f x".to_string()),
            "{last:?}: {patterns:?}"
        );
    }
}

/// A word that is not an assignment is the command bash runs (and fails
/// to find): `1X=1`, `=x`, `a-b=1` are not dropped.
#[test]
fn words_that_are_not_assignments_stay_in_the_lexical_split() {
    for last in ["1X=1 rm -f x", "=x rm -f x", "a-b=1 rm -f x"] {
        let patterns = lexical_patterns(last);
        assert!(
            patterns.contains(&last.to_string()),
            "{last:?}: {patterns:?}"
        );
        assert!(
            !patterns.contains(&"rm -f x".to_string()),
            "{last:?}: {patterns:?}"
        );
    }
}

// ---------------------------------------------------------------------
// `bash -c` recognition.
// ---------------------------------------------------------------------

/// Before the shell only wrappers are skipped; a first word that looks
/// like an option is the program itself, not a wrapper's flag.
#[test]
fn shell_c_skips_options_only_after_a_wrapper() {
    assert_eq!(shell_c_script(&["-x", "bash", "-c", "ls"]), None);
    assert_eq!(shell_c_script(&["--", "bash", "-c", "ls"]), None);
    assert_eq!(shell_c_script(&["sudo", "-x", "bash", "-c", "ls"]), Some(4));
}

/// Options of the shell made of letters only; `-c` given with another
/// sign than `-` is not a command string.
#[test]
fn shell_c_options_are_letters_after_a_dash() {
    assert_eq!(shell_c_script(&["bash", "-", "-c", "ls"]), None);
    assert_eq!(shell_c_script(&["bash", "-e1", "-c", "ls"]), None);
    assert_eq!(shell_c_script(&["bash", "+c", "ls"]), None);
    assert_eq!(shell_c_script(&["bash", "-x", "script.sh"]), None);
    assert_eq!(shell_c_script(&["bash", "+e", "-c", "ls"]), Some(3));
}

// ---------------------------------------------------------------------
// `~` in paths: expanded from HOME, in a child process.
// ---------------------------------------------------------------------

/// `~` and `~/…` are the user's home (from `HOME`), outside the project,
/// so they are asked for. Runs in a child copy of this test binary with
/// its own `HOME`, so no other test sees a changed environment.
#[test]
fn tilde_paths_are_the_home_directory() {
    const CASE: &str = "AGENT_TOOLS_TILDE_CASE";
    if std::env::var_os(CASE).is_some() {
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        let project = Path::new(PROJECT);
        let home_glob = format!("{}/*", home.display());
        for (line, expected) in [
            ("ls ~", home_glob.clone()),
            ("ls ~/", home_glob.clone()),
            ("cd ~", home_glob.clone()),
            ("cat ~/.ssh/id_rsa", format!("{}/.ssh/*", home.display())),
        ] {
            let requests = plan(line, project);
            assert_eq!(external_patterns(&requests), [expected], "{line:?}");
            let dirs = scan(line)
                .unwrap()
                .external_directories(project, project, project);
            assert!(!dirs.is_empty(), "{line:?}");
        }
        // `~user` is someone else's home, only known at run time.
        let requests = plan("cat ~bob/x", project);
        assert_eq!(external_patterns(&requests), ["~bob/x"]);
        return;
    }
    let home = temp_dir("survivors", "home");
    let name = format!(
        "{}::tilde_paths_are_the_home_directory",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--test-threads=1"])
        .env("HOME", &home)
        .env(CASE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_dir_all(&home).unwrap();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the case did not run: {stdout}"
    );
}

// ---------------------------------------------------------------------
// external.rs
// ---------------------------------------------------------------------

/// A path outside the project that is a symlink to another outside
/// folder asks for both folders: approving the link's folder must not
/// approve reading the folder it leads to.
#[cfg(unix)]
#[test]
fn a_symlink_between_two_outside_folders_asks_for_both() {
    let root = temp_dir("survivors", "links");
    let project = root.join("proj");
    let first = root.join("out1");
    let second = root.join("out2");
    for dir in [&project, &first, &second] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(second.join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(second.join("secret"), first.join("link")).unwrap();

    let requests = file_requests("read", &first.join("link"), false, &project, &project);
    let both = [
        format!("{}/*", first.display()),
        format!("{}/*", second.display()),
    ];
    assert_eq!(requests[0].permission, EXTERNAL_DIRECTORY);
    assert_eq!(requests[0].patterns, both);
    assert_eq!(requests[0].always, both);
    assert_eq!(requests.len(), 2, "{requests:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

fn context(allow: bool) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    recording_context(Path::new(PROJECT), allow)
}

/// `ask_external_directory` asks for the folder of an outside path and
/// fails with the answer; inside paths ask nothing.
#[tokio::test]
async fn ask_external_directory_asks_for_outside_paths_only() {
    let (ctx, seen) = context(false);
    let answer = ask_external_directory(&ctx, Path::new("/nonexistent/out/f"), false).await;
    assert!(
        matches!(answer, Err(PermissionError::Rejected)),
        "{answer:?}"
    );
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].permission, EXTERNAL_DIRECTORY);
        assert_eq!(seen[0].patterns, ["/nonexistent/out/*"]);
    }
    let inside = Path::new(PROJECT).join("src/main.rs");
    ask_external_directory(&ctx, &inside, false).await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);

    let (ctx, seen) = context(true);
    ask_external_directory(&ctx, Path::new("/nonexistent/out"), true)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap()[0].patterns, ["/nonexistent/out/*"]);
}

/// A symlink loop is followed a bounded number of times: the scan ends,
/// and the loop (in the project) asks nothing outside.
#[cfg(unix)]
#[test]
fn a_symlink_loop_ends() {
    let root = temp_dir("survivors", "loop");
    std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
    std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
    let requests = plan("echo x > a", &root);
    std::fs::remove_dir_all(&root).unwrap();
    assert!(external_patterns(&requests).is_empty(), "{requests:?}");
}

/// Only a file redirection makes a command-less statement a pattern: a
/// heredoc on an assignment writes nothing.
#[test]
fn a_heredoc_on_a_statement_without_a_command_asks_nothing() {
    for line in ["A=1 <<EOF\nx\nEOF", "export A=1 <<EOF\nx\nEOF"] {
        let scanned = scan(line).unwrap();
        assert!(!scanned.syntax_error, "{line:?}");
        assert!(
            scanned.patterns.is_empty(),
            "{line:?}: {:?}",
            scanned.patterns
        );
    }
    assert_eq!(scan("A=1 > f").unwrap().patterns, strings(&["A=1 > f"]));
}

/// After a syntax error, `a[b=c` (its bracket unclosed) is not an
/// assignment for bash but a command name, so the words after it are not
/// a command of their own.
#[test]
fn an_unclosed_subscript_is_not_an_assignment_in_the_lexical_split() {
    let scanned = scan("a[b=c rm -f x (").unwrap();
    assert!(scanned.syntax_error);
    assert!(
        !scanned.patterns.contains(&"rm -f x".to_string()),
        "{:?}",
        scanned.patterns
    );
    let scanned = scan("a[b]=c rm -f x (").unwrap();
    assert!(
        scanned.patterns.contains(&"rm -f x".to_string()),
        "{:?}",
        scanned.patterns
    );
}
