//! Ctrl-C and SIGTERM end `agent run` with status 130 at every stage,
//! quickly, without sending the prompt when it had not been sent yet, and
//! without leaving a local MCP server behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use wiremock::MockServer;

use super::run_cli::{Sandbox, openai_answer, openai_server};

/// Starts `agent ARGS` in the sandbox's project, with the environment the
/// other CLI tests give it and stderr piped.
fn spawn_agent(sandbox: &Sandbox, args: &[&str]) -> Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(args)
        .current_dir(&sandbox.project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args([&format!("-{name}"), pid.as_str()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Reads stderr until a line contains `wanted`; every line read so far.
async fn stderr_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
    wanted: &str,
) -> String {
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(wanted) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(found, Ok(true), "no {wanted:?} on stderr:\n{seen}");
    seen
}

/// Whether the process `pid` still runs (a zombie waiting for its reaper
/// does not).
fn running(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn local_provider_with(sandbox: &Sandbox, server: &MockServer, extra: &str) {
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}{extra}}}"#,
        server.uri()
    ));
}

/// A local MCP server that writes its pid to `pid_file` and never answers
/// `initialize`.
fn silent_server(pid_file: &Path) -> String {
    format!(
        r#", "mcp": {{"stuck": {{"type": "local", "command": ["sh", "-c", "echo $$ > '{}'; exec sleep 3600"]}}}}"#,
        pid_file.display()
    )
}

#[tokio::test]
async fn ctrl_c_while_mcp_servers_start_exits_130_without_a_model_request() {
    let sandbox = Sandbox::new("sigint-mcp");
    let server = openai_server(openai_answer("Never."), openai_answer("Never.")).await;
    let pid_file = sandbox.root.join("mcp.pid");
    local_provider_with(&sandbox, &server, &silent_server(&pid_file));
    // A project's own MCP servers start once it is trusted.
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());

    let mut child = spawn_agent(&sandbox, &["run", "hello"]);
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The progress line names the server it waits for (after about 1 s).
    let mut stderr = stderr_until(&mut lines, "starting MCP servers: stuck").await;
    let mcp_pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(running(&mcp_pid), "the server runs while it starts");

    let sent = Instant::now();
    signal(&child, "INT");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("agent run did not exit after Ctrl-C")
        .unwrap();
    let took = sent.elapsed();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(1), lines.next_line()).await
    {
        stderr.push_str(&line);
        stderr.push('\n');
    }
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        took < Duration::from_secs(3),
        "exit took {took:?}:\n{stderr}"
    );
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "the prompt was sent after Ctrl-C"
    );
    assert!(
        !running(&mcp_pid),
        "the MCP server {mcp_pid} outlived the run"
    );
}

#[tokio::test]
async fn sigterm_while_waiting_for_the_model_exits_130() {
    let sandbox = Sandbox::new("sigterm-stream");
    // The model server takes a minute to answer.
    let server = openai_server(
        openai_answer("Late.").set_delay(Duration::from_secs(60)),
        openai_answer("Late."),
    )
    .await;
    local_provider_with(&sandbox, &server, "");

    let mut child = spawn_agent(&sandbox, &["run", "hello"]);
    let waited = tokio::time::timeout(Duration::from_secs(30), async {
        while server.received_requests().await.unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the model was never asked");

    let sent = Instant::now();
    signal(&child, "TERM");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("agent run did not exit after SIGTERM")
        .unwrap();
    let took = sent.elapsed();
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr)
        .await
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        took < Duration::from_secs(3),
        "exit took {took:?}:\n{stderr}"
    );
}

/// The MCP test server of agentgate-tools (python3): its `echo` tool
/// answers "<pid>: <text>".
const MCP_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../agentgate-tools/tests/data/mcp_stdio_server.py"
);

#[tokio::test]
async fn ctrl_c_in_chat_cancels_the_turn_and_the_mcp_server_keeps_serving() {
    let sandbox = Sandbox::new("chat-mcp");
    let server = MockServer::start().await;
    let sleep = serde_json::json!({"command": "sleep 30", "description": "wait"});
    let echo = serde_json::json!({"text": "still here"});
    let script = [
        super::run_cli::openai_call("bash", &sleep),
        super::run_cli::openai_call("life_echo", &echo),
        openai_answer("ok two"),
    ];
    for (priority, response) in script.into_iter().enumerate() {
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&server)
            .await;
    }
    let pid_file = sandbox.root.join("mcp.pid");
    local_provider_with(
        &sandbox,
        &server,
        &format!(
            r#", "permission": {{"bash": "ask"}}, "mcp": {{"life": {{"type": "local", "command": ["sh", "-c", "echo $$ >> '{}'; exec python3 '{MCP_SERVER}'"]}}}}"#,
            pid_file.display()
        ),
    );
    // A project's own MCP servers start once it is trusted.
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());
    let steps = serde_json::json!([
        ["agent chat: session", "wait a while\r"],
        ["[o] once", "o\r"],
        ["sleep 30", "\u{3}"],
        ["cancelled", ""],
        ["> ", "call the server\r"],
        ["ok two", ""],
        ["> ", "/exit\r"],
    ]);
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pty_driver.py");
    let out = tokio::process::Command::new("python3")
        .arg(driver)
        .arg(steps.to_string())
        .arg(env!("CARGO_BIN_EXE_agent"))
        .arg("chat")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("TERM", "xterm")
        .current_dir(&sandbox.project)
        .output()
        .await
        .expect("python3 runs the pty driver");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let transcript: String = report["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(report["ok"], true, "{transcript}");
    assert_eq!(report["status"], 0, "{transcript}");
    // The server that answered after Ctrl-C is the one started with the
    // chat: the terminal's Ctrl-C did not reach it, so it was started once
    // (each start appends its pid).
    let started = std::fs::read_to_string(&pid_file).unwrap();
    let pids: Vec<&str> = started.lines().collect();
    assert_eq!(
        pids.len(),
        1,
        "the server was started again: {pids:?}\n{transcript}"
    );
    let mcp_pid = pids[0].to_string();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3, "{transcript}");
    let last = String::from_utf8_lossy(&requests[2].body).into_owned();
    assert!(
        last.contains(&format!("{mcp_pid}: still here")),
        "the tool result came from another process than {mcp_pid}: {last}"
    );
    // And it ended with the chat.
    for _ in 0..40 {
        if !running(&mcp_pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !running(&mcp_pid),
        "the MCP server {mcp_pid} outlived the chat"
    );
}

/// Waits for the exit after a signal; the status, how long it took and the
/// rest of stderr.
async fn exit_after_signal(
    child: &mut Child,
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
    name: &str,
) -> (Option<i32>, Duration, String) {
    let sent = Instant::now();
    signal(child, name);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("agent run did not exit after the signal")
        .unwrap();
    let took = sent.elapsed();
    let mut rest = String::new();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(1), lines.next_line()).await
    {
        rest.push_str(&line);
        rest.push('\n');
    }
    (status.code(), took, rest)
}

#[tokio::test]
async fn a_slow_tool_is_named_and_ctrl_c_during_it_exits_130() {
    let sandbox = Sandbox::new("sigint-tool");
    let sleep = serde_json::json!({"command": "sleep 30", "description": "wait"});
    let server = openai_server(
        super::run_cli::openai_call("bash", &sleep),
        openai_answer("Never."),
    )
    .await;
    local_provider_with(&sandbox, &server, "");
    let mut child = spawn_agent(&sandbox, &["run", "--auto", "wait"]);
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let seen = stderr_until(&mut lines, "still waiting for bash sleep 30").await;
    let (code, took, rest) = exit_after_signal(&mut child, &mut lines, "INT").await;
    assert_eq!(code, Some(130), "{seen}{rest}");
    assert!(
        took < Duration::from_secs(3),
        "exit took {took:?}:\n{seen}{rest}"
    );
    // The cancelled turn made no further model call.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn ctrl_c_during_a_retry_backoff_exits_130() {
    let sandbox = Sandbox::new("sigint-backoff");
    let server = openai_server(
        wiremock::ResponseTemplate::new(500).set_body_string("busy"),
        wiremock::ResponseTemplate::new(500).set_body_string("busy"),
    )
    .await;
    local_provider_with(&sandbox, &server, "");
    let mut child = spawn_agent(&sandbox, &["run", "hello"]);
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let seen = stderr_until(&mut lines, "retrying in").await;
    let (code, took, rest) = exit_after_signal(&mut child, &mut lines, "INT").await;
    assert_eq!(code, Some(130), "{seen}{rest}");
    assert!(
        took < Duration::from_secs(3),
        "exit took {took:?}:\n{seen}{rest}"
    );
}
