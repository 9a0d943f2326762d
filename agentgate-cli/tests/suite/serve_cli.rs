//! `agent serve` end to end: opencode's official client
//! (`@opencode-ai/sdk`, driven by tests/serve/sdk_client.mjs) against the
//! binary on a loopback port and a mock model the script serves — a
//! session created, the events streamed (text deltas, tool parts, asks),
//! an edit answered `once`, a command rejected with feedback, the
//! transcript listed, Ctrl-C stopping the server cleanly — and the
//! refusal to serve a non-loopback address without a password.
//!
//! The client test runs when `AGENT_OPENCODE_SDK` names the SDK's package
//! folder (`.ci/run` installs it with npm and sets it) and node is on
//! PATH; it says so and passes otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::Value;

use super::run_cli::{Sandbox, text};

#[tokio::test]
async fn the_official_opencode_client_drives_agent_serve_through_asks() {
    let Ok(sdk) = std::env::var("AGENT_OPENCODE_SDK") else {
        eprintln!(
            "opencode client test skipped: AGENT_OPENCODE_SDK is unset (.ci/run installs @opencode-ai/sdk and sets it)"
        );
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/serve/sdk_client.mjs");
    let sandbox = Sandbox::new("serve-client");
    let out = tokio::process::Command::new("node")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("OPENCODE_SDK", &sdk)
        .arg(script)
        .arg("--project")
        .arg(&sandbox.project)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agent"))
        .args(["serve", "--port", "0"])
        .current_dir(&sandbox.project)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), out)
        .await
        .expect("the opencode client did not finish within 240 s")
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
    // Every stage ran: a check list that stopped early would be short.
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for stage in [
        "edit: streamed text deltas",
        "edit: replied once",
        "edit: the file changed",
        "command: replied reject",
        "command: the call failed with the feedback",
        "messages: the edit completed and the command failed",
        "command.list: review",
        "session.command: the model receives the expanded template",
        "session.shell: a completed bash part",
        "session.summarize: true",
        "sigint: the server exits cleanly",
    ] {
        assert!(names.contains(&stage), "{stage} missing: {names:?}");
    }
    eprintln!("opencode client report: {}", report["metrics"]);
}

#[tokio::test]
async fn a_public_address_without_a_password_gets_a_generated_one() {
    let sandbox = Sandbox::new("serve-public");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0", "--hostname", "0.0.0.0"])
        .current_dir(&sandbox.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let port = url.rsplit(':').next().unwrap().to_string();
    let mut password = None;
    while password.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(10), stderr.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        password = line
            .split_once("password ")
            .map(|(_, rest)| rest.split_whitespace().next().unwrap().to_string());
    }
    let password = password.unwrap();
    assert!(password.len() >= 32, "{password}");
    let health = format!("http://127.0.0.1:{port}/global/health");
    let client = reqwest::Client::new();
    let refused = client.get(&health).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let allowed = client
        .get(&health)
        .basic_auth("opencode", Some(&password))
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
    child.kill().await.unwrap();
}

/// `GET /project/trust` of `agent serve ARGS` on a project whose own rule
/// allows `rm *`, and the server's stderr up to its URL.
async fn served_trust(name: &str, args: &[&str]) -> serde_json::Value {
    let sandbox = Sandbox::new(name);
    sandbox.config(r#"{"permission": {"bash": {"*": "ask", "rm *": "allow"}}}"#);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0"])
        .args(args)
        .current_dir(&sandbox.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let base = url.rsplit(' ').next().unwrap().to_string();
    let trust: serde_json::Value = reqwest::get(format!("{base}/project/trust"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    child.kill().await.unwrap();
    trust
}

#[tokio::test]
async fn the_server_says_whether_the_project_is_trusted_and_trusts_it_with_the_flag() {
    let untrusted = served_trust("serve-untrusted", &[]).await;
    assert_eq!(untrusted["trusted"], false, "{untrusted}");
    assert_eq!(untrusted["state"], "untrusted");
    let lines = untrusted["lines"].to_string();
    assert!(lines.contains("rm *"), "the looser rule is named: {lines}");
    let trusted = served_trust("serve-trusted", &["--trust-project"]).await;
    assert_eq!(trusted["trusted"], true, "{trusted}");
    assert_eq!(trusted["lines"], serde_json::json!([]));
}
