//! The bash tool against real processes: output, asks before running,
//! timeouts and cancellation ending the whole process group.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_permission::{PermissionError, PermissionGate, PermissionRequest, Reply};
use agentgate_testing::RecordingApprover;
use agentgate_tools::BashTool;
use serde_json::{Value, json};

use super::support::{unique_sleep, wait_for_process_with_arg};
use tokio_util::sync::CancellationToken;

struct Setup {
    ctx: ToolContext,
    seen: Arc<Mutex<Vec<PermissionRequest>>>,
    updates: Arc<Mutex<Vec<Value>>>,
    dir: PathBuf,
}

fn temp_dir(name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("agentgate-tools-bash-{name}"))
}

fn setup(name: &str, answer: Reply) -> Setup {
    let permissions = PermissionGate::new();
    let seen = RecordingApprover::replying(answer).install(&permissions);
    let dir = temp_dir(name);
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&updates);
    let ctx = ToolContext::new("ses_1", "msg_1", "call_1", permissions)
        .with_directories(dir.clone(), dir.clone())
        .on_metadata(Arc::new(move |_title, metadata| {
            sink.lock().unwrap().push(metadata);
        }));
    Setup {
        ctx,
        seen,
        updates,
        dir,
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tool() -> BashTool {
    BashTool::new().with_kill_grace(Duration::from_millis(300))
}

/// Whether `pid` is gone (or only a zombie nobody reaped yet).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn runs_a_command_and_returns_its_output() {
    let s = setup("output", Reply::Once);
    let out = tool()
        .execute(
            json!({"command": "echo hello; echo oops >&2", "description": "Says hello"}),
            &s.ctx,
        )
        .await
        .unwrap();
    assert!(out.output.contains("hello"), "{}", out.output);
    assert!(out.output.contains("oops"), "{}", out.output);
    assert_eq!(out.title, "Says hello");
    assert_eq!(out.metadata["exit"], 0);
    let seen = s.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].permission, "bash");
    assert_eq!(
        seen[0].patterns,
        ["echo hello", "echo oops >&2", "echo oops"]
    );
    assert_eq!(seen[0].always, ["echo *"]);
    assert_eq!(
        seen[0].metadata,
        json!({"command": "echo hello; echo oops >&2"})
    );
    assert!(
        s.updates
            .lock()
            .unwrap()
            .iter()
            .any(|m| m["output"].as_str().is_some_and(|o| o.contains("hello")))
    );
}

#[tokio::test]
async fn failing_command_reports_its_exit_code() {
    let s = setup("exit", Reply::Once);
    let out = tool()
        .execute(json!({"command": "exit 3"}), &s.ctx)
        .await
        .unwrap();
    assert_eq!(out.metadata["exit"], 3);
    assert!(out.output.contains("exit code: 3"), "{}", out.output);
}

#[tokio::test]
async fn workdir_is_where_it_runs() {
    let s = setup("workdir", Reply::Once);
    std::fs::create_dir(s.dir.join("sub")).unwrap();
    let out = tool()
        .execute(json!({"command": "pwd", "workdir": "sub"}), &s.ctx)
        .await
        .unwrap();
    assert_eq!(out.output.trim(), s.dir.join("sub").display().to_string());
}

#[tokio::test]
async fn rejected_command_never_runs() {
    let s = setup("reject", Reply::Reject { feedback: None });
    let marker = s.dir.join("marker");
    let result = tool()
        .execute(json!({"command": "touch marker"}), &s.ctx)
        .await;
    assert!(
        matches!(
            result,
            Err(ToolError::Permission(PermissionError::Rejected))
        ),
        "{result:?}"
    );
    assert_eq!(s.seen.lock().unwrap().len(), 1);
    assert!(!marker.exists());
}

#[tokio::test]
async fn negative_timeout_is_an_error_before_asking() {
    let s = setup("negative", Reply::Once);
    let result = tool()
        .execute(json!({"command": "touch marker", "timeout": -1}), &s.ctx)
        .await;
    let Err(ToolError::Failed(message)) = result else {
        panic!("{result:?}");
    };
    assert!(message.contains("Invalid timeout value: -1"), "{message}");
    assert!(s.seen.lock().unwrap().is_empty());
    assert!(!s.dir.join("marker").exists());
}

#[tokio::test]
async fn external_directory_is_asked_first() {
    // A name nothing creates: an existing folder would be asked as itself
    // (`/tmp/x/*`), and other programs on the machine may make `/tmp/x`.
    let s = setup("external", Reply::Reject { feedback: None });
    let result = tool()
        .execute(json!({"command": "rm /tmp/agentgate-absent-name"}), &s.ctx)
        .await;
    assert!(result.is_err());
    let seen = s.seen.lock().unwrap();
    // Rejecting the first request stops the call: bash is never asked.
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].permission, "external_directory");
    assert_eq!(seen[0].patterns, ["/tmp/*"]);
    assert_eq!(seen[0].always, ["/tmp/*"]);
    assert_eq!(
        seen[0].metadata,
        json!({"command": "rm /tmp/agentgate-absent-name", "directories": ["/tmp"], "patterns": ["/tmp/*"],
               "sandbox_grant": true})
    );
    // The sandboxed bash tool offers "grant this directory" as an answer.
    assert!(
        seen[0]
            .answers()
            .contains(&agentgate_permission::ReplyKind::Grant)
    );
}

#[tokio::test]
async fn external_then_bash_when_approved() {
    let s = setup("external-ok", Reply::Once);
    let outside = temp_dir("outside");
    let command = format!("cat {}/none 2>/dev/null; true", outside.display());
    tool()
        .execute(json!({"command": command}), &s.ctx)
        .await
        .unwrap();
    let seen = s.seen.lock().unwrap();
    let permissions: Vec<&str> = seen.iter().map(|r| r.permission.as_str()).collect();
    assert_eq!(permissions, ["external_directory", "bash"]);
    assert_eq!(seen[0].patterns, [format!("{}/*", outside.display())]);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let s = setup("timeout", Reply::Once);
    let started = Instant::now();
    // The grandchild is found by its unique argument in this process's
    // /proc (the command's own /proc is private to its PID namespace).
    let marker = unique_sleep(30);
    let ctx = s.ctx.clone();
    let command = format!("sh -c 'exec sleep {marker}' & sleep 30; wait");
    let call = tokio::spawn(async move {
        tool()
            .execute(json!({"command": command, "timeout": 1500}), &ctx)
            .await
    });
    let grandchild = wait_for_process_with_arg(&marker).await;
    let out = call.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(6));
    assert!(
        out.output
            .contains("bash tool terminated command after exceeding timeout 1500 ms"),
        "{}",
        out.output
    );
    assert!(out.output.contains("<shell_metadata>"));
    assert!(is_gone(grandchild), "pid {grandchild} survived");
}

#[tokio::test]
async fn cancellation_kills_the_group_and_keeps_partial_output() {
    let s = setup("cancel", Reply::Once);
    let cancel = CancellationToken::new();
    let ctx = s.ctx.clone().with_cancel(cancel.clone());
    let marker = unique_sleep(30);
    let command = format!("sh -c 'echo started-{marker}; exec sleep {marker}' & sleep 30");
    let run = tokio::spawn(async move { tool().execute(json!({"command": command}), &ctx).await });
    // Cancel as soon as the command has printed that its grandchild runs.
    let started = format!("started-{marker}");
    while !s
        .updates
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| m["output"].as_str())
        .any(|output| output.contains(&started))
    {
        tokio::task::yield_now().await;
    }
    let pid = wait_for_process_with_arg(&marker).await;
    cancel.cancel();
    let result = run.await.unwrap();
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    assert!(is_gone(pid), "pid {pid} survived");
    let updates = s.updates.lock().unwrap();
    let last = updates.last().unwrap()["output"].as_str().unwrap();
    assert!(last.contains(&started), "{last}");
    assert!(last.contains("User aborted the command"), "{last}");
}

#[tokio::test]
async fn shell_c_script_is_asked_for() {
    let s = setup("shell-c", Reply::Reject { feedback: None });
    let _ = tool()
        .execute(json!({"command": "bash -c 'git push --force'"}), &s.ctx)
        .await;
    let seen = s.seen.lock().unwrap();
    assert_eq!(
        seen[0].patterns,
        [
            "bash -c 'git push --force'",
            "bash -c git push --force",
            "git push --force"
        ]
    );
    assert_eq!(seen[0].always, ["bash *", "git push *"]);
}

#[tokio::test]
async fn missing_workdir_is_reported() {
    let s = setup("no-workdir", Reply::Once);
    let result = tool()
        .execute(json!({"command": "ls", "workdir": "nope"}), &s.ctx)
        .await;
    let Err(ToolError::Failed(message)) = result else {
        panic!("{result:?}");
    };
    assert!(
        message.contains("is not an existing directory"),
        "{message}"
    );
}

#[tokio::test]
async fn workdir_outside_the_project_is_asked_for() {
    let s = setup("workdir-outside", Reply::Reject { feedback: None });
    let result = tool()
        .execute(json!({"command": "ls", "workdir": "/"}), &s.ctx)
        .await;
    assert!(result.is_err());
    let seen = s.seen.lock().unwrap();
    assert_eq!(seen[0].permission, "external_directory");
    assert_eq!(seen[0].patterns, ["/*"]);
}

#[tokio::test]
async fn background_job_does_not_hold_the_call() {
    let s = setup("background", Reply::Once);
    let started = Instant::now();
    // The command ends once the test has seen its background job (found
    // by its unique argument in this process's /proc: the command's own
    // /proc is private to its PID namespace).
    let marker = unique_sleep(5);
    let ctx = s.ctx.clone();
    let command = format!(
        "sh -c 'exec sleep {marker}' & while [ ! -e seen ]; do sleep 0.02; done; echo done"
    );
    let call = tokio::spawn(async move { tool().execute(json!({"command": command}), &ctx).await });
    let pid = wait_for_process_with_arg(&marker).await;
    std::fs::write(s.dir.join("seen"), "").unwrap();
    let out = call.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.output.contains("done"), "{}", out.output);
    // Unlike opencode, the end of the call ends its background jobs too
    // (the sandbox's PID namespace).
    assert!(is_gone(pid), "background pid {pid} survived the call");
}
