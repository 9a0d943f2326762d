//! The Anthropic Messages client against wiremock servers replaying the
//! recorded-shape fixtures, plus cut, malformed and error responses, and
//! the request body (system, tools, tool results, thinking, cache_control).

use super::common::{conversation, events_and_error, post, run, serve, sse};
use agentgate_providers::Anthropic;
use agentgate_providers::core::{
    FinishReason, LanguageModel, ModelError, ModelMessage, ModelRequest, StreamEvent, ToolCall,
    Usage,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const THINKING: &str = include_str!("../fixtures/anthropic_messages_thinking_tool_use.sse");
const STREAM_ERROR: &str = include_str!("../fixtures/anthropic_stream_error.sse");

async fn server_with(response: ResponseTemplate) -> MockServer {
    serve(post("/v1/messages"), response).await
}

fn client(server: &MockServer) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5", "sk-ant-test")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http())
}

fn signature(sig: &str) -> agentgate_providers::core::ProviderMetadata {
    let mut meta = serde_json::Map::new();
    meta.insert("anthropic".into(), json!({"signature": sig}));
    meta
}

#[tokio::test]
async fn thinking_text_and_tool_use_fixture() {
    let server = server_with(sse(THINKING)).await;
    let (events, error) = events_and_error(run(&client(&server), conversation()).await);
    assert!(error.is_none(), "{error:?}");
    let tool = "toolu_01T1x1fJ34qAmk2tNTrN7Up6";
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::ReasoningDelta {
                id: "reasoning-0".into(),
                delta: "The user wants the crate root; I should read src/lib.rs.".into()
            },
            StreamEvent::ReasoningEnd {
                id: "reasoning-0".into(),
                provider_metadata: Some(signature(
                    "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
                )),
            },
            StreamEvent::TextStart {
                id: "text-1".into()
            },
            StreamEvent::TextDelta {
                id: "text-1".into(),
                delta: "Let me read ".into()
            },
            StreamEvent::TextDelta {
                id: "text-1".into(),
                delta: "the file.".into()
            },
            StreamEvent::TextEnd {
                id: "text-1".into(),
                provider_metadata: None
            },
            StreamEvent::ToolInputStart {
                id: tool.into(),
                name: "read_file".into()
            },
            StreamEvent::ToolInputDelta {
                id: tool.into(),
                delta: "{\"path\": \"src/".into()
            },
            StreamEvent::ToolInputDelta {
                id: tool.into(),
                delta: "lib.rs\"}".into()
            },
            StreamEvent::ToolCall(ToolCall {
                id: tool.into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: None,
            }),
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 24,
                    output: 142,
                    reasoning: 0,
                    cache_read: 2048,
                    cache_write: 0,
                    total: 0,
                },
                provider_metadata: None,
            },
        ]
    );
}

#[tokio::test]
async fn overloaded_error_event_mid_stream() {
    let server = server_with(sse(STREAM_ERROR)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(events.is_empty(), "{events:?}");
    match error {
        Some(ModelError::Api(api)) => {
            assert_eq!(api.message, "Overloaded");
            assert_eq!(api.status, None);
            assert!(api.is_retryable);
            assert!(
                api.body
                    .as_deref()
                    .is_some_and(|b| b.contains("overloaded_error"))
            );
        }
        other => panic!("expected an overloaded API error, got {other:?}"),
    }
}

#[tokio::test]
async fn truncated_stream_is_interrupted() {
    let cut = THINKING.replace(
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        "",
    );
    assert_ne!(cut, THINKING);
    let server = server_with(sse(cut)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(
        matches!(error, Some(ModelError::Interrupted { .. })),
        "{error:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Finish { .. }))
    );
    // The complete tool call was still delivered before the cut.
    assert!(events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))));

    let server = server_with(sse(&THINKING[..THINKING.len() / 3])).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(
        matches!(error, Some(ModelError::Interrupted { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn malformed_json_is_an_error_not_a_panic() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\n\n";
    let server = server_with(sse(body)).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    match error {
        Some(ModelError::Other { message }) => assert!(message.contains("malformed"), "{message}"),
        other => panic!("expected a malformed-event error, got {other:?}"),
    }
}

#[tokio::test]
async fn redacted_thinking_and_cumulative_usage() {
    let body = [
        r#"event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":300,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
        r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}"#,
        r#"event: content_block_stop
data: {"type":"content_block_stop","index":0}"#,
        r#"event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":9}}"#,
        r#"event: message_stop
data: {"type":"message_stop"}"#,
    ]
    .join("\n\n")
        + "\n\n";
    let server = server_with(sse(body)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    let mut redacted = serde_json::Map::new();
    redacted.insert("anthropic".into(), json!({"redactedData": "opaque"}));
    // `pause_turn` continues the turn: the loop goes on
    // after a `tool-calls` finish; the raw reason stays in the metadata.
    let mut stop = serde_json::Map::new();
    stop.insert("anthropic".into(), json!({"stopReason": "pause_turn"}));
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart {
                id: "reasoning-0".into(),
                provider_metadata: Some(redacted)
            },
            StreamEvent::ReasoningEnd {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 10,
                    output: 9,
                    cache_write: 300,
                    ..Default::default()
                },
                provider_metadata: Some(stop),
            },
        ]
    );
}

async fn call_error(response: ResponseTemplate) -> ModelError {
    let server = server_with(response).await;
    match client(&server)
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected the call to fail"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn rate_limit_429_with_retry_after() {
    let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 2,000,000 input tokens per minute."},"request_id":"req_011CVb7k2mJ8pQ3xYz4wA9sT"}"#;
    let error = call_error(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "12")
            .insert_header("request-id", "req_011CVb7k2mJ8pQ3xYz4wA9sT")
            .insert_header("anthropic-ratelimit-input-tokens-remaining", "0")
            .set_body_string(body),
    )
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert_eq!(api.status, Some(429));
    assert!(api.is_retryable);
    assert!(
        api.message
            .starts_with("This request would exceed the rate limit")
    );
    assert_eq!(api.retry_after(), Some("12"));
    assert_eq!(
        api.header("request-id"),
        Some("req_011CVb7k2mJ8pQ3xYz4wA9sT")
    );
    assert_eq!(
        api.header("anthropic-ratelimit-input-tokens-remaining"),
        Some("0")
    );
}

#[tokio::test]
async fn overloaded_529() {
    let error = call_error(ResponseTemplate::new(529).set_body_string(
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
    ))
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert_eq!(api.status, Some(529));
    // The message names where it came from.
    assert!(
        api.message
            .starts_with("Overloaded (POST http://127.0.0.1:")
            && api.message.ends_with("/v1/messages)"),
        "{}",
        api.message
    );
    assert!(api.is_retryable);
}

#[tokio::test]
async fn billing_error_is_not_retried_and_x_should_retry_wins() {
    let error = call_error(ResponseTemplate::new(402).set_body_string(
        r#"{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}"#,
    ))
    .await;
    assert!(
        matches!(&error, ModelError::Api(api) if !api.is_retryable),
        "{error:?}"
    );
    let error = call_error(
        ResponseTemplate::new(529)
            .insert_header("x-should-retry", "false")
            .set_body_string(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
    )
    .await;
    assert!(
        matches!(&error, ModelError::Api(api) if !api.is_retryable),
        "{error:?}"
    );
}

#[tokio::test]
async fn prompt_too_long_400_is_overflow() {
    let error = call_error(ResponseTemplate::new(400).set_body_string(
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208473 tokens > 200000 maximum"},"request_id":"req_2"}"#,
    ))
    .await;
    assert_eq!(
        error,
        ModelError::ContextOverflow {
            message: "prompt is too long: 208473 tokens > 200000 maximum".into()
        }
    );
}

#[tokio::test]
async fn request_body_system_tools_results_thinking_and_cache_control() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(sse(THINKING))
        .expect(1)
        .mount(&server)
        .await;
    let mut request = conversation();
    request.system.push("third section".into());
    request.options.insert(
        "anthropic".into(),
        json!({"thinking": {"type": "enabled", "budget_tokens": 800}}),
    );
    let _ = run(&client(&server), request).await;
    let requests = server.received_requests().await.expect("recording on");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    let cache = json!({"type": "ephemeral"});
    assert_eq!(
        body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "stream": true,
            "system": [
                {"type": "text", "text": "agent prompt", "cache_control": cache},
                {"type": "text", "text": "project context", "cache_control": cache},
                {"type": "text", "text": "third section"},
            ],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read the crate root"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I should read it.", "signature": "sig-123"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "src/lib.rs"}},
                ]},
                // The tool result and the next user text form one user
                // message; both originals are among the last two, so each
                // gets a breakpoint on its last block.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "//! crate docs", "cache_control": cache},
                    {"type": "text", "text": "now summarise", "cache_control": cache},
                ]},
            ],
            "tools": [{
                "name": "read_file",
                "description": "Reads a file",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }],
            "tool_choice": {"type": "auto"},
            // No temperature: extended thinking rejects it.
            "thinking": {"type": "enabled", "budget_tokens": 800},
        })
    );
}

#[tokio::test]
async fn breakpoints_skip_thinking_and_can_be_disabled() {
    let model = Anthropic::new("claude-sonnet-4-5", "k");
    let request = conversation();
    // The assistant message (second to last of three) ends in tool_use.
    let mut short = request.clone();
    short.messages = Arc::new(request.messages[..2].to_vec());
    let body = model.request_body(&short);
    assert_eq!(
        body["messages"][1]["content"][2]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(
        body["messages"][1]["content"][0]
            .get("cache_control")
            .is_none()
    );
    let body = model.with_prompt_caching(false).request_body(&request);
    assert!(!body.to_string().contains("cache_control"));
    // Default output cap: the model's limit, at most 32k.
    let body = Anthropic::new("claude-sonnet-4-5", "k")
        .request_body(&ModelRequest::new(vec![ModelMessage::user("hi")]));
    assert_eq!(body["max_tokens"], 32_000);
    assert!(body.get("tools").is_none());
}
