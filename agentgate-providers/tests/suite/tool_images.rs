//! An image a tool returned (a `ContentPart::File` after its result in the
//! tool message) in each wire format: inside Anthropic's `tool_result`, in
//! a user message after the OpenAI Chat and Responses outputs, and as
//! inline data after Gemini's function responses.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentgate_providers::core::{ContentPart, ModelMessage, ModelRequest, ModelRole};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses};
use serde_json::{Value, json};

const URL: &str = "data:image/png;base64,iVBORw==";

fn request() -> ModelRequest {
    let call = |id: &str| ContentPart::ToolCall {
        id: id.into(),
        name: "read".into(),
        input: json!({"filePath": "shot.png"}),
        provider_metadata: None,
    };
    let result = |id: &str, output: &str| ContentPart::ToolResult {
        call_id: id.into(),
        name: "read".into(),
        output: output.into(),
        is_error: false,
    };
    ModelRequest::new(vec![
        ModelMessage::user("look"),
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![call("call_1"), call("call_2")],
        },
        ModelMessage {
            role: ModelRole::Tool,
            content: vec![
                result("call_1", "Image read successfully"),
                ContentPart::File {
                    media_type: "image/png".into(),
                    url: URL.into(),
                    filename: Some("shot.png".into()),
                },
                result("call_2", "plain text"),
            ],
        },
    ])
}

fn without_cache_control(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.remove("cache_control");
            for v in map.values_mut() {
                *v = without_cache_control(v.take());
            }
        }
        Value::Array(items) => {
            for v in items {
                *v = without_cache_control(v.take());
            }
        }
        _ => {}
    }
    value
}

#[test]
fn anthropic_puts_the_image_inside_its_tool_result() {
    let body = Anthropic::new("claude-sonnet-4-5", "k").request_body(&request());
    let results = without_cache_control(body["messages"][2]["content"].clone());
    assert_eq!(
        results,
        json!([
            {"type": "tool_result", "tool_use_id": "call_1", "content": [
                {"type": "text", "text": "Image read successfully"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}}
            ]},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "plain text"}
        ])
    );
}

#[test]
fn openai_chat_sends_the_image_in_a_user_message_after_the_tool_messages() {
    let body = OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1")
        .request_body(&request());
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
    assert_eq!(
        messages[4]["content"],
        json!([
            {"type": "text", "text": "Attached by the read tool call call_1:"},
            {"type": "image_url", "image_url": {"url": URL}}
        ])
    );
}

#[test]
fn responses_sends_the_image_in_a_user_message_after_the_outputs() {
    let body = OpenAiResponses::new("gpt-5", "k").request_body(&request());
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<String> = input
        .iter()
        .map(|item| {
            item["type"]
                .as_str()
                .or(item["role"].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    let n = kinds.len();
    assert_eq!(
        kinds[n - 3..],
        ["function_call_output", "function_call_output", "user"],
        "{kinds:?}"
    );
    assert_eq!(
        input[n - 1]["content"],
        json!([
            {"type": "input_text", "text": "Attached by the read tool call call_1:"},
            {"type": "input_image", "image_url": URL}
        ])
    );
}

#[test]
fn gemini_sends_the_image_as_inline_data_after_the_function_responses() {
    let body = Gemini::new("gemini-2.5-flash", "k").request_body(&request());
    let parts = body["contents"][2]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert!(parts[0].get("functionResponse").is_some());
    assert!(parts[1].get("functionResponse").is_some());
    assert_eq!(
        parts[2]["inlineData"],
        json!({"mimeType": "image/png", "data": "iVBORw=="})
    );
}
