//! A move is a read: apply_patch's `*** Move to:` carries a file's content
//! to another name, and a rewrite through a symlink replaces the link with
//! what it led to, so both ask the `read` rules for the source exactly as
//! the read tool would (a move onto a read-denied name likewise), before
//! anything changes. The edit tool through a symlink asks the same. The
//! property at the end: over generated patches (add, update, delete, move,
//! with and without hunks, through links), no content of a read-denied
//! file becomes readable under another name without the read ask.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_core::permission::{Action, PermissionGate, PermissionRequest, Reply, Rule, Ruleset};
use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{ApplyPatchTool, EditTool, ReadArgs, ReadTool};
use proptest::prelude::*;
use serde_json::json;

use super::support::temp_dir;

const ENV_SECRET: &str = "SECRET-ENV";
const KEY_SECRET: &str = "SECRET-KEY";

/// The agents' default rules for reading (§9.1): everything allowed, `read`
/// of `*.env` and `*.env.*` asks.
fn default_rules() -> Ruleset {
    Ruleset(vec![
        Rule::new("*", "*", Action::Allow),
        Rule::new("read", "*", Action::Allow),
        Rule::new("read", "*.env", Action::Ask),
        Rule::new("read", "*.env.*", Action::Ask),
        Rule::new("read", "*.env.example", Action::Allow),
    ])
}

/// Everything allowed but reading `*.env` and `secrets/*`, which `action`
/// (deny or ask).
fn secret_rules(action: Action) -> Ruleset {
    Ruleset(vec![
        Rule::new("*", "*", Action::Allow),
        Rule::new("read", "*.env", action),
        Rule::new("read", "secrets/*", action),
    ])
}

/// A project with two secrets (`.env`, `secrets/key`), two plain files,
/// and symlinks to the secrets (`link_env`, `link_key`, and the folder
/// link `sec_dir` to `secrets`).
fn project(name: &str) -> PathBuf {
    let dir = temp_dir("move-read", name);
    std::fs::create_dir_all(dir.join("secrets")).unwrap();
    std::fs::write(dir.join(".env"), format!("{ENV_SECRET}\n")).unwrap();
    std::fs::write(dir.join("secrets/key"), format!("{KEY_SECRET}\n")).unwrap();
    std::fs::write(dir.join("a.txt"), "plain a\n").unwrap();
    std::fs::write(dir.join("b.txt"), "plain b\n").unwrap();
    std::os::unix::fs::symlink(".env", dir.join("link_env")).unwrap();
    std::os::unix::fs::symlink("secrets/key", dir.join("link_key")).unwrap();
    std::os::unix::fs::symlink("secrets", dir.join("sec_dir")).unwrap();
    dir
}

/// A context on `dir` with `rules`, whose approver records each request
/// and answers `read` with `read` and everything else once.
fn context(
    dir: &Path,
    rules: &Ruleset,
    read: fn(&PermissionRequest) -> Reply,
) -> (ToolContext, agentgate_testing::approver::Seen) {
    let permissions = PermissionGate::new();
    let seen = RecordingApprover::answering(read).install(&permissions);
    let ctx = ToolContext::new("ses_move", "msg_move", "call_move", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf())
        .with_ruleset(Arc::new(rules.clone()));
    (ctx, seen)
}

fn reject_reads(request: &PermissionRequest) -> Reply {
    if request.permission == "read" {
        Reply::reject()
    } else {
        Reply::Once
    }
}

fn patch(body: &str) -> serde_json::Value {
    json!({"patchText": format!("*** Begin Patch\n{body}*** End Patch\n")})
}

/// The `read` request the read tool makes for `file` in `dir`.
fn read_request_of(dir: &Path, file: &str) -> (String, Vec<String>) {
    let args = ReadArgs {
        file_path: file.to_string(),
        offset: None,
        limit: None,
    };
    let request = ReadTool::default()
        .requests(&args, dir, dir)
        .into_iter()
        .find(|r| r.permission == "read")
        .unwrap();
    (request.permission, request.patterns)
}

fn asked(seen: &agentgate_testing::approver::Seen) -> Vec<(String, Vec<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|r| (r.permission.clone(), r.patterns.clone()))
        .collect()
}

#[tokio::test]
async fn moving_dot_env_without_a_hunk_asks_as_reading_it_would_under_the_defaults() {
    let dir = project("default-env");
    let (ctx, seen) = context(&dir, &default_rules(), reject_reads);
    let error = ApplyPatchTool
        .execute(patch("*** Update File: .env\n*** Move to: env.txt\n"), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Permission(_)), "{error}");
    assert_eq!(asked(&seen), [read_request_of(&dir, ".env")]);
    assert!(!dir.join("env.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join(".env")).unwrap(),
        format!("{ENV_SECRET}\n")
    );

    // Allowed, it moves (the person approved the read).
    let (ctx, seen) = context(&dir, &default_rules(), |_| Reply::Once);
    ApplyPatchTool
        .execute(patch("*** Update File: .env\n*** Move to: env.txt\n"), &ctx)
        .await
        .unwrap();
    assert_eq!(asked(&seen), [read_request_of(&dir, ".env")]);
    assert!(!dir.join(".env").exists());
    assert!(dir.join("env.txt").exists());
}

#[tokio::test]
async fn explicit_read_denies_deny_moves_of_secrets_and_onto_them_before_any_change() {
    let cases = [
        "*** Update File: .env\n*** Move to: env.txt\n",
        "*** Update File: secrets/key\n*** Move to: key.txt\n",
        "*** Update File: sec_dir/key\n*** Move to: key.txt\n",
        "*** Update File: link_env\n*** Move to: env.txt\n",
        // Through a link without a move: the link becomes the file.
        "*** Update File: link_key\n@@\n-SECRET-KEY\n+public\n",
        "*** Update File: link_env\n@@\n-SECRET-ENV\n+SECRET-ENV!\n",
        // Onto a read-denied name.
        "*** Update File: a.txt\n*** Move to: secrets/a.txt\n",
        // A harmless change first, the move after: nothing at all changes.
        "*** Add File: new.txt\n+hi\n*** Update File: .env\n*** Move to: env.txt\n",
    ];
    for (i, body) in cases.iter().enumerate() {
        let dir = project(&format!("deny-{i}"));
        let (ctx, seen) = context(&dir, &secret_rules(Action::Deny), |_| Reply::Once);
        let error = ApplyPatchTool.execute(patch(body), &ctx).await.unwrap_err();
        assert!(
            error.to_string().contains("read"),
            "{body}: {error} (the read rule denied)"
        );
        assert!(asked(&seen).is_empty(), "{body}: nothing is asked");
        assert_eq!(
            snapshot(&dir),
            snapshot(&project(&format!("fresh-{i}"))),
            "{body}"
        );
    }
}

/// Every path under `dir` (links as links) with its content or link target.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(dir).unwrap().display().to_string();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((relative, format!("-> {}", target.display())));
            } else if kind.is_dir() {
                stack.push(path);
            } else {
                out.push((relative, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn the_edit_tool_through_a_link_to_a_secret_asks_read() {
    let dir = project("edit-link");
    let (ctx, seen) = context(&dir, &secret_rules(Action::Ask), reject_reads);
    let error = EditTool
        .execute(
            json!({"filePath": "link_env", "oldString": "SECRET", "newString": "PUBLIC"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Permission(_)), "{error}");
    assert_eq!(asked(&seen), [read_request_of(&dir, "link_env")]);
    assert!(
        std::fs::symlink_metadata(dir.join("link_env"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A plain file asks no read.
    let (ctx, seen) = context(&dir, &secret_rules(Action::Ask), reject_reads);
    EditTool
        .execute(
            json!({"filePath": "a.txt", "oldString": "plain", "newString": "still plain"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(asked(&seen).is_empty());
}

// The property.

/// The names a generated patch uses: the secrets, links to them, plain
/// files, new names, and new names under a read-denied folder.
const NAMES: &[&str] = &[
    ".env",
    "secrets/key",
    "link_env",
    "link_key",
    "sec_dir/key",
    "a.txt",
    "b.txt",
    "env.txt",
    "out/c.txt",
    "secrets/new",
];

/// The line a name holds in the fresh project (what a hunk replaces).
fn line_of(name: &str) -> &'static str {
    match name {
        ".env" | "link_env" => ENV_SECRET,
        "secrets/key" | "link_key" | "sec_dir/key" => KEY_SECRET,
        "a.txt" => "plain a",
        "b.txt" => "plain b",
        _ => "nothing here",
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(usize),
    Delete(usize),
    Update {
        name: usize,
        to: Option<usize>,
        hunk: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let name = 0..NAMES.len();
    prop_oneof![
        name.clone().prop_map(Op::Add),
        name.clone().prop_map(Op::Delete),
        (name.clone(), proptest::option::of(name), any::<bool>())
            .prop_map(|(name, to, hunk)| Op::Update { name, to, hunk }),
    ]
}

fn body_of(ops: &[Op]) -> String {
    let mut body = String::new();
    for op in ops {
        match op {
            Op::Add(name) => body.push_str(&format!("*** Add File: {}\n+added\n", NAMES[*name])),
            Op::Delete(name) => body.push_str(&format!("*** Delete File: {}\n", NAMES[*name])),
            Op::Update { name, to, hunk } => {
                body.push_str(&format!("*** Update File: {}\n", NAMES[*name]));
                if let Some(to) = to {
                    body.push_str(&format!("*** Move to: {}\n", NAMES[*to]));
                }
                if *hunk {
                    let line = line_of(NAMES[*name]);
                    body.push_str(&format!("@@\n-{line}\n+{line} changed\n"));
                }
            }
        }
    }
    body
}

/// The files under `dir` the read tool returns without a `read` ask (its
/// approver rejects every ask), with what it returned.
async fn readable_without_asking(dir: &Path, rules: &Ruleset) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, _) in snapshot(dir) {
        let (ctx, _) = context(dir, rules, |_| Reply::reject());
        if let Ok(read) = ReadTool::default()
            .execute(json!({"filePath": name}), &ctx)
            .await
        {
            out.push((name, read.output));
        }
    }
    out
}

async fn no_secret_escapes(case: usize, ops: &[Op], action: Action) {
    let dir = project(&format!("prop-{case}"));
    let rules = secret_rules(action);
    let (ctx, _) = context(&dir, &rules, reject_reads);
    let body = body_of(ops);
    let _ = ApplyPatchTool.execute(patch(&body), &ctx).await;
    for (name, text) in readable_without_asking(&dir, &rules).await {
        assert!(
            !text.contains(ENV_SECRET) && !text.contains(KEY_SECRET),
            "{name} reveals a secret without a read ask after\n{body}\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_generated_patch_makes_a_read_denied_file_readable_under_another_name(
        ops in proptest::collection::vec(op(), 1..4),
        ask in any::<bool>(),
    ) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let action = if ask { Action::Ask } else { Action::Deny };
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(no_secret_escapes(case, &ops, action));
    }
}
