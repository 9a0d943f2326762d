//! todowrite/todoread share a per-session store; todowrite asks first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_permission::{PermissionError, PermissionGate, PermissionRequest, Reply};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{TodoReadTool, TodoStatus, TodoStore, TodoWriteTool};
use serde_json::json;

fn context(session: &str, answer: Reply) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let permissions = PermissionGate::new();
    let seen = RecordingApprover::replying(answer).install(&permissions);
    (
        ToolContext::new(session, "msg_1", "call_1", permissions),
        seen,
    )
}

#[tokio::test]
async fn write_then_read_per_session() {
    let store = TodoStore::new();
    let write = TodoWriteTool::new(store.clone());
    let read = TodoReadTool::new(store.clone());
    let (ctx, seen) = context("ses_a", Reply::Once);
    let out = write
        .execute(
            json!({"todos": [
                {"content": "scan", "status": "completed", "priority": "high"},
                {"content": "tool", "status": "in_progress", "priority": "medium", "id": "2"}
            ]}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.title, "1 todos");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].permission, "todowrite");
        assert_eq!(seen[0].patterns, ["*"]);
        assert_eq!(seen[0].always, ["*"]);
    }
    let listed = read.execute(json!({}), &ctx).await.unwrap();
    assert_eq!(listed.metadata["todos"][1]["content"], "tool");
    assert_eq!(store.get("ses_a")[1].status, TodoStatus::InProgress);
    let (other, _) = context("ses_b", Reply::Once);
    let empty = read.execute(json!({}), &other).await.unwrap();
    assert_eq!(empty.output, "[]");
}

#[tokio::test]
async fn rejected_write_changes_nothing() {
    let store = TodoStore::new();
    let (ctx, _) = context("ses_a", Reply::Reject { feedback: None });
    let result = TodoWriteTool::new(store.clone())
        .execute(
            json!({"todos": [{"content": "x", "status": "pending", "priority": "low"}]}),
            &ctx,
        )
        .await;
    assert!(matches!(
        result,
        Err(ToolError::Permission(PermissionError::Rejected))
    ));
    assert!(store.get("ses_a").is_empty());
}

#[tokio::test]
async fn bad_status_is_an_argument_error() {
    let (ctx, _) = context("ses_a", Reply::Once);
    let result = TodoWriteTool::default()
        .execute(
            json!({"todos": [{"content": "x", "status": "done", "priority": "low"}]}),
            &ctx,
        )
        .await;
    assert!(matches!(result, Err(ToolError::InvalidArguments { .. })));
}
