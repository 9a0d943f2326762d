//! `agent attach` end to end: `agent serve --port 0` on a local
//! OpenAI-compatible model (wiremock) whose first answer runs a command
//! the config asks about, and `agent attach URL` running the prompt there —
//! the ask rejected with opencode's warning (exit 1, nothing ran), or
//! allowed once with `--auto` (the command ran, the answer printed); an
//! unreachable server is named in the error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use super::run_cli::{
    Sandbox, bodies, local_provider, openai_answer, openai_call, openai_server, text,
};

/// `agent serve --port 0` in the sandbox's project; its URL.
pub async fn serve(sandbox: &Sandbox) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0"])
        .current_dir(&sandbox.project)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .expect("agent serve printed its URL within 60 s")
        .unwrap()
        .unwrap();
    let url = line
        .strip_prefix("agent server listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    (child, url)
}

async fn a_command_run(name: &str) -> (Sandbox, wiremock::MockServer) {
    let sandbox = Sandbox::new(name);
    let server = openai_server(
        openai_call(
            "bash",
            &json!({"command": "touch made-by-agent", "description": "make a file"}),
        ),
        openai_answer("Done."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    (sandbox, server)
}

#[tokio::test]
async fn attach_rejects_asks_with_opencodes_warning_unless_auto() {
    let (sandbox, model) = a_command_run("attach-reject").await;
    let (mut server, url) = serve(&sandbox).await;
    let out = sandbox.agent(&["attach", &url, "make a file"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("permission requested: bash (touch made-by-agent); auto-rejecting"),
        "{stderr}"
    );
    assert!(stderr.contains("a permission was rejected"), "{stderr}");
    assert!(!sandbox.project.join("made-by-agent").exists());
    assert_eq!(
        bodies(&model).await.len(),
        1,
        "the turn stopped at the rejection"
    );
    server.kill().await.unwrap();

    let (sandbox, model) = a_command_run("attach-auto").await;
    let (mut server, url) = serve(&sandbox).await;
    let out = sandbox
        .agent(
            &["attach", &url, "--auto", "--format", "json", "make a file"],
            &[],
        )
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    assert!(!stderr.contains("auto-rejecting"), "{stderr}");
    assert!(
        sandbox.project.join("made-by-agent").exists(),
        "the command ran"
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().any(|l| l["type"] == "permission.asked"));
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "permission.replied" && l["answer"]["reply"] == "once")
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "tool" && l["status"] == "completed")
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "turn.finished");
    assert_eq!(last["stop"], "done");
    assert_eq!(last["text"], "Done.");
    assert_eq!(bodies(&model).await.len(), 2);

    // The same session again, by id, in text: the answer on stdout.
    let session = last["session_id"].as_str().unwrap();
    let out = sandbox
        .agent(&["attach", &url, "--session", session, "again"], &[])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Done.\n");
    assert!(stderr.contains(&format!("session {session}")), "{stderr}");
    server.kill().await.unwrap();
}

#[tokio::test]
async fn attach_to_nothing_says_to_start_the_server() {
    let sandbox = Sandbox::new("attach-nothing");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let out = sandbox.agent(&["attach", &url, "hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("is `agent serve` running at {url}?")),
        "{stderr}"
    );
}
