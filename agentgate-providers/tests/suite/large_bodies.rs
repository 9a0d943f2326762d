//! Large histories over the wire: every client sends a history of large
//! tool outputs (the part it keeps encoded between steps and sends as
//! chunks of their own) with its exact `content-length`, never chunked
//! transfer encoding, and the server receives exactly the request body,
//! step after step.

#![allow(clippy::expect_used)]

use std::sync::Arc;

use super::common::{post, run, serve, sse};
use agentgate_providers::core::{
    ContentPart, LanguageModel, ModelMessage, ModelRequest, ModelRole, ToolSpec,
};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses};
use serde_json::{Value, json};
use wiremock::MockServer;

const CHAT: &str = include_str!("../fixtures/openai_chat_tool_calls.sse");
const RESPONSES: &str = include_str!("../fixtures/openai_responses_function_call.sse");
const ANTHROPIC: &str = include_str!("../fixtures/anthropic_messages_thinking_tool_use.sse");
const GEMINI: &str = include_str!("../fixtures/gemini_stream_function_call.sse");

/// A call and its large result (escapes and non-ASCII included).
fn step(n: usize) -> [ModelMessage; 2] {
    let id = format!("call_{n}");
    [
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![ContentPart::ToolCall {
                id: id.clone(),
                name: "bash".into(),
                input: json!({"command": format!("cat big-{n}.txt")}),
                provider_metadata: None,
            }],
        },
        ModelMessage {
            role: ModelRole::Tool,
            content: vec![ContentPart::ToolResult {
                call_id: id,
                name: "bash".into(),
                output: format!("line {n} \"quoted\" \\ é\n").repeat(4_000),
                is_error: false,
            }],
        },
    ]
}

fn first_request() -> ModelRequest {
    ModelRequest::new(vec![ModelMessage::user("print the files")])
        .with_system(["You run commands."])
        .with_tools(vec![ToolSpec {
            name: "bash".into(),
            description: "Runs a command.".into(),
            parameters: std::sync::Arc::new(
                json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            ),
        }])
}

/// Sends three growing requests through `model` and checks what `server`
/// received against `body` of each.
async fn check(
    server: &MockServer,
    model: &dyn LanguageModel,
    body: impl Fn(&ModelRequest) -> Value,
) {
    let mut request = first_request();
    let mut expected = Vec::new();
    for n in 0..3 {
        Arc::make_mut(&mut request.messages).extend(step(n).map(Arc::new));
        expected.push(body(&request));
        let _ = run(model, request.clone()).await;
    }
    let received = server.received_requests().await.expect("recording on");
    assert_eq!(received.len(), 3);
    for (got, want) in received.iter().zip(&expected) {
        assert!(
            got.headers.get("transfer-encoding").is_none(),
            "a request was sent chunked: {:?}",
            got.headers
        );
        let length = got
            .headers
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        assert_eq!(length, Some(got.body.len()));
        assert_eq!(got.body, serde_json::to_vec(want).expect("serialises"));
    }
    assert!(received[2].body.len() > 3 * 100_000);
}

#[tokio::test]
async fn chat_completions_sends_large_histories_exactly() {
    let server = serve(post("/v1/chat/completions"), sse(CHAT)).await;
    let model = OpenAiCompatible::new("openai", "gpt-4.1", format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    check(&server, &model, |r| model.request_body(r)).await;
}

#[tokio::test]
async fn responses_sends_large_histories_exactly() {
    let server = serve(post("/v1/responses"), sse(RESPONSES)).await;
    let model = OpenAiResponses::new("gpt-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    check(&server, &model, |r| model.request_body(r)).await;
}

#[tokio::test]
async fn anthropic_sends_large_histories_exactly() {
    let server = serve(post("/v1/messages"), sse(ANTHROPIC)).await;
    let model = Anthropic::new("claude-sonnet-4-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    check(&server, &model, |r| model.request_body(r)).await;
}

#[tokio::test]
async fn gemini_sends_large_histories_exactly() {
    let route = post("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    let server = serve(route, sse(GEMINI)).await;
    let model = Gemini::new("gemini-2.5-flash", "k")
        .with_base_url(format!("{}/v1beta", server.uri()))
        .with_http_client(super::common::http());
    check(&server, &model, |r| model.request_body(r)).await;
}
