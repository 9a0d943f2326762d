//! read, write and edit against real temporary directories: what they ask,
//! in which order, and that nothing is touched before the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recording_context, temp_dir};
use std::path::Path;
use std::sync::{Arc, Mutex};

use agentgate_core::permission::PermissionRequest;
use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_tools::{EditTool, ReadTool, WriteTool};
use serde_json::{Value, json};

fn context(dir: &Path, allow: bool) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    recording_context(dir, allow)
}

fn asked(seen: &Arc<Mutex<Vec<PermissionRequest>>>) -> Vec<(String, Vec<String>, Vec<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|r| (r.permission.clone(), r.patterns.clone(), r.always.clone()))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

async fn call(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> Result<String, ToolError> {
    tool.execute(input, ctx).await.map(|out| out.output)
}

#[tokio::test]
async fn read_numbers_lines_and_asks_relative() {
    let dir = temp_dir("file", "read");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.txt"), "one\ntwo\nthree\n").unwrap();
    let (ctx, seen) = context(&dir, true);
    let out = call(
        &ReadTool::default(),
        json!({"filePath": "src/a.txt", "offset": 2}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(out.contains("2: two\n3: three"), "{out}");
    assert!(out.contains("(End of file - total 3 lines)"));
    assert_eq!(
        asked(&seen),
        vec![("read".into(), strings(&["src/a.txt"]), strings(&["*"]))]
    );
}

#[tokio::test]
async fn read_outside_asks_external_directory_first() {
    let dir = temp_dir("file", "read-in");
    let outside = temp_dir("file", "read-out");
    std::fs::write(outside.join("x.txt"), "secret\n").unwrap();
    let (ctx, seen) = context(&dir, true);
    let target = outside.join("x.txt");
    call(&ReadTool::default(), json!({"filePath": target}), &ctx)
        .await
        .unwrap();
    let glob = format!("{}/*", outside.display());
    let rel = agentgate_tools::paths::relative(&dir, &target);
    assert!(rel.starts_with("../"));
    assert_eq!(
        asked(&seen),
        vec![
            ("external_directory".into(), vec![glob.clone()], vec![glob]),
            ("read".into(), vec![rel], strings(&["*"])),
        ]
    );
}

#[tokio::test]
async fn read_rejected_returns_rejection() {
    let dir = temp_dir("file", "read-rej");
    std::fs::write(dir.join("a.txt"), "x").unwrap();
    let (ctx, _) = context(&dir, false);
    let err = call(&ReadTool::default(), json!({"filePath": "a.txt"}), &ctx)
        .await
        .unwrap_err();
    assert!(err.stops_loop());
}

#[tokio::test]
async fn read_refuses_binary_and_caps_large_files() {
    let dir = temp_dir("file", "read-big");
    std::fs::write(dir.join("blob"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    let (ctx, _) = context(&dir, true);
    let err = call(&ReadTool::default(), json!({"filePath": "blob"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("Cannot read binary file:"),
        "{err}"
    );

    let line = "z".repeat(100);
    let big: String = (0..5000).map(|_| format!("{line}\n")).collect();
    std::fs::write(dir.join("big.txt"), big).unwrap();
    let out = call(&ReadTool::default(), json!({"filePath": "big.txt"}), &ctx)
        .await
        .unwrap();
    assert!(out.len() < 60 * 1024);
    assert!(
        out.contains("(Output capped at 50 KB. Showing lines 1-"),
        "{}",
        &out[out.len() - 200..]
    );

    let short: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("long.txt"), short).unwrap();
    let out = call(&ReadTool::default(), json!({"filePath": "long.txt"}), &ctx)
        .await
        .unwrap();
    assert!(out.contains("(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)"));
}

#[tokio::test]
async fn read_lists_directories_and_suggests_names() {
    let dir = temp_dir("file", "read-dir");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("b.txt"), "").unwrap();
    std::fs::write(dir.join("a.txt"), "").unwrap();
    let (ctx, _) = context(&dir, true);
    // A directory shows only entries the read rules allow (see
    // listing_read_rules.rs): allow reading, as the agent defaults do.
    let rules = agentgate_permission::Ruleset(vec![agentgate_permission::Rule::new(
        "read",
        "*",
        agentgate_permission::Action::Allow,
    )]);
    let ctx = ctx.with_ruleset(Arc::new(rules));
    let out = call(&ReadTool::default(), json!({"filePath": "."}), &ctx)
        .await
        .unwrap();
    assert!(
        out.contains("<entries>\na.txt\nb.txt\nsub/\n\n(3 entries)"),
        "{out}"
    );
    let err = call(&ReadTool::default(), json!({"filePath": "a.tx"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("Did you mean one of these?"),
        "{err}"
    );
}

#[tokio::test]
async fn write_asks_before_writing_and_rejection_leaves_file() {
    let dir = temp_dir("file", "write");
    let file = dir.join("a.txt");
    std::fs::write(&file, "old\n").unwrap();
    let (ctx, seen) = context(&dir, false);
    let err = call(
        &WriteTool,
        json!({"filePath": "a.txt", "content": "new\n"}),
        &ctx,
    )
    .await
    .unwrap_err();
    assert!(err.stops_loop());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].permission, "edit");
    assert_eq!(requests[0].patterns, ["a.txt"]);
    let diff = requests[0].metadata["diff"].as_str().unwrap();
    assert!(diff.contains("-old\n+new\n"), "{diff}");

    let (ctx, _) = context(&dir, true);
    call(
        &WriteTool,
        json!({"filePath": "deep/er/b.txt", "content": "hi"}),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("deep/er/b.txt")).unwrap(),
        "hi"
    );
    call(
        &WriteTool,
        json!({"filePath": "a.txt", "content": "new\n"}),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
    // No temporary file is left next to the target.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[cfg(unix)]
#[tokio::test]
async fn atomic_write_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("file", "perm");
    let file = dir.join("run.sh");
    std::fs::write(&file, "echo 1\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    agentgate_tools::write_atomic(&file, b"echo 2\n")
        .await
        .unwrap();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 2\n");
}

#[tokio::test]
async fn edit_rejection_leaves_file_untouched() {
    let dir = temp_dir("file", "edit-rej");
    let file = dir.join("a.rs");
    std::fs::write(&file, "fn a() {}\n").unwrap();
    let (ctx, seen) = context(&dir, false);
    let input = json!({"filePath": "a.rs", "oldString": "a()", "newString": "b()"});
    assert!(call(&EditTool, input, &ctx).await.unwrap_err().stops_loop());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn a() {}\n");
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests[0].patterns, ["a.rs"]);
    assert_eq!(requests[0].always, ["*"]);
    assert!(
        requests[0].metadata["diff"]
            .as_str()
            .unwrap()
            .contains("+b()")
    );
}

#[tokio::test]
async fn edit_cascade_crlf_and_bom() {
    let dir = temp_dir("file", "edit");
    let file = dir.join("a.txt");
    std::fs::write(&file, "\u{feff}first\r\n    second\r\nthird\r\n").unwrap();
    let (ctx, _) = context(&dir, true);
    // LF in the arguments, CRLF in the file: the arguments are converted.
    let input = json!({"filePath": "a.txt", "oldString": "second\nthird", "newString": "2\n3"});
    let out = call(&EditTool, input, &ctx).await.unwrap();
    assert_eq!(out, "Edit applied successfully.");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "\u{feff}first\r\n    2\r\n3\r\n"
    );
    let err = call(
        &EditTool,
        json!({"filePath": "a.txt", "oldString": "nope", "newString": "x"}),
        &ctx,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().starts_with("Could not find oldString"));
    let err = call(
        &EditTool,
        json!({"filePath": "a.txt", "oldString": "x", "newString": "x"}),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "No changes to apply: oldString and newString are identical."
    );
}

#[tokio::test]
async fn edit_empty_old_string_creates_only_new_files() {
    let dir = temp_dir("file", "edit-new");
    let (ctx, seen) = context(&dir, true);
    let input = json!({"filePath": "new/file.txt", "oldString": "", "newString": "hello\n"});
    call(&EditTool, input.clone(), &ctx).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("new/file.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    let input = json!({"filePath": "new/file.txt", "oldString": "", "newString": "other\n"});
    let err = call(&EditTool, input, &ctx).await.unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("new/file.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test]
async fn concurrent_edits_of_one_file_are_serialised() {
    let dir = temp_dir("file", "edit-lock");
    let file = dir.join("a.txt");
    let lines: String = (0..20).map(|i| format!("line{i}\n")).collect();
    std::fs::write(&file, &lines).unwrap();
    let (ctx, _) = context(&dir, true);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let ctx = ctx.clone();
        tasks.push(tokio::spawn(async move {
            let input = json!({"filePath": "a.txt", "oldString": format!("line{i}\n"), "newString": format!("LINE{i}\n")});
            EditTool.execute(input, &ctx).await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let expected: String = (0..20).map(|i| format!("LINE{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
}

/// The rules of the default agents for reading: everything but `.env` files.
fn read_rules_with_env_denied() -> agentgate_core::permission::Ruleset {
    use agentgate_core::permission::{Action, Rule, Ruleset};
    Ruleset(vec![
        Rule::new("read", "*", Action::Allow),
        Rule::new("read", "*.env", Action::Deny),
    ])
}

#[tokio::test]
async fn edit_ask_shows_the_files_real_diff_when_the_file_is_readable() {
    let dir = temp_dir("file", "edit-real-diff");
    let file = dir.join("lib.rs");
    std::fs::write(&file, "// head\nfn a() {}\nfn keep() {}\n").unwrap();
    let (ctx, seen) = context(&dir, true);
    let ctx = ctx.with_ruleset(Arc::new(read_rules_with_env_denied()));
    let input = json!({"filePath": "lib.rs", "oldString": "a()", "newString": "b()"});
    call(&EditTool, input, &ctx).await.unwrap();
    let requests = seen.lock().unwrap().clone();
    let edit = requests.iter().find(|r| r.permission == "edit").unwrap();
    let diff = edit.metadata["diff"].as_str().unwrap();
    // Whole lines with their context, not the two strings.
    assert!(diff.contains("-fn a() {}"), "{diff}");
    assert!(diff.contains("+fn b() {}"), "{diff}");
    assert!(
        diff.contains(" // head") && diff.contains(" fn keep() {}"),
        "{diff}"
    );
    // What was shown is what was written.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "// head\nfn b() {}\nfn keep() {}\n"
    );
}

#[tokio::test]
async fn edit_of_a_file_the_read_rules_deny_asks_before_reading_it() {
    let dir = temp_dir("file", "edit-denied-read");
    std::fs::write(dir.join(".env"), "TOKEN=hunter2\n").unwrap();
    let (ctx, seen) = context(&dir, false);
    let ctx = ctx.with_ruleset(Arc::new(read_rules_with_env_denied()));
    // A right guess and a wrong guess of the secret answer alike: the
    // refusal, before the file is matched, with the strings' diff only.
    for guess in ["hunter2", "wrong-guess"] {
        let input = json!({"filePath": ".env", "oldString": guess, "newString": "x"});
        let error = call(&EditTool, input, &ctx).await.unwrap_err();
        assert!(error.stops_loop(), "{error}");
    }
    let requests = seen.lock().unwrap().clone();
    let diffs: Vec<&str> = requests
        .iter()
        .filter(|r| r.permission == "edit")
        .map(|r| r.metadata["diff"].as_str().unwrap())
        .collect();
    assert_eq!(diffs.len(), 2);
    for diff in diffs {
        assert!(!diff.contains("TOKEN"), "the file's text leaked: {diff}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join(".env")).unwrap(),
        "TOKEN=hunter2\n"
    );
}
