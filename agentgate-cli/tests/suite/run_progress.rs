//! `agent run` names a model that has not started answering: after 2 s
//! without a first byte a line on stderr (`waiting for local/qwen3, 2 s`),
//! repeated while the wait lasts; with `--format json`, a `model.waiting`
//! event on stdout and nothing on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::Value;
use wiremock::{Mock, MockServer, matchers::method};

use super::run_cli::{Sandbox, local_provider, openai_answer, text};

/// A model server that answers after `delay` (headers and body).
async fn slow_model(delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(openai_answer("Here I am.").set_delay(delay))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_slow_first_byte_is_named_on_stderr_while_the_answer_stays_clean() {
    let sandbox = Sandbox::new("progress-text");
    let server = slow_model(Duration::from_millis(4500)).await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "hello"], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Here I am.", "the answer alone on stdout");
    // Named from 2 s on (a loaded machine may tick a little late).
    let named = stderr
        .lines()
        .find_map(|l| l.strip_prefix("agent: waiting for local/qwen3, "))
        .unwrap_or_else(|| panic!("no waiting line: {stderr}"));
    let seconds: u64 = named.trim_end_matches(" s").parse().unwrap();
    assert!((2..4).contains(&seconds), "{stderr}");
}

#[tokio::test]
async fn a_quick_model_is_never_named() {
    let sandbox = Sandbox::new("progress-quick");
    let server = slow_model(Duration::ZERO).await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("waiting for"), "{stderr}");
}

#[tokio::test]
async fn json_gets_a_waiting_event_and_a_quiet_stderr() {
    let sandbox = Sandbox::new("progress-json");
    let server = slow_model(Duration::from_millis(4500)).await;
    local_provider(&sandbox, &server, "");
    let out = sandbox
        .agent(&["run", "--format", "json", "hello"], &[])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("waiting for"), "{stderr}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let waiting = events
        .iter()
        .find(|e| e["type"] == "model.waiting")
        .unwrap_or_else(|| panic!("no model.waiting event: {stdout}"));
    assert_eq!(waiting["model"], "local/qwen3");
    let seconds = waiting["seconds"].as_u64().unwrap();
    assert!((2..4).contains(&seconds), "{waiting}");
    assert!(waiting["session_id"].as_str().unwrap().starts_with("ses_"));
}
