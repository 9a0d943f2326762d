//! The Chat Completions client against wiremock servers replaying the
//! recorded-shape fixtures, plus cut, malformed and error responses.

use super::common::{conversation, events_and_error, post, run, serve, sse};
use agentgate_providers::core::{
    FinishReason, LanguageModel, ModelError, ModelRequest, StreamEvent, ToolCall, ToolChoice, Usage,
};
use agentgate_providers::{MaxTokensField, OpenAiCompatible};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const CHAT: &str = include_str!("../fixtures/openai_chat_tool_calls.sse");
const OLLAMA: &str = include_str!("../fixtures/ollama_openai_compat_tool_call.sse");

async fn server_with(response: ResponseTemplate) -> MockServer {
    serve(post("/v1/chat/completions"), response).await
}

fn client(server: &MockServer) -> OpenAiCompatible {
    OpenAiCompatible::new("openai", "gpt-4.1", format!("{}/v1", server.uri()))
        .with_http_client(super::common::http())
        .with_api_key("sk-test")
}

fn delta(id: &str, text: &str) -> StreamEvent {
    StreamEvent::ToolInputDelta {
        id: id.into(),
        delta: text.into(),
    }
}

#[tokio::test]
async fn chat_fixture_parallel_tool_calls() {
    let server = server_with(sse(CHAT)).await;
    let items = run(&client(&server), conversation()).await;
    let (events, error) = events_and_error(items);
    assert!(error.is_none(), "{error:?}");
    let a = "call_h3JvQ0r1ZkWm8uYc2TqP9sLa";
    let b = "call_Vb2mN8pQ4rLx7kYt1sZe0aWc";
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolInputStart {
                id: a.into(),
                name: "read_file".into()
            },
            delta(a, "{\"pa"),
            delta(a, "th\": \"src/"),
            delta(a, "lib.rs\"}"),
            StreamEvent::ToolInputStart {
                id: b.into(),
                name: "grep".into()
            },
            delta(b, "{\"pattern\": \"TODO\", "),
            delta(b, "\"path\": \"src\"}"),
            StreamEvent::ToolCall(ToolCall {
                id: a.into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: None,
            }),
            StreamEvent::ToolCall(ToolCall {
                id: b.into(),
                name: "grep".into(),
                input: json!({"pattern": "TODO", "path": "src"}),
                provider_metadata: None,
            }),
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 44,
                    output: 58,
                    reasoning: 0,
                    cache_read: 768,
                    cache_write: 0,
                    total: 870,
                },
                provider_metadata: None,
            },
        ]
    );
}

#[tokio::test]
async fn ollama_fixture_whole_tool_call_and_reasoning() {
    let server = server_with(sse(OLLAMA)).await;
    let model = OpenAiCompatible::new("ollama", "qwen3:8b", format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let (events, error) = events_and_error(run(&model, ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    let id = "call_k2v9x1qz";
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::ReasoningDelta {
                id: "reasoning-0".into(),
                delta: "The user wants the crate root.".into()
            },
            StreamEvent::ReasoningEnd {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::ToolInputStart {
                id: id.into(),
                name: "read_file".into()
            },
            delta(id, "{\"path\":\"src/lib.rs\"}"),
            StreamEvent::ToolCall(ToolCall {
                id: id.into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                provider_metadata: None,
            }),
            StreamEvent::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage {
                    input: 312,
                    output: 41,
                    reasoning: 0,
                    cache_read: 0,
                    cache_write: 0,
                    total: 353,
                },
                provider_metadata: None,
            },
        ]
    );
    // No key configured: no Authorization header.
    let requests = server.received_requests().await.expect("recording on");
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn text_stream_with_reasoning_content_and_stop() {
    let body = [
        r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think"}}]}"#,
        r#"data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
        ": keep-alive comment",
        r#"data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
        r#"data: {"choices":null,"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
        "data: [DONE]",
    ]
    .join("\n\n")
        + "\n\n";
    let server = server_with(sse(body)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningStart {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::ReasoningDelta {
                id: "reasoning-0".into(),
                delta: "think".into()
            },
            StreamEvent::ReasoningEnd {
                id: "reasoning-0".into(),
                provider_metadata: None
            },
            StreamEvent::TextStart {
                id: "text-1".into()
            },
            StreamEvent::TextDelta {
                id: "text-1".into(),
                delta: "Hel".into()
            },
            StreamEvent::TextDelta {
                id: "text-1".into(),
                delta: "lo".into()
            },
            StreamEvent::TextEnd {
                id: "text-1".into(),
                provider_metadata: None
            },
            StreamEvent::Finish {
                reason: FinishReason::Stop,
                usage: Usage {
                    input: 5,
                    output: 2,
                    total: 7,
                    ..Default::default()
                },
                provider_metadata: None,
            },
        ]
    );
}

#[tokio::test]
async fn truncated_stream_is_interrupted() {
    // Cut before the usage chunk and [DONE].
    let cut: String = CHAT
        .split("\n\n")
        .take(7)
        .map(|event| format!("{event}\n\n"))
        .collect();
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

    // Cut in the middle of a line: the partial event is not parsed.
    let half = &CHAT[..CHAT.len() / 2];
    let server = server_with(sse(half)).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(
        matches!(error, Some(ModelError::Interrupted { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn finish_and_usage_without_done_is_accepted() {
    let without_done = CHAT.replace("data: [DONE]\n\n", "");
    let server = server_with(sse(without_done)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert!(error.is_none(), "{error:?}");
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Finish {
            reason: FinishReason::ToolCalls,
            ..
        })
    ));
}

#[tokio::test]
async fn malformed_json_line_is_an_error_not_a_panic() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\": [oops\n\ndata: [DONE]\n\n";
    let server = server_with(sse(body)).await;
    let (events, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    assert_eq!(events.len(), 2); // text start + delta
    match error {
        Some(ModelError::Other { message }) => assert!(message.contains("malformed"), "{message}"),
        other => panic!("expected a malformed-event error, got {other:?}"),
    }
}

#[tokio::test]
async fn error_after_the_200() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";
    let server = server_with(sse(body)).await;
    let (_, error) = events_and_error(run(&client(&server), ModelRequest::default()).await);
    match error {
        Some(ModelError::Api(api)) => {
            assert_eq!(api.message, "The server had an error");
            assert_eq!(api.status, None);
            assert!(api.is_retryable);
        }
        other => panic!("expected an API error, got {other:?}"),
    }
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
async fn rate_limit_429_keeps_headers_and_is_retryable() {
    let body = r#"{"error":{"message":"Rate limit reached for gpt-4.1. Please try again in 1.4s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;
    let error = call_error(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "2")
            .insert_header("retry-after-ms", "1400")
            .insert_header("x-ratelimit-remaining-tokens", "0")
            .set_body_string(body),
    )
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert_eq!(api.status, Some(429));
    assert!(api.is_retryable);
    assert!(api.message.starts_with("Rate limit reached"));
    assert_eq!(api.retry_after(), Some("2"));
    assert_eq!(api.retry_after_ms(), Some("1400"));
    assert_eq!(api.header("x-ratelimit-remaining-tokens"), Some("0"));
    assert_eq!(api.body.as_deref(), Some(body));
}

#[tokio::test]
async fn insufficient_quota_is_not_retried() {
    let error = call_error(ResponseTemplate::new(429).set_body_string(
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
    ))
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert!(!api.is_retryable);
}

#[tokio::test]
async fn x_should_retry_header_overrides() {
    let error = call_error(
        ResponseTemplate::new(503)
            .insert_header("x-should-retry", "false")
            .set_body_string("overloaded"),
    )
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    // The message names where it came from.
    assert!(
        api.message
            .starts_with("overloaded (POST http://127.0.0.1:")
            && api.message.ends_with("/v1/chat/completions)"),
        "{}",
        api.message
    );
    assert!(!api.is_retryable);
}

#[tokio::test]
async fn context_length_400_is_overflow() {
    let error = call_error(ResponseTemplate::new(400).set_body_string(
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
    ))
    .await;
    assert!(error.is_context_overflow(), "{error:?}");
}

#[tokio::test]
async fn ollama_404_maps_message() {
    let error = call_error(ResponseTemplate::new(404).set_body_string(
        r#"{"error":{"message":"model \"x\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}"#,
    ))
    .await;
    let ModelError::Api(api) = error else {
        panic!("expected an API error, got {error:?}")
    };
    assert_eq!(api.status, Some(404));
    assert!(!api.is_retryable);
    assert!(api.message.contains("try pulling it first"));
}

/// A refused connection is `Unreachable`, which the loop reports at once on
/// a step's first attempt, not an `Interrupted` it would retry for minutes
/// (a wrong base URL gave 2.5 minutes of silence).
#[tokio::test]
async fn connection_refused_fails_fast() {
    // A port that was free a moment ago: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let model = OpenAiCompatible::new("vllm", "m", format!("http://127.0.0.1:{port}/v1"))
        .with_http_client(super::common::http());
    let error = match model
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected a connection error"),
        Err(e) => e,
    };
    assert!(
        matches!(&error, ModelError::Unreachable { message } if message.contains("could not connect")),
        "{error:?}"
    );
}

#[tokio::test]
async fn cancelled_stream_stops_with_cancelled() {
    let server = server_with(sse(CHAT).set_delay(std::time::Duration::from_secs(30))).await;
    let cancel = CancellationToken::new();
    let model = client(&server);
    let call = model.stream(ModelRequest::default(), cancel.clone());
    cancel.cancel();
    let error = match call.await {
        Ok(_) => panic!("expected cancellation"),
        Err(e) => e,
    };
    assert_eq!(error, ModelError::Cancelled);
}

#[tokio::test]
async fn request_body_carries_system_tools_and_results() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test"))
        .respond_with(sse(CHAT))
        .expect(1)
        .mount(&server)
        .await;
    let mut request = conversation();
    request.tool_choice = ToolChoice::Tool("read_file".into());
    request.options.insert(
        "openai".into(),
        json!({"reasoning_effort": "high", "parallel_tool_calls": false}),
    );
    let model = client(&server).with_max_tokens_field(MaxTokensField::MaxCompletionTokens);
    let _ = run(&model, request).await;
    let requests = server.received_requests().await.expect("recording on");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    assert_eq!(
        body,
        json!({
            "model": "gpt-4.1",
            "messages": [
                {"role": "system", "content": "agent prompt"},
                {"role": "system", "content": "project context"},
                {"role": "user", "content": "read the crate root"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "//! crate docs"},
                {"role": "user", "content": "now summarise"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "Reads a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}],
            "tool_choice": {"type": "function", "function": {"name": "read_file"}},
            "temperature": 0.5,
            "max_completion_tokens": 1000,
            "reasoning_effort": "high",
            "parallel_tool_calls": false,
        })
    );
}
