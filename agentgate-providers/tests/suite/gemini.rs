//! The Gemini client against wiremock servers replaying the recorded-shape
//! fixture (CRLF), plus cut streams, Google RPC errors and the request body.

use super::common::{conversation, events_and_error, post, run, serve, sse};
use agentgate_providers::Gemini;
use agentgate_providers::core::{
    ContentPart, FinishReason, LanguageModel, ModelError, ModelMessage, ModelRequest, ModelRole,
    ProviderMetadata, StreamEvent, ToolCall, Usage,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, query_param};
use wiremock::{MockServer, ResponseTemplate};

const FIXTURE: &str = include_str!("../fixtures/gemini_stream_function_call.sse");

async fn server_with(response: ResponseTemplate) -> MockServer {
    let route = post("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
        .and(query_param("alt", "sse"))
        .and(header("x-goog-api-key", "g-test"));
    serve(route, response).await
}

fn client(server: &MockServer) -> Gemini {
    Gemini::new("gemini-2.5-flash", "g-test")
        .with_base_url(format!("{}/v1beta", server.uri()))
        .with_http_client(super::common::http())
}

fn google(key: &str, value: &str) -> ProviderMetadata {
    let mut meta = serde_json::Map::new();
    meta.insert("google".into(), json!({ key: value }));
    meta
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
async fn function_call_fixture() {
    assert!(FIXTURE.contains("\r\n"));
    let server = server_with(sse(FIXTURE)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::TextStart {
                id: "text-0".into()
            },
            StreamEvent::TextDelta {
                id: "text-0".into(),
                delta: "I will read the file first.".into()
            },
            StreamEvent::TextEnd {
                id: "text-0".into(),
                provider_metadata: None
            },
            StreamEvent::ToolCall(ToolCall {
                id: "call_qpc2afWVFJK4vr0Pq6WiyAU_0".into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: Some(google(
                    "thoughtSignature",
                    "CikBcsjafFK168IbtVtoxVV0Tsn8O+eU45rzJahzwuKGmMbd"
                )),
            }),
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 412,
                    output: 109,
                    reasoning: 88,
                    cache_read: 0,
                    cache_write: 0,
                    total: 521,
                },
                provider_metadata: None,
            },
        ]
    );
}

#[tokio::test]
async fn stream_without_finish_reason_is_interrupted() {
    let first = FIXTURE
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
        + "\r\n\r\n";
    let server = server_with(sse(first)).await;
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
async fn malformed_chunk_is_an_error() {
    let server = server_with(sse("data: {\"candidates\": [\r\n\r\n")).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(matches!(error, Some(ModelError::Other { .. })), "{error:?}");
}

#[tokio::test]
async fn resource_exhausted_with_retry_info_is_retryable_with_a_delay() {
    let error = call_error(ResponseTemplate::new(429).set_body_string(
        r#"{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"28s"}]}}"#,
    ))
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert!(api.is_retryable);
    assert_eq!(api.retry_after_ms(), Some("28000"));

    let error = call_error(ResponseTemplate::new(429).set_body_string(
        r#"{"error":{"code":429,"message":"Quota exceeded for the day","status":"RESOURCE_EXHAUSTED","details":[]}}"#,
    ))
    .await;
    assert!(
        matches!(&error, ModelError::Api(api) if !api.is_retryable),
        "{error:?}"
    );
}

#[tokio::test]
async fn unavailable_and_token_count_overflow() {
    let error = call_error(ResponseTemplate::new(503).set_body_string(
        r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
    ))
    .await;
    assert!(
        matches!(&error, ModelError::Api(api) if api.is_retryable && api.status == Some(503)),
        "{error:?}"
    );
    let error = call_error(ResponseTemplate::new(400).set_body_string(
        r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
    ))
    .await;
    assert!(error.is_context_overflow(), "{error:?}");
}

#[tokio::test]
async fn request_body_echoes_signatures_and_results() {
    let server = server_with(sse(FIXTURE)).await;
    let mut request = conversation();
    Arc::make_mut(&mut request.messages)[1] = Arc::new(ModelMessage {
        role: ModelRole::Assistant,
        content: vec![ContentPart::ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            input: json!({"path": "src/lib.rs"}),
            provider_metadata: Some(google("thoughtSignature", "sig")),
        }],
    });

    let _ = run(&client(&server), request).await;
    let requests = server.received_requests().await.expect("recording on");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    assert_eq!(
        body,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "read the crate root"}]},
                {"role": "model", "parts": [
                    {"functionCall": {"name": "read_file", "args": {"path": "src/lib.rs"}}, "thoughtSignature": "sig"},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"name": "read_file", "content": "//! crate docs"}}},
                    {"text": "now summarise"},
                ]},
            ],
            "systemInstruction": {"parts": [{"text": "agent prompt"}, {"text": "project context"}]},
            "tools": [{"functionDeclarations": [{
                "name": "read_file", "description": "Reads a file",
                "parametersJsonSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }]}],
            "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
            "generationConfig": {"temperature": 0.5, "maxOutputTokens": 1000},
        })
    );
}
