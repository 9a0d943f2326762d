//! A local server's life: it leads a process group of its own (a
//! terminal's Ctrl-C does not reach it), the whole group dies with the
//! manager, and a server that exited is started again on its next call,
//! once, with a report in the tool's result when that fails. The server is
//! tests/data/mcp_stdio_server.py, run by python3.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::Tool;
use agentgate_core::permission::{AllowAll, Ruleset};
use agentgate_tools::mcp::{McpConfig, McpManager, McpServerConfig, McpStatus};
use serde_json::json;

use super::mcp_common::{context, temp_dir};

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/mcp_stdio_server.py"
);

/// `sh -c SCRIPT` as the server `life`.
fn manager(dir: &Path, script: &str) -> McpManager {
    let config = McpConfig::new().with_server("life", McpServerConfig::local(["sh", "-c", script]));
    McpManager::new(config, dir)
}

fn find(tools: &[Arc<dyn Tool>], id: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.id() == id)
        .unwrap_or_else(|| panic!("no {id}"))
        .clone()
}

/// The process group of `pid`, while it runs (a zombie counts as gone).
fn group_of(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // state, ppid, pgrp
    (fields.first() != Some(&"Z")).then(|| fields.get(2).map(|g| g.to_string()))?
}

async fn gone(pid: &str) -> bool {
    for _ in 0..100 {
        if group_of(pid).is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn read_pid(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

#[tokio::test]
async fn a_local_server_leads_its_own_group_and_the_group_dies_with_the_manager() {
    let dir = temp_dir("group");
    // The server starts a helper of its own, as `npx` starts `node`.
    let script =
        format!("sleep 3600 & echo $! > helper.pid; echo $$ > server.pid; exec python3 '{SERVER}'");
    let manager = manager(&dir, &script);
    manager.start().await;
    assert_eq!(manager.status().await[0].status, McpStatus::Connected);
    let server = read_pid(&dir.join("server.pid"));
    let helper = read_pid(&dir.join("helper.pid"));
    let ours = group_of(&std::process::id().to_string()).unwrap();
    assert_eq!(
        group_of(&server).as_deref(),
        Some(server.as_str()),
        "a group of its own"
    );
    assert_ne!(server, ours);
    assert_eq!(
        group_of(&helper).as_deref(),
        Some(server.as_str()),
        "the helper is in it"
    );

    manager.shutdown();
    drop(manager);
    assert!(
        gone(&server).await,
        "the server {server} outlived the manager"
    );
    assert!(
        gone(&helper).await,
        "the server's helper {helper} was orphaned"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_server_that_exited_is_restarted_on_its_next_call() {
    let dir = temp_dir("restart");
    let manager = manager(&dir, &format!("exec python3 '{SERVER}'"));
    let tools = manager.tools().await;
    let (echo, exit) = (find(&tools, "life_echo"), find(&tools, "life_exit"));
    let ctx = context(Arc::new(AllowAll), Ruleset::default());
    let first = echo.execute(json!({"text": "one"}), &ctx).await.unwrap();
    let first_pid = first.output.split(':').next().unwrap().to_string();

    let mut changes = manager.changes();
    let crash = exit.execute(json!({}), &ctx).await.unwrap_err();
    assert!(crash.to_string().contains("\"life\""), "{crash}");
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the exit was not noticed")
        .unwrap();
    // Reported until something needs it again.
    let status = manager.status().await;
    assert!(
        matches!(&status[0].status, McpStatus::Failed(e) if e.to_string().contains("is not running")),
        "{}",
        status[0].status
    );

    let second = echo.execute(json!({"text": "two"}), &ctx).await.unwrap();
    let second_pid = second.output.split(':').next().unwrap();
    assert!(second.output.ends_with(": two"), "{}", second.output);
    assert_ne!(second_pid, first_pid, "a new process answered");
    assert_eq!(manager.status().await[0].status, McpStatus::Connected);

    // After a shutdown an exited server stays down.
    changes.borrow_and_update();
    exit.execute(json!({}), &ctx).await.unwrap_err();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the second exit was not noticed")
        .unwrap();
    assert!(matches!(
        &manager.status().await[0].status,
        McpStatus::Failed(_)
    ));
    manager.shutdown();
    let after = echo
        .execute(json!({"text": "three"}), &ctx)
        .await
        .unwrap_err();
    assert!(after.to_string().contains("shut down"), "{after}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failed_restart_is_reported_in_the_result_and_not_retried() {
    let dir = temp_dir("restart-fails");
    let marker = dir.join("started");
    let manager = manager(
        &dir,
        &format!("exec python3 '{SERVER}' --once '{}'", marker.display()),
    );
    let tools = manager.tools().await;
    let (echo, exit) = (find(&tools, "life_echo"), find(&tools, "life_exit"));
    let ctx = context(Arc::new(AllowAll), Ruleset::default());
    let mut changes = manager.changes();
    exit.execute(json!({}), &ctx).await.unwrap_err();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the exit was not noticed")
        .unwrap();

    let failure = echo
        .execute(json!({"text": "x"}), &ctx)
        .await
        .unwrap_err()
        .to_string();
    assert!(failure.contains("\"life\" exited"), "{failure}");
    assert!(failure.contains("could not be restarted"), "{failure}");
    assert!(failure.contains("refusing a second start"), "{failure}");
    // Once: the next call reports the same without starting it again.
    std::fs::remove_file(&marker).unwrap();
    let again = echo
        .execute(json!({"text": "x"}), &ctx)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(again, failure);
    assert!(!marker.exists(), "no third start");
    let _ = std::fs::remove_dir_all(&dir);
}
