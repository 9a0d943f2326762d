//! `list` and a `read` of a directory name only the entries the `read`
//! rules allow, as glob and grep do: a denied or asked
//! file is neither named nor asked about, whether it is reached directly
//! or through a symlink.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recorder, temp_dir};
use std::path::Path;
use std::sync::{Arc, Mutex};

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{
    PermissionConfig, PermissionGate, PermissionRequest, Ruleset, from_config_with_home,
};
use agentgate_tools::{ListTool, ReadTool};
use serde_json::{Value, json};

/// Reading `*.env` is denied and `*.pem` asked (opencode's defaults deny
/// or ask `.env` files the same way); everything else is allowed. The
/// approver rejects, so an ask about a hidden file would fail the call.
fn context(dir: &Path) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let config = json!({"*": "allow", "read": {"*": "allow", "*.env": "deny", "*.pem": "ask"}});
    let config = PermissionConfig::from_value(&config, "permission").unwrap();
    let rules: Ruleset = from_config_with_home(&config, "/home/u");
    let permissions = PermissionGate::new();
    let seen = recorder(false).install(&permissions);
    let ctx = ToolContext::new("ses_test", "msg_test", "call_test", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf())
        .with_ruleset(Arc::new(rules));
    (ctx, seen)
}

/// A project with allowed files, denied and asked ones, and a link to a
/// denied file under an innocent name.
fn project() -> std::path::PathBuf {
    let dir = temp_dir("listing", "read-rules");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (file, text) in [
        ("a.txt", "a"),
        (".env", "TOKEN=1"),
        ("keys.pem", "KEY"),
        ("sub/b.txt", "b"),
        ("sub/prod.env", "TOKEN=2"),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    std::os::unix::fs::symlink(dir.join(".env"), dir.join("sub/notes")).unwrap();
    dir
}

async fn call(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> String {
    tool.execute(input, ctx).await.unwrap().output
}

#[tokio::test]
async fn list_hides_files_the_read_rules_deny_or_ask() {
    let dir = project();
    let (ctx, seen) = context(&dir);
    let out = call(&ListTool::default(), json!({}), &ctx).await;
    assert_eq!(
        out,
        format!(
            "{}/\n  sub/\n    b.txt\n  a.txt\n\n(3 files are not shown: the read rules do not allow reading them)\n",
            dir.display()
        )
    );
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn reading_a_directory_hides_entries_the_read_rules_deny_or_ask() {
    let dir = project();
    let (ctx, seen) = context(&dir);
    let out = call(&ReadTool::default(), json!({"filePath": "."}), &ctx).await;
    assert!(
        out.contains("<entries>\na.txt\nsub/\n\n(2 entries)\n(2 entries are not shown: the read rules do not allow reading them)\n</entries>"),
        "{out}"
    );
    let out = call(&ReadTool::default(), json!({"filePath": "sub"}), &ctx).await;
    // `notes` is a link to `.env`: judged where it leads.
    assert!(
        out.contains("<entries>\nb.txt\n\n(1 entries)\n(2 entries are not shown"),
        "{out}"
    );
    for hidden in [".env", "keys.pem", "prod.env", "notes"] {
        assert!(!out.contains(hidden), "{hidden}: {out}");
    }
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn nothing_is_hidden_when_the_rules_allow_reading() {
    let dir = project();
    let (ctx, _) = context(&dir);
    let rules = Ruleset(vec![agentgate_permission::Rule::new(
        "*",
        "*",
        agentgate_permission::Action::Allow,
    )]);
    let ctx = ctx.with_ruleset(Arc::new(rules));
    let out = call(&ReadTool::default(), json!({"filePath": "."}), &ctx).await;
    assert!(
        out.contains("<entries>\n.env\na.txt\nkeys.pem\nsub/\n\n(4 entries)\n</entries>"),
        "{out}"
    );
    let out = call(&ListTool::default(), json!({}), &ctx).await;
    assert!(
        out.contains("prod.env") && !out.contains("not shown"),
        "{out}"
    );
}
