//! End to end through agentgate-core: the engine drives the Anthropic client
//! against a wiremock server for two steps, and the second request carries
//! the signed thinking block, the tool call and its result exactly as the
//! API wants them back.

#![allow(clippy::expect_used)]

use std::sync::Arc;

use super::common::sse;
use agentgate_providers::Anthropic;
use agentgate_providers::core::permission::Ruleset;
use agentgate_providers::core::{
    AgentSpec, Engine, Session, StopReason, Tool, ToolContext, ToolError, ToolOutput,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

const TOOL_STEP: &str = include_str!("../fixtures/anthropic_messages_thinking_tool_use.sse");

const ANSWER: &str = "event: message_start
data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,\"cache_read_input_tokens\":2048,\"output_tokens\":1}}}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"It holds the crate docs.\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":0}

event: message_delta
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}

event: message_stop
data: {\"type\":\"message_stop\"}

";

struct ReadFile;

#[async_trait::async_trait]
impl Tool for ReadFile {
    fn id(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Reads a file"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        assert_eq!(input, json!({"path": "src/lib.rs"}));
        Ok(ToolOutput::text("//! crate docs"))
    }
}

#[tokio::test]
async fn two_steps_round_trip_thinking_tool_use_and_results() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse(TOOL_STEP))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse(ANSWER))
        .mount(&server)
        .await;

    let model = Anthropic::new("claude-sonnet-4-5", "sk-ant-test")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let rules: Ruleset =
        serde_json::from_str(r#"[{"permission":"*","pattern":"*","action":"allow"}]"#)
            .expect("rules");
    let engine = Engine::builder(Arc::new(model))
        .agent(AgentSpec::new("build").with_permission(rules))
        .tool(ReadFile)
        .build();
    let session = engine
        .create_session(Session::new("build", "."))
        .await
        .expect("session");
    let turn = engine
        .prompt(&session.id, "what is in the crate root?")
        .await
        .expect("turn");
    assert!(
        matches!(turn.stop, StopReason::Done { .. }),
        "{:?}",
        turn.stop
    );
    assert_eq!(turn.steps, 2);
    assert_eq!(turn.text(), "It holds the crate docs.");

    let requests = server.received_requests().await.expect("recording on");
    assert_eq!(requests.len(), 2);
    let second: Value = serde_json::from_slice(&requests[1].body).expect("JSON body");
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking",
             "thinking": "The user wants the crate root; I should read src/lib.rs.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            {"type": "text", "text": "Let me read the file."},
            {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "read_file",
             "input": {"path": "src/lib.rs"}, "cache_control": {"type": "ephemeral"}},
        ]})
    );
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
               "content": "//! crate docs", "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(second["tools"][0]["name"], "read_file");
}
