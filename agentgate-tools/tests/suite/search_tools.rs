//! glob, grep and list against real temporary directories: ask order,
//! .gitignore, sorting and caps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recorder, temp_dir};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_permission::{Action, PermissionGate, PermissionRequest, Rule, Ruleset};
use agentgate_tools::{GlobTool, GrepTool, ListTool};
use serde_json::{Value, json};

fn context(dir: &Path, allow: bool) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let permissions = PermissionGate::new();
    let seen = recorder(allow).install(&permissions);
    // Reading is allowed, as in the agent defaults: the searches' own
    // requests are what these tests look at.
    let rules = Ruleset(vec![Rule::new("read", "*", Action::Allow)]);
    let ctx = ToolContext::new("ses_test", "msg_test", "call_test", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf())
        .with_ruleset(Arc::new(rules));
    (ctx, seen)
}

fn permissions(seen: &Arc<Mutex<Vec<PermissionRequest>>>) -> Vec<(String, Vec<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|r| (r.permission.clone(), r.patterns.clone()))
        .collect()
}

async fn call(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> Result<String, ToolError> {
    tool.execute(input, ctx).await.map(|out| out.output)
}

fn write(path: PathBuf, text: &str, age_secs: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let time = SystemTime::now() - Duration::from_secs(age_secs);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// A project with a .gitignore'd folder and file, and files of known ages.
fn project(name: &str) -> PathBuf {
    let dir = temp_dir("search", name);
    write(dir.join(".gitignore"), "ignored/\n*.log\n", 500);
    write(dir.join("old.rs"), "fn old() { TODO }\n", 300);
    write(dir.join("src/new.rs"), "fn new() {}\n// TODO: more\n", 10);
    write(dir.join("src/mid.rs"), "fn mid() {}\n", 100);
    write(dir.join("ignored/hidden.rs"), "TODO ignored\n", 1);
    write(dir.join("debug.log"), "TODO log\n", 1);
    write(dir.join(".git/config"), "TODO git\n", 1);
    dir
}

#[tokio::test]
async fn glob_respects_gitignore_and_sorts_newest_first() {
    let dir = project("glob");
    let (ctx, seen) = context(&dir, true);
    let out = call(&GlobTool::default(), json!({"pattern": "*.rs"}), &ctx)
        .await
        .unwrap();
    let expected = ["src/new.rs", "src/mid.rs", "old.rs"]
        .map(|f| dir.join(f).display().to_string())
        .join("\n");
    assert_eq!(out, expected);
    assert_eq!(
        permissions(&seen),
        vec![("glob".into(), vec!["*.rs".into()])]
    );
    let out = call(&GlobTool::default(), json!({"pattern": "src/*.rs"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.lines().count(), 2);
    let out = call(&GlobTool::default(), json!({"pattern": "*.none"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out, "No files found");
}

#[tokio::test]
async fn glob_caps_results() {
    let dir = temp_dir("search", "glob-cap");
    for i in 0..120 {
        write(dir.join(format!("f{i:03}.txt")), "", i);
    }
    let (ctx, _) = context(&dir, true);
    let out = call(&GlobTool::default(), json!({"pattern": "*.txt"}), &ctx)
        .await
        .unwrap();
    assert!(out.starts_with(&dir.join("f000.txt").display().to_string()));
    assert!(out.ends_with(
        "(Results are truncated: showing first 100 of 120 results. Consider using a more specific path or pattern.)"
    ));
}

#[tokio::test]
async fn glob_outside_asks_its_own_permission_then_external() {
    let dir = temp_dir("search", "glob-in");
    let outside = temp_dir("search", "glob-out");
    let (ctx, seen) = context(&dir, true);
    call(
        &GlobTool::default(),
        json!({"pattern": "*", "path": outside}),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        permissions(&seen),
        vec![
            ("glob".into(), vec!["*".into()]),
            (
                "external_directory".into(),
                vec![format!("{}/*", outside.display())]
            ),
        ]
    );
}

#[tokio::test]
async fn grep_respects_gitignore_and_groups_by_file() {
    let dir = project("grep");
    let (ctx, seen) = context(&dir, true);
    let out = call(&GrepTool::default(), json!({"pattern": "TODO"}), &ctx)
        .await
        .unwrap();
    let new = dir.join("src/new.rs").display().to_string();
    let old = dir.join("old.rs").display().to_string();
    assert_eq!(
        out,
        format!(
            "Found 2 matches\n{new}:\n  Line 2: // TODO: more\n\n{old}:\n  Line 1: fn old() {{ TODO }}"
        )
    );
    assert_eq!(
        permissions(&seen),
        vec![("grep".into(), vec!["TODO".into()])]
    );
    let out = call(
        &GrepTool::default(),
        json!({"pattern": "fn \\w+", "include": "src/*.rs"}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(out.starts_with("Found 2 matches"), "{out}");
    let err = call(&GrepTool::default(), json!({"pattern": "("}), &ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("Invalid pattern"), "{err}");
}

#[tokio::test]
async fn grep_skips_binary_and_searches_single_files() {
    let dir = temp_dir("search", "grep-bin");
    std::fs::write(dir.join("bin.dat"), b"needle\0\x01\x02").unwrap();
    std::fs::write(dir.join("a.txt"), "needle\n").unwrap();
    let (ctx, _) = context(&dir, true);
    let out = call(&GrepTool::default(), json!({"pattern": "needle"}), &ctx)
        .await
        .unwrap();
    assert!(out.starts_with("Found 1 matches"), "{out}");
    let out = call(
        &GrepTool::default(),
        json!({"pattern": "needle", "path": "a.txt"}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(out.contains("Line 1: needle"), "{out}");
}

#[tokio::test]
async fn rejected_search_does_not_run() {
    let dir = project("grep-rej");
    let (ctx, seen) = context(&dir, false);
    let err = call(&GrepTool::default(), json!({"pattern": "TODO"}), &ctx)
        .await
        .unwrap_err();
    assert!(err.stops_loop());
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn list_renders_a_tree_without_ignored_folders() {
    let dir = project("list");
    write(dir.join("target/debug/x"), "", 1);
    write(dir.join("node_modules/m/index.js"), "", 1);
    write(dir.join("docs/skip.md"), "", 1);
    let (ctx, seen) = context(&dir, true);
    let out = call(&ListTool::default(), json!({"ignore": ["docs/"]}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        out,
        format!(
            "{}/\n  src/\n    mid.rs\n    new.rs\n  .gitignore\n  old.rs\n",
            dir.display()
        )
    );
    assert_eq!(
        permissions(&seen),
        vec![("list".into(), vec![dir.display().to_string()])]
    );
}

#[tokio::test]
async fn grep_output_stays_under_50_kb() {
    let dir = temp_dir("search", "grep-big");
    let line = format!("hit {}\n", "x".repeat(1500));
    std::fs::write(dir.join("big.txt"), line.repeat(90)).unwrap();
    let (ctx, _) = context(&dir, true);
    let out = call(&GrepTool::default(), json!({"pattern": "hit"}), &ctx)
        .await
        .unwrap();
    assert!(out.len() < 52 * 1024, "{}", out.len());
    assert!(
        out.starts_with("Found 90 matches (showing first "),
        "{}",
        &out[..60]
    );
    assert!(out.contains("Consider using a more specific path or pattern."));
}
