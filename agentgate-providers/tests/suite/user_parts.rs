//! A user turn with several parts (a prompt, the text of an attached file,
//! an image) reaches every Chat Completions provider as an array of
//! content parts, never as the texts glued together; a lone text part
//! stays a plain string (as the AI SDK's OpenAI-compatible provider sends
//! it). Recorded per provider that speaks Chat Completions, and for a
//! configured OpenAI-compatible server (a custom `baseURL`).

#![allow(clippy::expect_used)]

use super::common::{post, run, serve, sse};
use agentgate_providers::core::{ContentPart, ModelMessage, ModelRequest, ModelRole};
use agentgate_providers::{Api, OpenAiCompatible, PROVIDERS};
use serde_json::{Value, json};

const CHAT: &str = include_str!("../fixtures/openai_chat_tool_calls.sse");
const IMAGE: &str = "data:image/png;base64,iVBORw==";

fn text(text: &str) -> ContentPart {
    ContentPart::Text {
        text: text.into(),
        provider_metadata: None,
    }
}

/// A prompt with an attached text file (as `agent run -f` sends it), one
/// with an image, then a one-line follow-up.
fn request() -> ModelRequest {
    ModelRequest::new(vec![
        ModelMessage {
            role: ModelRole::User,
            content: vec![
                text("summarise"),
                text("Called the Read tool with {\"filePath\":\"att.txt\"}"),
                text("1: hello"),
            ],
        },
        ModelMessage {
            role: ModelRole::User,
            content: vec![
                text("and this"),
                ContentPart::File {
                    media_type: "image/png".into(),
                    url: IMAGE.into(),
                    filename: Some("shot.png".into()),
                },
            ],
        },
        ModelMessage::user("and shorter"),
    ])
}

/// The messages `provider` sent for [`request`].
async fn sent_messages(provider: &str, model: &str) -> Value {
    let server = serve(post("/v1/chat/completions"), sse(CHAT)).await;
    let client = OpenAiCompatible::new(provider, model, format!("{}/v1", server.uri()))
        .with_http_client(super::common::http())
        .with_api_key("k");
    let _ = run(&client, request()).await;
    let requests = server.received_requests().await.expect("recording on");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    body["messages"].clone()
}

#[tokio::test]
async fn every_chat_completions_provider_sends_user_parts_as_an_array() {
    let expected = json!([
        {"role": "user", "content": [
            {"type": "text", "text": "summarise"},
            {"type": "text", "text": "Called the Read tool with {\"filePath\":\"att.txt\"}"},
            {"type": "text", "text": "1: hello"},
        ]},
        {"role": "user", "content": [
            {"type": "text", "text": "and this"},
            {"type": "image_url", "image_url": {"url": IMAGE}},
        ]},
        {"role": "user", "content": "and shorter"},
    ]);
    let mut providers: Vec<(&str, &str)> = PROVIDERS
        .iter()
        .filter(|p| p.api == Api::ChatCompletions)
        .map(|p| (p.id, "some-model"))
        .collect();
    // A configured OpenAI-compatible server, and OpenAI's own reasoning
    // family through Chat Completions.
    providers.extend([("local", "qwen3"), ("openai", "gpt-5")]);
    assert!(providers.iter().any(|(id, _)| *id == "ollama"));
    assert!(providers.iter().any(|(id, _)| *id == "lmstudio"));
    for (provider, model) in providers {
        assert_eq!(
            sent_messages(provider, model).await,
            expected,
            "{provider}/{model}"
        );
    }
}
