//! The eight defects found against recorded traffic, one test
//! each where the replay corpus does not already show it, plus the error
//! bodies of the corpus (`tests/data/error-*.json`), the request rules per
//! model family, provider errors naming their URL, and a wrong base URL
//! failing fast.

#![allow(clippy::expect_used)]

use std::sync::Arc;

use agentgate_providers::core::{
    ContentPart, FinishReason, LanguageModel, ModelError, ModelMessage, ModelRequest, ModelRole,
    ProviderMetadata, StreamEvent, ToolChoice, ToolSpec,
};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::common::{events_and_error, run, serve, sse};

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR")))
        .expect("recording")
}

async fn server(response: ResponseTemplate) -> MockServer {
    serve(
        Mock::given(method("POST")).and(path_regex("/v1(beta)?/.*")),
        response,
    )
    .await
}

async fn call_error(model: &dyn LanguageModel) -> ModelError {
    match model
        .stream(ModelRequest::default(), CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected the call to fail"),
        Err(e) => e,
    }
}

fn meta(provider: &str, pairs: &[(&str, &str)]) -> ProviderMetadata {
    let inner: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut outer = serde_json::Map::new();
    outer.insert(provider.into(), Value::Object(inner));
    outer
}

fn user(text: &str) -> ModelRequest {
    ModelRequest::new(vec![ModelMessage::user(text)])
}

fn with_tool(mut request: ModelRequest) -> ModelRequest {
    request.tools = Arc::new(vec![ToolSpec {
        name: "weather".into(),
        description: "Weather".into(),
        parameters: std::sync::Arc::new(json!({"type": "object"})),
    }]);
    request
}

// ---- point 1: overflow bodies ------------------------------------------

#[tokio::test]
async fn point1_anthropic_input_plus_max_tokens_is_an_overflow() {
    let server = server(
        ResponseTemplate::new(400).set_body_string(data("error-anthropic-context-limit.json")),
    )
    .await;
    let model = Anthropic::new("claude-sonnet-4-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let error = call_error(&model).await;
    assert!(error.is_context_overflow(), "{error:?}");
}

#[tokio::test]
async fn point1_xai_maximum_prompt_length_is_an_overflow() {
    let server =
        server(ResponseTemplate::new(400).set_body_string(data("error-xai-prompt-length.json")))
            .await;
    let model = OpenAiCompatible::new("xai", "grok-4", format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let error = call_error(&model).await;
    assert_eq!(
        error,
        ModelError::ContextOverflow {
            message: "This model's maximum prompt length is 500000 but the request contains 627264 tokens.".into()
        }
    );
}

// ---- point 2: DeepSeek reasoning_content on tool-call turns ------------

#[test]
fn point2_deepseek_gets_reasoning_back_on_tool_call_turns_only() {
    let reasoning = ContentPart::Reasoning {
        text: "I need the weather tool.".into(),
        provider_metadata: None,
    };
    let call = ContentPart::ToolCall {
        id: "call_0".into(),
        name: "weather".into(),
        input: json!({"location": "Paris"}),
        provider_metadata: None,
    };
    let text = ContentPart::Text {
        text: "Sunny.".into(),
        provider_metadata: None,
    };
    let request = ModelRequest::new(vec![
        ModelMessage::user("weather?"),
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![reasoning.clone(), call],
        },
        ModelMessage {
            role: ModelRole::Tool,
            content: vec![ContentPart::ToolResult {
                call_id: "call_0".into(),
                name: "weather".into(),
                output: "sunny".into(),
                is_error: false,
            }],
        },
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![reasoning, text],
        },
        ModelMessage::user("thanks"),
    ]);
    let body = OpenAiCompatible::new("deepseek", "deepseek-reasoner", "http://127.0.0.1:9/v1")
        .request_body(&request);
    assert_eq!(
        body["messages"][1]["reasoning_content"],
        "I need the weather tool."
    );
    // A plain answer's reasoning stays out (DeepSeek rejects it there).
    assert!(
        body["messages"][3].get("reasoning_content").is_none(),
        "{body:#}"
    );
    // Other servers never get it.
    let body =
        OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1").request_body(&request);
    assert!(!body.to_string().contains("reasoning_content"));
}

// ---- point 3: Responses models missing from the registry ---------------

#[test]
fn point3_unknown_responses_models_still_get_encrypted_reasoning() {
    let body = OpenAiResponses::new("gpt-6-preview", "k").request_body(&user("hi"));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    // Known non-reasoning models do not (the API rejects the include).
    let body = OpenAiResponses::new("gpt-4.1", "k").request_body(&user("hi"));
    assert!(body.get("include").is_none(), "{body:#}");
}

#[test]
fn point3_reasoning_without_encrypted_content_is_not_sent_by_id() {
    let request = ModelRequest::new(vec![
        ModelMessage::user("hi"),
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![
                ContentPart::Reasoning {
                    text: "thought".into(),
                    provider_metadata: Some(meta("openai", &[("itemId", "rs_lost")])),
                },
                ContentPart::Text {
                    text: "Hello".into(),
                    provider_metadata: None,
                },
            ],
        },
        ModelMessage::user("again"),
    ]);
    let body = OpenAiResponses::new("gpt-5", "k").request_body(&request);
    // With `store: false` the server cannot find rs_lost by id (404).
    assert_eq!(body["store"], false);
    assert!(!body.to_string().contains("rs_lost"), "{body:#}");
}

// ---- point 4: the Responses error event nests its fields ----------------

async fn responses_error(event: &str) -> ModelError {
    let server = server(sse(format!("event: error\ndata: {event}\n\n"))).await;
    let model = OpenAiResponses::new("gpt-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let (_, error) = events_and_error(run(&model, user("hi")).await);
    error.expect("an error")
}

#[tokio::test]
async fn point4_nested_error_events_keep_message_retry_and_overflow() {
    let error = responses_error(
        r#"{"type":"error","sequence_number":2,"error":{"type":"tokens","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM)","param":null}}"#,
    )
    .await;
    match error {
        ModelError::Api(api) => {
            assert!(
                api.message.starts_with("Rate limit reached"),
                "{}",
                api.message
            );
            assert!(api.is_retryable);
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    let error = responses_error(
        r#"{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}"#,
    )
    .await;
    assert!(error.is_context_overflow(), "{error:?}");
}

// ---- point 5: Responses items matched by output_index -------------------

#[tokio::test]
async fn point5_rotating_item_ids_keep_blocks_together() {
    let server = server(sse(data("responses-copilot-id-rotation.sse"))).await;
    let model = OpenAiResponses::new("gpt-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let (events, error) = events_and_error(run(&model, user("hi")).await);
    assert!(error.is_none(), "{error:?}");
    // Every delta belongs to the block that was opened, although GitHub
    // Copilot's proxy gave each event its own item id.
    let text_ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextStart { id } | StreamEvent::TextDelta { id, .. } => Some(id.as_str()),
            StreamEvent::TextEnd { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert!(text_ids.len() > 10, "{events:?}");
    assert!(text_ids.iter().all(|id| *id == text_ids[0]), "{text_ids:?}");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(text.len() > 100, "{text}");
}

// ---- point 6: pause_turn continues the turn ----------------------------

#[tokio::test]
async fn point6_pause_turn_asks_the_loop_to_continue() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"pause_turn\"},\"usage\":{\"output_tokens\":3}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let server = server(sse(body)).await;
    let model = Anthropic::new("claude-sonnet-4-5", "k")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    let (events, error) = events_and_error(run(&model, user("search")).await);
    assert!(error.is_none(), "{error:?}");
    // The loop continues a step whose finish is `tool-calls` (§12); the raw
    // reason stays in the metadata.
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::ToolCalls,
            usage: agentgate_providers::core::Usage {
                input: 5,
                output: 3,
                ..Default::default()
            },
            provider_metadata: Some(meta("anthropic", &[("stopReason", "pause_turn")])),
        })
    );
}

// ---- point 8: Mistral thinking chunks, Gemini streamed arguments --------

#[tokio::test]
async fn point8_mistral_thinking_chunks_are_reasoning() {
    let server = server(sse(data("chat-mistral-reasoning.sse"))).await;
    let model = OpenAiCompatible::new(
        "mistral",
        "magistral-medium-2507",
        format!("{}/v1", server.uri()),
    )
    .with_http_client(super::common::http());
    let (events, error) = events_and_error(run(&model, user("2+2?")).await);
    assert!(error.is_none(), "{error:?}");
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasoning,
        "The user is asking for 2+2. This is basic arithmetic. 2+2=4."
    );
    assert!(events.contains(&StreamEvent::TextDelta {
        id: "text-1".into(),
        delta: "2 + 2 = 4".into()
    }));
}

#[tokio::test]
async fn point8_gemini_streamed_arguments_make_named_calls() {
    let server = server(sse(data("gemini-streamed-function-call-arguments.sse"))).await;
    let model = Gemini::new("gemini-3.1-pro-preview", "k")
        .with_base_url(format!("{}/v1beta", server.uri()))
        .with_http_client(super::common::http());
    let (events, error) = events_and_error(run(&model, user("weather?")).await);
    assert!(error.is_none(), "{error:?}");
    let calls: Vec<(String, Value)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(call) => Some((call.name.clone(), call.input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("getWeather".to_string(), json!({"location": "Boston"})),
            (
                "getWeather".to_string(),
                json!({"location": "San Francisco"})
            ),
        ]
    );
}

// ---- point 7: request rules per model family ---------------------------

fn sampled(mut request: ModelRequest) -> ModelRequest {
    request.temperature = Some(0.3);
    request.top_p = Some(0.9);
    request.max_output_tokens = Some(2000);
    request
}

#[test]
fn point7_openai_reasoning_families_get_no_sampling_and_max_completion_tokens() {
    for model in ["gpt-5", "gpt-5-mini", "o3", "o4-mini", "o1"] {
        let body = OpenAiCompatible::new("openai", model, "http://127.0.0.1:9/v1")
            .request_body(&sampled(user("hi")));
        assert!(body.get("temperature").is_none(), "{model}: {body:#}");
        assert!(body.get("top_p").is_none(), "{model}: {body:#}");
        assert!(body.get("max_tokens").is_none(), "{model}: {body:#}");
        assert_eq!(body["max_completion_tokens"], 2000, "{model}");
        let body = OpenAiResponses::new(model, "k").request_body(&sampled(user("hi")));
        assert!(body.get("temperature").is_none(), "{model}: {body:#}");
        assert!(body.get("top_p").is_none(), "{model}: {body:#}");
        assert_eq!(body["max_output_tokens"], 2000, "{model}");
    }
    // A sampling model keeps them.
    let body = OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1")
        .request_body(&sampled(user("hi")));
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["max_tokens"], 2000);
}

#[test]
fn point7_anthropic_thinking_budget_fits_under_max_tokens() {
    let mut request = sampled(user("hi"));
    request.options.insert(
        "anthropic".into(),
        json!({"thinking": {"type": "enabled", "budget_tokens": 8000}}),
    );
    let body = Anthropic::new("claude-sonnet-4-5", "k").request_body(&request);
    let max = body["max_tokens"].as_u64().expect("max_tokens");
    assert!(max > 8000, "max_tokens {max} must exceed the budget");
    assert_eq!(max, 10_000, "the budget on top of the requested output");
    assert!(body.get("temperature").is_none());
}

#[test]
fn point7_anthropic_thinking_is_dropped_for_a_forced_tool_choice() {
    let mut request = with_tool(sampled(user("hi")));
    request.tool_choice = ToolChoice::Tool("weather".into());
    request.options.insert(
        "anthropic".into(),
        json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    );
    let body = Anthropic::new("claude-sonnet-4-5", "k").request_body(&request);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "weather"})
    );
    assert!(body.get("thinking").is_none(), "{body:#}");
    // Without thinking, the sampling settings are allowed again.
    assert_eq!(body["temperature"], 0.3);
}

#[test]
fn point7_gemini_generation_config_option_is_merged_not_replaced() {
    let mut request = sampled(user("hi"));
    request.options.insert(
        "google".into(),
        json!({"generationConfig": {"thinkingConfig": {"includeThoughts": true}}}),
    );
    let body = Gemini::new("gemini-2.5-flash", "k").request_body(&request);
    assert_eq!(
        body["generationConfig"],
        json!({
            "temperature": 0.3, "topP": 0.9, "maxOutputTokens": 2000,
            "thinkingConfig": {"includeThoughts": true},
        })
    );
}

#[tokio::test]
async fn point7_temperature_goes_out_exactly_as_configured() {
    let server = server(sse(data("chat-mistral-text.sse"))).await;
    let model = OpenAiCompatible::new(
        "mistral",
        "mistral-small-latest",
        format!("{}/v1", server.uri()),
    )
    .with_http_client(super::common::http());
    let _ = run(&model, sampled(user("hi"))).await;
    let requests = server.received_requests().await.expect("recording on");
    let raw = String::from_utf8_lossy(&requests[0].body).to_string();
    assert!(raw.contains("\"temperature\":0.3,"), "{raw}");
    assert!(raw.contains("\"top_p\":0.9,"), "{raw}");
}

#[tokio::test]
async fn point7_unsupported_parameter_bodies_are_not_retried() {
    for file in [
        "error-openai-unsupported-max-tokens.json",
        "error-openai-unsupported-temperature.json",
    ] {
        let server = server(ResponseTemplate::new(400).set_body_string(data(file))).await;
        let model = OpenAiCompatible::new("openai", "gpt-5", format!("{}/v1", server.uri()))
            .with_http_client(super::common::http());
        match call_error(&model).await {
            ModelError::Api(api) => {
                assert!(!api.is_retryable, "{file}");
                assert!(
                    api.message.starts_with("Unsupported parameter"),
                    "{file}: {}",
                    api.message
                );
            }
            other => panic!("{file}: expected an API error, got {other:?}"),
        }
    }
}

// ---- the rest of the error corpus ----------------------------------------

#[tokio::test]
async fn quota_and_retry_info_bodies() {
    let openai = server(
        ResponseTemplate::new(429).set_body_string(data("error-openai-insufficient-quota.json")),
    )
    .await;
    let model = OpenAiResponses::new("gpt-5", "k")
        .with_base_url(format!("{}/v1", openai.uri()))
        .with_http_client(super::common::http());
    assert!(
        matches!(call_error(&model).await, ModelError::Api(api) if !api.is_retryable && api.status == Some(429))
    );
    let google = server(
        ResponseTemplate::new(429).set_body_string(data("error-gemini-429-retry-info.json")),
    )
    .await;
    let model = Gemini::new("gemini-2.5-flash", "k")
        .with_base_url(format!("{}/v1beta", google.uri()))
        .with_http_client(super::common::http());
    match call_error(&model).await {
        ModelError::Api(api) => {
            assert!(api.is_retryable);
            assert_eq!(api.retry_after_ms(), Some("34400"));
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

// ---- errors name their URL; a wrong base URL fails fast -------------------

#[tokio::test]
async fn http_errors_name_the_url_they_came_from() {
    let server = server(ResponseTemplate::new(404).set_body_string("404 page not found")).await;
    let model = OpenAiCompatible::new("vllm", "m", format!("{}/v1", server.uri()))
        .with_http_client(super::common::http());
    match call_error(&model).await {
        ModelError::Api(api) => {
            let url = format!("{}/v1/chat/completions", server.uri());
            assert!(api.message.contains(&url), "{}", api.message);
            assert!(
                api.message.starts_with("404 page not found"),
                "{}",
                api.message
            );
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_refused_connection_fails_fast_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let base = format!("http://127.0.0.1:{port}/v1");
    let model = OpenAiCompatible::new("vllm", "m", &base).with_http_client(super::common::http());
    let error = call_error(&model).await;
    // Not `Interrupted`: the loop would retry it for minutes. The loop
    // retries `Unreachable` only after an attempt that reached the server.
    let ModelError::Unreachable { message } = &error else {
        panic!("expected a non-retried error, got {error:?}")
    };
    assert!(
        message.contains(&format!("{base}/chat/completions")),
        "{message}"
    );
    assert!(message.contains("base URL"), "{message}");
}

#[tokio::test]
async fn a_base_url_without_a_scheme_is_a_clear_error() {
    let model = OpenAiCompatible::new("ollama", "m", "localhost:11434/v1");
    let error = call_error(&model).await;
    assert!(error.to_string().contains("localhost:11434/v1"), "{error}");
    assert!(error.to_string().contains("base URL"), "{error}");
}
