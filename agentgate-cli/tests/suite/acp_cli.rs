//! `agent acp` end to end: the official TypeScript ACP client
//! (`@agentclientprotocol/sdk`, driven by tests/acp/acp_client.mjs) against
//! the binary and a mock model the script serves on loopback — asks
//! answered allow once then reject, streamed chunks, tool calls with a
//! diff, cancel mid-turn, the session loaded in a new process — and the
//! JSON-RPC error of a malformed line, after which the connection is
//! still up.
//!
//! The client test runs when `AGENT_ACP_SDK` names the SDK's package
//! folder (`.ci/run` installs it with npm and sets it) and node is on
//! PATH; it says so and passes otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::run_cli::{Sandbox, text};

fn agent_acp(sandbox: &Sandbox) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("AGENT_DEMO_WORD_DELAY_MS", "0")
        .arg("acp")
        .current_dir(&sandbox.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn next_message(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("no message within 30 s")
        .unwrap()
        .expect("stdout closed");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
}

#[tokio::test]
async fn a_malformed_message_gets_a_json_rpc_error_and_the_connection_stays_up() {
    let sandbox = Sandbox::new("acp-malformed");
    let mut child = agent_acp(&sandbox);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    stdin.write_all(b"this is not json\n").await.unwrap();
    let error = next_message(&mut lines).await;
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let init = next_message(&mut lines).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);

    // A request without its required params, an unknown method and an
    // unknown session: each answered with an error, in turn.
    let bad = [
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/teleport", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
            "params": {"sessionId": "ses_unknown", "prompt": [{"type": "text", "text": "hi"}]}}),
    ];
    for request in &bad {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut codes = Vec::new();
    for _ in &bad {
        let answer = next_message(&mut lines).await;
        codes.push((answer["id"].clone(), answer["error"]["code"].clone()));
    }
    codes.sort_by_key(|(id, _)| id.as_i64());
    assert_eq!(
        codes,
        [
            (json!(2), json!(-32602)),
            (json!(3), json!(-32601)),
            (json!(4), json!(-32002)),
        ]
    );

    // Closing stdin ends the server, with status 0 and nothing else on stdout.
    drop(stdin);
    let rest = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, None);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn the_official_typescript_client_drives_agent_acp_through_asks_cancel_and_load() {
    let Ok(sdk) = std::env::var("AGENT_ACP_SDK") else {
        eprintln!(
            "acp client test skipped: AGENT_ACP_SDK is unset (.ci/run installs @agentclientprotocol/sdk and sets it)"
        );
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp/acp_client.mjs");
    let sandbox = Sandbox::new("acp-client");
    let out = tokio::process::Command::new("node")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("ACP_SDK", &sdk)
        .arg(script)
        .arg("--project")
        .arg(&sandbox.project)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agent"))
        .arg("acp")
        .current_dir(&sandbox.project)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), out)
        .await
        .expect("the ACP client did not finish within 240 s")
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}\n{stderr}", text(&out.stdout)));
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] != true)
        .collect();
    assert!(failed.is_empty(), "failed checks: {failed:#?}\n{stderr}");
    assert!(out.status.success(), "{report:#}\n{stderr}");
    // Every stage ran: the script records a check per stage, so a check
    // list that stopped early would be short.
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for stage in [
        "edit: a diff",
        "edit: the ask names the call",
        "command: status failed",
        "cancel: stopReason cancelled",
        "cancel during an ask: stopReason cancelled",
        "edit: nothing after the answer",
        "cancel: nothing after the answer",
        "load: the edit's diff replayed",
        "stdout: JSON-RPC only",
    ] {
        assert!(names.contains(&stage), "{stage} missing: {names:?}");
    }
    let kinds = &report["metrics"]["updates_by_kind"];
    for kind in [
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
    ] {
        assert!(kinds[kind].as_u64().unwrap_or(0) >= 1, "no {kind}: {kinds}");
    }
    // The demo notice or other logs went to stderr, never to stdout: the
    // report parsed, and the script saw only JSON-RPC on the agent's stdout.
    eprintln!("acp client report: {}", report["metrics"]);
}
