//! `agent acp` reports what a turn used, as opencode does: a
//! `usage_update` after each step (the context in use, the model's window,
//! the session's cost so far from the configured prices) and the turn's
//! tokens in the prompt response's `usage`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::acp_cli::{agent_acp, next_message};
use super::run_cli::{Sandbox, sse};

/// An answer of two words whose last chunk reports 1200 input tokens (200
/// of them from the cache) and 30 output tokens.
fn answer_with_usage() -> wiremock::ResponseTemplate {
    let word =
        |t: &str| json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]});
    let stop = json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
    let usage = json!({"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":30,
        "total_tokens":1230,"prompt_tokens_details":{"cached_tokens":200}}});
    sse(&[
        format!("data: {}", word("Hello ")),
        format!("data: {}", word("there.")),
        format!("data: {stop}"),
        format!("data: {usage}"),
        "data: [DONE]".into(),
    ])
}

/// Sends `message` and returns the answer to it with every notification
/// that came before.
async fn call(
    stdin: &mut tokio::process::ChildStdin,
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    message: Value,
) -> (Value, Vec<Value>) {
    stdin
        .write_all(format!("{message}\n").as_bytes())
        .await
        .unwrap();
    let mut notifications = Vec::new();
    loop {
        let received = next_message(lines).await;
        if received["id"] == message["id"] && received.get("method").is_none() {
            return (received, notifications);
        }
        notifications.push(received);
    }
}

#[tokio::test]
async fn each_step_sends_a_usage_update_and_the_prompt_response_carries_the_turns_tokens() {
    let sandbox = Sandbox::new("acp-usage");
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(answer_with_usage())
        .mount(&server)
        .await;
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}},
            "models": {{"qwen3": {{"limit": {{"context": 32000, "output": 4096}},
                "cost": {{"input": 3, "output": 15}}}}}}}}}}}}"#,
        server.uri()
    ));
    let mut child = agent_acp(&sandbox);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    call(&mut stdin, &mut lines, init).await;
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": sandbox.project, "mcpServers": []}});
    let (session, _) = call(&mut stdin, &mut lines, new).await;
    let session_id = session["result"]["sessionId"].clone();
    let prompt = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}})
    };

    let (response, updates) = call(&mut stdin, &mut lines, prompt(3)).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let usage = &response["result"]["usage"];
    // 1000 uncached input + 200 cache reads + 30 output.
    assert_eq!(usage["totalTokens"], 1230, "{response}");
    assert_eq!(usage["inputTokens"], 1000, "{response}");
    assert_eq!(usage["outputTokens"], 30, "{response}");
    assert_eq!(usage["cachedReadTokens"], 200, "{response}");
    let usage_updates: Vec<&Value> = updates
        .iter()
        .map(|n| &n["params"]["update"])
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    assert_eq!(usage_updates.len(), 1, "one step, one update: {updates:?}");
    let update = usage_updates[0];
    assert_eq!(
        (update["used"].clone(), update["size"].clone()),
        (json!(1200), json!(32000))
    );
    // 1000 × $3/M + 30 × $15/M (no cache price configured).
    let first_cost = update["cost"]["amount"].as_f64().unwrap();
    assert!((first_cost - 0.00345).abs() < 1e-9, "{update}");
    assert_eq!(update["cost"]["currency"], "USD");

    // The second turn's update counts the session's cost so far.
    let (_, updates) = call(&mut stdin, &mut lines, prompt(4)).await;
    let update = updates
        .iter()
        .map(|n| &n["params"]["update"])
        .find(|u| u["sessionUpdate"] == "usage_update")
        .expect("a usage update for the second turn");
    let total = update["cost"]["amount"].as_f64().unwrap();
    assert!((total - 2.0 * first_cost).abs() < 1e-9, "{update}");
    drop(stdin);
    let _ = child.kill().await;
}
