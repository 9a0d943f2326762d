#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The one-call coding agent with the built-in tools, on an
//! OpenAI-compatible server (wiremock on loopback): the first request holds
//! the system prompt (environment block, the project's AGENTS.md), the
//! agent's temperature and reasoning option; the streamed text arrives in
//! order and completely before the stream ends.

use std::sync::Arc;

use agentgate::providers::OpenAiCompatible;
use agentgate::tools::{BashTool, EditTool, GlobTool, GrepTool, ListTool, ReadTool, WriteTool};
use agentgate::{CodingAgent, ConfigLoader, DeltaField, Event, StreamExt, ToolRegistry, TurnEvent};
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn sse(lines: &[&str]) -> ResponseTemplate {
    let body = lines.join("\n\n") + "\n\n";
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_raw(body.into_bytes(), "text/event-stream")
}

#[tokio::test]
async fn one_call_agent_on_an_openai_compatible_server() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(&[
            r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Tabs, "}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"content":"as AGENTS.md "}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"content":"says."},"finish_reason":"stop"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":6,"total_tokens":56}}"#,
            "data: [DONE]",
        ]))
        .mount(&server)
        .await;

    let root = std::env::temp_dir().join(format!(
        "agentgate-examples-one-call-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("AGENTS.md"), "Indent with tabs.").unwrap();
    std::fs::write(
        project.join("opencode.json"),
        r#"{"agent": {"build": {"temperature": 0.3, "reasoningEffort": "high"}}}"#,
    )
    .unwrap();

    let model = OpenAiCompatible::new("local", "qwen3", format!("{}/v1", server.uri()));
    let tools = ToolRegistry::new()
        .with(ReadTool::default())
        .with(WriteTool)
        .with(EditTool)
        .with(BashTool::new())
        .with(GrepTool::default())
        .with(GlobTool::default())
        .with(ListTool::default());
    let home = root.join("home");
    let agent = CodingAgent::builder(&project)
        // "Always" answers remembered in memory for this run (by default
        // they are kept in the program's own data directory).
        .permissions(agentgate::permission::PermissionGate::new())
        .config(ConfigLoader::new(&project).home(&home).env(|_| None))
        .model(Arc::new(model))
        .tools(tools)
        .build()
        .await
        .unwrap();

    let mut stream = Box::pin(agent.stream("Tabs or spaces?"));
    let mut text = String::new();
    let mut result = None;
    while let Some(item) = stream.next().await {
        assert!(result.is_none(), "nothing arrives after the result");
        match item {
            TurnEvent::Event(Event::PartDelta {
                field: DeltaField::Text,
                delta,
                ..
            }) => text.push_str(&delta),
            TurnEvent::Finished(turn) => result = Some(turn.unwrap()),
            _ => {}
        }
    }
    assert_eq!(text, "Tabs, as AGENTS.md says.");
    assert_eq!(result.unwrap().text(), text);

    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let system: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let system = system.join("\n");
    assert!(system.contains("coding agent"), "{system}");
    assert!(
        system.contains(&format!("Working directory: {}", project.display())),
        "{system}"
    );
    assert!(system.contains("Indent with tabs."), "{system}");
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(3.0)
    );
    assert_eq!(body["reasoning_effort"], "high");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for name in [
        "read", "write", "edit", "bash", "grep", "glob", "list", "task",
    ] {
        assert!(tools.contains(&name), "{name} offered: {tools:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}
