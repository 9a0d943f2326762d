//! Failures stay visible and contained: a server that cannot start, dies
//! during the handshake, answers garbage, hangs or crashes later is
//! reported with its name (and stderr tail), its tools vanish, and the
//! other servers and the session go on.

use std::sync::Arc;
use std::time::Duration;

use agentgate_core::Tool;
use agentgate_core::permission::{AllowAll, Ruleset};
use agentgate_tools::mcp::{McpConfig, McpError, McpManager, McpServerConfig, McpStatus};
use serde_json::json;

use super::mcp_common::{
    LoggingServer, context, everything_command, run_loop, serve_http, temp_dir,
};

fn failed(status: &McpStatus) -> &McpError {
    match status {
        McpStatus::Failed(error) => error,
        other => panic!("expected a failure, got {other}"),
    }
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_the_others_work() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let config = McpConfig::new()
        .with_server(
            "missing",
            McpServerConfig::local(["/nonexistent/mcp-server"]),
        )
        .with_server(
            "dies",
            McpServerConfig::local(["sh", "-c", "echo 'fatal: no token configured' >&2; exit 3"]),
        )
        .with_server("off", McpServerConfig::local(["true"]).with_enabled(false))
        .with_server("local", McpServerConfig::remote(&url));
    let manager = McpManager::new(config, std::env::temp_dir());
    let status = manager.status().await;
    let missing = failed(&status[0].status).to_string();
    assert!(missing.contains("\"missing\" failed to start"), "{missing}");
    assert!(missing.contains("/nonexistent/mcp-server"), "{missing}");
    let dies = failed(&status[1].status).to_string();
    println!("missing: {missing}\ndies: {dies}");
    assert!(dies.contains("\"dies\""), "{dies}");
    assert!(
        dies.contains("fatal: no token configured"),
        "stderr tail missing: {dies}"
    );
    assert_eq!(status[2].status, McpStatus::Disabled);
    assert_eq!(status[3].status, McpStatus::Connected);
    let ids: Vec<String> = manager
        .tools()
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert!(
        ids.iter()
            .all(|id| !id.starts_with("missing_") && !id.starts_with("dies_"))
    );
    assert!(ids.contains(&"local_echo".to_string()));
}

#[tokio::test]
async fn an_invalid_entry_fails_alone() {
    let config = McpConfig::from_value(&json!({
        "broken": {"type": "local", "command": []},
        "off": {"type": "remote", "url": "http://127.0.0.1:9/mcp", "enabled": false}
    }));
    let manager = McpManager::new(config, std::env::temp_dir());
    let status = manager.status().await;
    assert!(failed(&status[0].status).to_string().contains("broken"));
    assert_eq!(status[1].status, McpStatus::Disabled);
    assert!(manager.tools().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_server_answering_garbage_or_nothing_fails_within_its_timeout() {
    let config = McpConfig::new()
        .with_server(
            "garbage",
            McpServerConfig::local([
                "sh",
                "-c",
                "echo 'this is not JSON-RPC'; echo 'garbage printed' >&2; exec sleep 3600",
            ]),
        )
        .with_server("silent", McpServerConfig::local(["sleep", "3600"]));
    let manager = McpManager::new(config, std::env::temp_dir());
    let status = manager.status().await;
    let garbage = failed(&status[0].status).to_string();
    println!("garbage: {garbage}");
    assert!(garbage.contains("\"garbage\""), "{garbage}");
    let silent = failed(&status[1].status);
    assert!(
        matches!(silent, McpError::Timeout { server, after, .. } if server == "silent" && *after == Duration::from_secs(30)),
        "{silent}"
    );
    assert!(
        silent
            .to_string()
            .contains("timed out after 30000 ms while starting"),
        "{silent}"
    );
}

#[tokio::test]
async fn a_crashed_server_is_reported_its_tools_vanish_and_the_session_goes_on() {
    let Some(command) = everything_command() else {
        return;
    };
    let dir = temp_dir("crash");
    let pid_file = dir.join("pid");
    // `exec` keeps the shell's pid, so the file names the server process.
    // A second start (the restart on the next call) is refused, so the
    // crash stays visible.
    let script = format!(
        "if [ -e '{0}' ]; then echo 'refusing a second start' >&2; exit 3; fi; echo $$ > '{0}'; exec {1}",
        pid_file.display(),
        command
            .iter()
            .map(|part| format!("'{part}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let config = McpConfig::new()
        .with_server(
            "everything",
            McpServerConfig::local(["sh", "-c", script.as_str()]),
        )
        .with_server("local", McpServerConfig::remote(&url));
    let manager = McpManager::new(config, &dir);
    let tools = manager.tools().await;
    assert!(tools.iter().any(|t| t.id() == "everything_echo"));
    let echo: Arc<dyn Tool> = tools
        .iter()
        .find(|t| t.id() == "everything_echo")
        .unwrap()
        .clone();

    let mut changes = manager.changes();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    tokio::time::timeout(Duration::from_secs(20), changes.changed())
        .await
        .expect("the crash was not noticed")
        .unwrap();

    let status = manager.status().await;
    let error = failed(&status[0].status).to_string();
    println!("crashed: {error}");
    assert!(error.contains("\"everything\" is not running"), "{error}");
    assert!(
        error.contains("stderr (last lines)"),
        "no stderr tail: {error}"
    );
    assert_eq!(status[1].status, McpStatus::Connected);

    // A tool handed out before the crash starts the server again, once;
    // that failing, the call fails with both reports.
    let ctx = context(Arc::new(AllowAll), Ruleset::default());
    let failure = echo
        .execute(json!({"message": "x"}), &ctx)
        .await
        .unwrap_err()
        .to_string();
    assert!(failure.contains("\"everything\" exited"), "{failure}");
    assert!(failure.contains("refusing a second start"), "{failure}");

    // The next registry has no tool of the crashed server, and a turn that
    // calls one still finishes: the model sees an error, the other server works.
    let ids: Vec<String> = manager
        .tools()
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert!(
        ids.iter().all(|id| !id.starts_with("everything_")),
        "{ids:?}"
    );
    let run = run_loop(
        &manager,
        Ruleset::default(),
        Arc::new(AllowAll),
        vec![
            ("c1", "everything_echo", json!({"message": "x"})),
            ("c2", "local_echo", json!({"text": "alive"})),
        ],
    )
    .await;
    assert!(run.done);
    assert!(run.results[0].1, "{:?}", run.results);
    assert_eq!(run.results[1], ("echo: alive".to_string(), false));
    let _ = std::fs::remove_dir_all(&dir);
}
