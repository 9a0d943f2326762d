//! `agent attach` shows what the server's turn used, as `agent run` does
//! (steps, tokens, and the cost from the server model's prices), and names
//! a server model that has not started answering after 2 s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};

use super::attach_cli::serve;
use super::run_cli::{Sandbox, sse, text};

/// An answer whose last chunk reports 1200 input tokens (200 from the
/// cache) and 30 output tokens, sent after `delay`.
fn answer_with_usage(delay: Duration) -> wiremock::ResponseTemplate {
    let word = json!({"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]});
    let usage = json!({"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":30,
        "prompt_tokens_details":{"cached_tokens":200}}});
    sse(&[
        format!("data: {word}"),
        format!("data: {usage}"),
        "data: [DONE]".into(),
    ])
    .set_delay(delay)
}

async fn priced_project(name: &str, delay: Duration) -> (Sandbox, wiremock::MockServer) {
    let sandbox = Sandbox::new(name);
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(answer_with_usage(delay))
        .mount(&server)
        .await;
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}},
            "models": {{"qwen3": {{"cost": {{"input": 10, "output": 100}}}}}}}}}}}}"#,
        server.uri()
    ));
    (sandbox, server)
}

#[tokio::test]
async fn the_turns_steps_tokens_and_cost_end_the_output() {
    let (sandbox, _model) = priced_project("attach-usage", Duration::ZERO).await;
    let (mut server, url) = serve(&sandbox).await;
    let out = sandbox.agent(&["attach", &url, "hi"], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Hello.");
    // 1000 × $10/M + 30 × $100/M = $0.013.
    assert!(
        stderr.contains("agent: 1 step · 1000 tokens in, 30 out, 200 cached · $0.0130"),
        "{stderr}"
    );
    assert!(!stderr.contains("waiting for"), "{stderr}");

    let out = sandbox
        .agent(&["attach", &url, "--format", "json", "hi"], &[])
        .await;
    let stdout = text(&out.stdout);
    let finished: Value = stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "turn.finished")
        .unwrap_or_else(|| panic!("no turn.finished: {stdout}"));
    assert_eq!(finished["steps"], 1, "{finished}");
    assert_eq!(finished["usage"]["input"], 1000, "{finished}");
    assert_eq!(finished["usage"]["cache_read"], 200, "{finished}");
    assert!((finished["cost"].as_f64().unwrap() - 0.013).abs() < 1e-9);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_slow_server_model_is_named_while_it_has_not_answered() {
    let (sandbox, _model) = priced_project("attach-wait", Duration::from_millis(4500)).await;
    let (mut server, url) = serve(&sandbox).await;
    let out = sandbox.agent(&["attach", &url, "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let named = stderr
        .lines()
        .find_map(|l| l.strip_prefix("agent: waiting for local/qwen3, "))
        .unwrap_or_else(|| panic!("no waiting line: {stderr}"));
    let seconds: u64 = named.trim_end_matches(" s").parse().unwrap();
    assert!((2..4).contains(&seconds), "{stderr}");
    server.kill().await.unwrap();
}
