//! `CodingAgent::builder(dir).build()` with no other call assembles what
//! `agent run` does in that directory: the configured model through the
//! config's `provider` entry (a local OpenAI-compatible server, with its
//! `limit`), the config's MCP server's tools, and compaction at that limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// One OpenAI chat-completions stream: `text`, then the usage.
fn stream(text: &str, prompt_tokens: u64) -> String {
    let chunk = |delta: Value, finish: Value| {
        serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "qwen3", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    };
    let usage = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3",
        "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5}
    });
    let mut body = String::new();
    for event in [
        chunk(
            serde_json::json!({"role": "assistant", "content": text}),
            Value::Null,
        ),
        chunk(serde_json::json!({}), Value::from("stop")),
        usage,
    ] {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

/// A minimal MCP server over stdio in POSIX sh: one tool, `shout`.
const MCP_SERVER: &str = r#"#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1.0.0"}}}\n' "$id" "$version" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"shout","description":"Repeats the text in capitals.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}\n' "$id" ;;
    *'"id":'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_alone_assembles_the_configured_provider_mcp_and_limit() {
    let root = std::env::temp_dir().join(format!("agentgate-one-call-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let server = MockServer::start().await;
    // The first step fills the configured window (2,000 tokens, 500 of
    // them for output: 1,500 usable), so the turn compacts; later
    // requests (the summary, the continued answer) use little.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(stream("A first look.", 1_800)))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(stream("Done.", 100)))
        .with_priority(2)
        .mount(&server)
        .await;
    write(&project.join("mcp.sh"), MCP_SERVER);
    write(
        &project.join("opencode.json"),
        &serde_json::json!({
            "model": "local/qwen3",
            "provider": {"local": {
                "options": {"baseURL": format!("{}/v1", server.uri())},
                "models": {"qwen3": {"limit": {"context": 2000, "output": 500}}}
            }},
            "mcp": {"echo": {"type": "local", "command": ["sh", project.join("mcp.sh").display().to_string()]}}
        })
        .to_string(),
    );

    // Only the loader is given, to keep the machine's own global config
    // and environment out of the test.
    // The embedder trusts the directory it wrote (its MCP server starts).
    let loader = agentgate::ConfigLoader::new(&project)
        .home(&home)
        .env(|_| None)
        .trust_project(true);
    let agent = agentgate::CodingAgent::builder(&project)
        .config(loader)
        .build()
        .await
        .expect("the agent builds from the directory's configuration");
    let mcp = agent.mcp().expect("the config's MCP server");
    let status = mcp.status().await;
    assert!(
        matches!(
            status[0].status,
            agentgate::tools::mcp::McpStatus::Connected
        ),
        "{status:?}"
    );
    let _ = agent.run("Look around.").await;

    let requests = server.received_requests().await.unwrap();
    assert!(requests.len() >= 2, "{} requests", requests.len());
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(
        first["model"], "qwen3",
        "the first request goes to the configured provider"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"echo_shout"),
        "the MCP tool is offered: {tools:?}"
    );
    assert!(tools.contains(&"bash"), "the built-in tools too: {tools:?}");
    let compacted = requests[1..].iter().any(|r| {
        String::from_utf8_lossy(&r.body)
            .contains("You write the working summary of a coding session")
    });
    assert!(compacted, "the configured limit triggers compaction");
    drop(agent);
    let _ = std::fs::remove_dir_all(&root);
}
