//! The OpenAI Responses client against wiremock servers replaying the
//! recorded-shape fixture, plus cut, failed and error streams and the
//! request body.

use super::common::{conversation, events_and_error, post, run, serve, sse};
use agentgate_providers::OpenAiResponses;
use agentgate_providers::core::{
    ContentPart, FinishReason, LanguageModel, ModelError, ModelMessage, ModelRequest, ModelRole,
    ProviderMetadata, StreamEvent, ToolCall, Usage,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::header;
use wiremock::{MockServer, ResponseTemplate};

const FIXTURE: &str = include_str!("../fixtures/openai_responses_function_call.sse");

async fn server_with(response: ResponseTemplate) -> MockServer {
    let route = post("/v1/responses").and(header("authorization", "Bearer sk-test"));
    serve(route, response).await
}

fn client(server: &MockServer) -> OpenAiResponses {
    OpenAiResponses::new("gpt-5", "sk-test")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http())
}

fn openai(pairs: &[(&str, &str)]) -> ProviderMetadata {
    let inner: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut meta = serde_json::Map::new();
    meta.insert("openai".into(), Value::Object(inner));
    meta
}

#[tokio::test]
async fn function_call_fixture() {
    let server = server_with(sse(FIXTURE)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    let rs = "rs_0a1b2c3d4e5f01";
    let call = "call_R7wLq2Xn9cT4bVm1";
    assert_eq!(
        events,
        vec![
            StreamEvent::ProviderMetadata {
                metadata: openai(&[("responseId", "resp_0a1b2c3d4e5f")])
            },
            StreamEvent::ReasoningStart {
                id: rs.into(),
                provider_metadata: Some(openai(&[("itemId", rs)]))
            },
            StreamEvent::ReasoningEnd {
                id: rs.into(),
                provider_metadata: Some(openai(&[
                    ("itemId", rs),
                    ("encryptedContent", "gAAAAABo-opaque-blob")
                ]))
            },
            StreamEvent::ToolInputStart {
                id: call.into(),
                name: "read_file".into()
            },
            StreamEvent::ToolInputDelta {
                id: call.into(),
                delta: "{\"path\":".into()
            },
            StreamEvent::ToolInputDelta {
                id: call.into(),
                delta: "\"src/lib.rs\"}".into()
            },
            StreamEvent::ToolCall(ToolCall {
                id: call.into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: Some(openai(&[("itemId", "fc_0a1b2c3d4e5f02")])),
            }),
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 240,
                    output: 96,
                    reasoning: 64,
                    cache_read: 1280,
                    cache_write: 0,
                    total: 1616,
                },
                provider_metadata: None,
            },
        ]
    );
}

#[tokio::test]
async fn text_and_incomplete_max_tokens() {
    let body = [
        r#"event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
        r#"event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}"#,
        r#"event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message"}}"#,
        r#"event: response.incomplete
data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}}"#,
    ]
    .join("\n\n")
        + "\n\n";
    let server = server_with(sse(body)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::TextStart { id: "msg_1".into() },
            StreamEvent::TextDelta {
                id: "msg_1".into(),
                delta: "Hi".into()
            },
            StreamEvent::TextEnd {
                id: "msg_1".into(),
                provider_metadata: None
            },
            StreamEvent::Finish {
                reason: FinishReason::Length,
                usage: Usage {
                    input: 3,
                    output: 1,
                    total: 4,
                    ..Default::default()
                },
                provider_metadata: None
            },
        ]
    );
}

#[tokio::test]
async fn cut_stream_is_interrupted() {
    let cut = FIXTURE
        .split("event: response.completed")
        .next()
        .unwrap_or_default();
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
}

#[tokio::test]
async fn failed_response_and_error_event() {
    let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}}\n\n";
    let server = server_with(sse(failed)).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(
        matches!(error, Some(ModelError::ContextOverflow { .. })),
        "{error:?}"
    );

    let event = "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\",\"param\":null,\"sequence_number\":1}\n\n";
    let server = server_with(sse(event)).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    match error {
        Some(ModelError::Api(api)) => {
            assert_eq!(api.message, "boom");
            assert!(api.is_retryable);
        }
        other => panic!("expected an API error, got {other:?}"),
    }

    let server = server_with(sse("event: response.created\ndata: {not json\n\n")).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(matches!(error, Some(ModelError::Other { .. })), "{error:?}");
}

#[tokio::test]
async fn http_400_context_and_429() {
    let server = server_with(ResponseTemplate::new(400).set_body_string(
        r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
    ))
    .await;
    let error = match client(&server)
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    };
    assert!(error.is_context_overflow(), "{error:?}");

    let server = server_with(
        ResponseTemplate::new(429)
            .insert_header("retry-after-ms", "250")
            .set_body_string(r#"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#),
    )
    .await;
    let error = match client(&server)
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    };
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert!(api.is_retryable);
    assert_eq!(api.retry_after_ms(), Some("250"));
}

#[tokio::test]
async fn request_body_round_trips_reasoning_and_calls() {
    let server = server_with(sse(FIXTURE)).await;
    let mut request = conversation();
    // The previous assistant turn came from this API: its reasoning and
    // call carry OpenAI item ids.
    let messages = Arc::make_mut(&mut request.messages);
    messages[1] = Arc::new(ModelMessage {
        role: ModelRole::Assistant,
        content: vec![
            ContentPart::Reasoning {
                text: String::new(),
                provider_metadata: Some(openai(&[("itemId", "rs_1"), ("encryptedContent", "enc")])),
            },
            ContentPart::ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: Some(openai(&[("itemId", "fc_1")])),
            },
        ],
    });

    request.temperature = None;
    request
        .options
        .insert("openai".into(), json!({"reasoning": {"effort": "low"}}));
    let _ = run(&client(&server), request).await;
    let requests = server.received_requests().await.expect("recording on");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    assert_eq!(
        body,
        json!({
            "model": "gpt-5",
            "input": [
                {"role": "developer", "content": "agent prompt"},
                {"role": "developer", "content": "project context"},
                {"role": "user", "content": [{"type": "input_text", "text": "read the crate root"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
                {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "//! crate docs"},
                {"role": "user", "content": [{"type": "input_text", "text": "now summarise"}]},
            ],
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "tools": [{
                "type": "function", "name": "read_file", "description": "Reads a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                "strict": false,
            }],
            "tool_choice": "auto",
            "max_output_tokens": 1000,
            "reasoning": {"effort": "low"},
        })
    );
}
