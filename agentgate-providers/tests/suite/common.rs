//! Helpers shared by the wiremock tests: serving SSE bodies (from
//! agentgate-testing) and collecting a model's stream.

#![allow(dead_code, clippy::expect_used)]

use agentgate_providers::core::{
    ContentPart, EventStream, LanguageModel, ModelError, ModelMessage, ModelRequest, ModelRole,
    StreamEvent, ToolSpec,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// The loopback SSE servers and their connection-less HTTP client (the
/// library shares one pooled client per process, which would carry dead
/// connections from one short-lived server to the next).
pub use agentgate_testing::replay::{http_client as http, post, serve, sse};

/// Collects every item of a stream.
pub async fn collect(stream: EventStream) -> Vec<Result<StreamEvent, ModelError>> {
    stream.collect().await
}

/// Starts a call and collects its events; panics if the call fails before
/// streaming.
pub async fn run(
    model: &dyn LanguageModel,
    request: ModelRequest,
) -> Vec<Result<StreamEvent, ModelError>> {
    let stream = model
        .stream(request, CancellationToken::new())
        .await
        .expect("call starts");
    collect(stream).await
}

/// Splits collected items into the events and the final error, if any.
pub fn events_and_error(
    items: Vec<Result<StreamEvent, ModelError>>,
) -> (Vec<StreamEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    let mut error = None;
    for item in items {
        match item {
            Ok(event) => {
                assert!(error.is_none(), "event after an error: {event:?}");
                events.push(event)
            }
            Err(e) => {
                assert!(error.is_none(), "two errors");
                error = Some(e)
            }
        }
    }
    (events, error)
}

/// A request with two system sections, a tool, a previous tool call with
/// its result, and a new user message.
pub fn conversation() -> ModelRequest {
    let mut signed = serde_json::Map::new();
    signed.insert(
        "anthropic".into(),
        serde_json::json!({"signature": "sig-123"}),
    );
    ModelRequest::new(vec![
        ModelMessage::user("read the crate root"),
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![
                ContentPart::Reasoning {
                    text: "I should read it.".into(),
                    provider_metadata: Some(signed),
                },
                ContentPart::Text {
                    text: "Reading.".into(),
                    provider_metadata: None,
                },
                ContentPart::ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({"path": "src/lib.rs"}),
                    provider_metadata: None,
                },
            ],
        },
        ModelMessage {
            role: ModelRole::Tool,
            content: vec![ContentPart::ToolResult {
                call_id: "call_1".into(),
                name: "read_file".into(),
                output: "//! crate docs".into(),
                is_error: false,
            }],
        },
        ModelMessage::user("now summarise"),
    ])
    .with_system(["agent prompt", "project context"])
    .with_tools(vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: std::sync::Arc::new(serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        })),
    }])
    .with_temperature(0.5)
    .with_max_output_tokens(1000)
}
