//! `agent chat` in a pseudo-terminal (python3's `pty` module drives it)
//! against a local OpenAI-compatible server: the approval prompt appears,
//! "always" is chosen and the second identical request does not ask; Ctrl-C
//! during a long command cancels the turn and the prompt comes back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use super::run_cli::{Sandbox, openai_answer, openai_call, text};

#[tokio::test]
async fn chat_asks_remembers_always_and_ctrl_c_cancels_the_turn() {
    let sandbox = Sandbox::new("chat");
    let server = MockServer::start().await;
    let echo = json!({"command": "echo hi", "description": "say hi"});
    let sleep = json!({"command": "sleep 30", "description": "wait"});
    let script = [
        openai_call("bash", &echo),
        openai_answer("ok one"),
        openai_call("bash", &echo),
        openai_answer("ok two"),
        openai_call("bash", &sleep),
        openai_answer("never"),
    ];
    for (priority, response) in script.into_iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&server)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        server.uri()
    ));
    let steps = json!([
        ["agent chat: session", "say hi\r"],
        ["[a] Always allow", "a\r"],
        ["ok one", ""],
        ["> ", "say hi again\r"],
        ["ok two", ""],
        ["> ", "wait a while\r"],
        ["[o] once", "o\r"],
        ["sleep 30", "\u{3}"],
        ["cancelled", ""],
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
        .env("AGENT_DEMO_WORD_DELAY_MS", "0")
        .env("TERM", "xterm")
        .current_dir(&sandbox.project)
        .output()
        .await
        .expect("python3 runs the pty driver");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let segments: Vec<&str> = report["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let transcript = segments.concat();
    assert_eq!(report["ok"], true, "{transcript}");
    assert_eq!(report["status"], 0, "{transcript}");
    assert!(
        segments[1].contains("permission requested: bash"),
        "{transcript}"
    );
    assert!(segments[1].contains("patterns: echo hi"), "{transcript}");
    // The second identical request ran without asking.
    assert!(
        !segments[4].contains("permission requested"),
        "{transcript}"
    );
    assert!(segments[4].contains("→ bash echo hi"), "{transcript}");
    // After Ctrl-C no further model call was made (the turn ended).
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 5, "{transcript}");
    // "always" was remembered in the approval store: listed, then revoked.
    let listed = sandbox.agent(&["approvals", "list"], &[]).await;
    assert_eq!(text(&listed.stdout), "bash \"echo *\" allow\n");
    let revoked = sandbox
        .agent(&["approvals", "revoke", "bash", "echo *"], &[])
        .await;
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let listed = sandbox.agent(&["approvals", "list"], &[]).await;
    assert!(text(&listed.stdout).starts_with("no remembered approvals"));
    // The chat's session is stored.
    let sessions = sandbox.agent(&["sessions", "list"], &[]).await;
    assert!(
        text(&sessions.stdout).contains("say hi"),
        "{}",
        text(&sessions.stdout)
    );
}

/// Without a terminal the chat prints plainly: no progress line, no escape
/// codes; the ask is answered from the piped input.
#[tokio::test]
async fn chat_without_a_terminal_prints_plain_text() {
    use tokio::io::AsyncWriteExt;
    let sandbox = Sandbox::new("chat-plain");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .arg("chat")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("AGENT_DEMO_WORD_DELAY_MS", "0")
        .current_dir(&sandbox.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"what is this?\no\n/exit\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[o] once"), "{stderr}");
    assert!(stdout.contains("`git status` ran"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stderr}"
    );
}
