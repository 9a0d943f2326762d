//! The remote fallback: a server that only speaks the older HTTP+SSE
//! transport (the npm reference server in `sse` mode) is reached after
//! streamable HTTP fails, as opencode does.

use std::process::Stdio;
use std::time::Duration;

use agentgate_core::permission::{Reply, Ruleset};
use agentgate_tools::mcp::{McpConfig, McpManager, McpServerConfig, McpStatus};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::mcp_common::{Recorder, context, everything_command};

#[tokio::test]
async fn a_legacy_sse_server_is_reached_through_the_fallback() {
    let Some(command) = everything_command() else {
        return;
    };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new(&command[0])
        .args([command[1].as_str(), "sse"])
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("running on port") {
                return;
            }
        }
        panic!("the SSE server exited before listening");
    })
    .await
    .expect("the SSE server did not start listening");

    let config = McpConfig::new().with_server(
        "legacy",
        McpServerConfig::remote(format!("http://127.0.0.1:{port}/sse")),
    );
    let manager = McpManager::new(config, std::env::temp_dir());
    let status = manager.status().await;
    assert_eq!(
        status[0].status,
        McpStatus::Connected,
        "{}",
        status[0].status
    );
    let tools = manager.tools().await;
    let echo = tools.iter().find(|t| t.id() == "legacy_echo").unwrap();
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(recorder.clone(), Ruleset::default());
    let output = echo
        .execute(json!({"message": "over sse"}), &ctx)
        .await
        .unwrap();
    assert!(output.output.contains("over sse"), "{}", output.output);
    assert_eq!(recorder.requests()[0].0, "legacy_echo");
    manager.shutdown();
    server.kill().await.unwrap();
}
