//! `agent run -f FILE` and the read tool's images, against loopback
//! OpenAI-compatible and Anthropic-compatible servers: what the request
//! bodies hold, and the errors that stop a run before any request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::run_cli::{Sandbox, bodies, openai_answer, openai_call, openai_server, sse, text};

/// The first bytes of a PNG file, then some pixels' worth of bytes.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

/// `PNG` in base64.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA=";

/// `PNG` as a data URL.
fn png_url() -> String {
    format!("data:image/png;base64,{PNG_BASE64}")
}

/// The project's config: the local model `local/qwen3`, declared as taking
/// images or not.
fn local(sandbox: &Sandbox, server: &MockServer, images: bool) {
    let inputs = if images {
        json!(["text", "image"])
    } else {
        json!(["text"])
    };
    let config = json!({
        "model": "local/qwen3",
        "provider": {"local": {
            "options": {"baseURL": format!("{}/v1", server.uri())},
            "models": {"qwen3": {"modalities": {"input": inputs}}}
        }}
    });
    sandbox.config(&config.to_string());
}

fn shot(sandbox: &Sandbox) -> String {
    std::fs::write(sandbox.project.join("shot.png"), PNG).unwrap();
    "shot.png".into()
}

#[tokio::test]
async fn files_go_as_an_image_part_and_inlined_text_to_an_openai_model() {
    let sandbox = Sandbox::new("attach-openai");
    let server = openai_server(openai_answer("A dot."), openai_answer("unused")).await;
    local(&sandbox, &server, true);
    let shot = shot(&sandbox);
    let out = sandbox
        .agent(
            &[
                "run",
                "-f",
                &shot,
                "--file",
                "notes.txt",
                "What is in these?",
            ],
            &[],
        )
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "A dot.");
    let bodies = bodies(&server).await;
    let messages = bodies[0]["messages"].as_array().unwrap();
    let user = messages.iter().rfind(|m| m["role"] == "user").unwrap();
    let content = user["content"].as_array().unwrap();
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "What is in these?"})
    );
    assert!(
        content.contains(&json!({"type": "image_url", "image_url": {"url": png_url()}})),
        "{user}"
    );
    let texts: Vec<&str> = content.iter().filter_map(|p| p["text"].as_str()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Called the Read tool") && t.contains("notes.txt")),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"1: the launch code is 1234\n"),
        "the text file's content: {texts:?}"
    );
}

#[tokio::test]
async fn a_text_file_and_the_prompt_go_as_separate_parts_not_glued_together() {
    let sandbox = Sandbox::new("attach-text-parts");
    let server = openai_server(openai_answer("Says hello."), openai_answer("unused")).await;
    local(&sandbox, &server, false);
    std::fs::write(sandbox.project.join("att.txt"), "hello\n").unwrap();
    let out = sandbox
        .agent(&["run", "-f", "att.txt", "summarise"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = bodies(&server).await;
    let messages = bodies[0]["messages"].as_array().unwrap();
    let user = messages.iter().rfind(|m| m["role"] == "user").unwrap();
    let content = user["content"].as_array().expect("an array of parts");
    assert!(content.len() >= 2, "{user}");
    assert_eq!(content[0], json!({"type": "text", "text": "summarise"}));
    assert!(
        content.iter().all(|p| p["type"] == "text"),
        "text parts only: {user}"
    );
    assert!(
        content.contains(&json!({"type": "text", "text": "1: hello\n"})),
        "the file's content is a part of its own: {user}"
    );
}

#[tokio::test]
async fn an_image_for_a_model_without_image_input_is_refused_before_any_request() {
    let sandbox = Sandbox::new("attach-no-vision");
    let server = openai_server(openai_answer("unused"), openai_answer("unused")).await;
    local(&sandbox, &server, false);
    let shot = shot(&sandbox);
    let out = sandbox
        .agent(&["run", "-f", &shot, "What is it?"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("model local/qwen3 does not accept images (shot.png)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--model")
            && stderr.contains("provider.local.models.qwen3.modalities.input"),
        "says what to change: {stderr}"
    );
    assert!(bodies(&server).await.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_missing_or_binary_file_is_an_error_naming_it() {
    let sandbox = Sandbox::new("attach-missing");
    let server = openai_server(openai_answer("unused"), openai_answer("unused")).await;
    local(&sandbox, &server, true);
    let out = sandbox
        .agent(&["run", "-f", "no-such-file.txt", "hi"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("agent: --file no-such-file.txt: no such file"),
        "{stderr}"
    );
    std::fs::write(sandbox.project.join("blob.bin"), b"\0\x01\x02binary").unwrap();
    let out = sandbox.agent(&["run", "-f", "blob.bin", "hi"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("blob.bin: neither a text file nor a png, jpeg, gif or webp image"),
        "{stderr}"
    );
    assert!(bodies(&server).await.is_empty(), "nothing was sent");
}

/// The user messages of an OpenAI body after its last tool message.
fn after_tools(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let last_tool = messages.iter().rposition(|m| m["role"] == "tool").unwrap();
    messages[last_tool + 1..].to_vec()
}

#[tokio::test]
async fn the_read_tool_returns_an_image_to_a_vision_model_and_refuses_it_otherwise() {
    for images in [true, false] {
        let sandbox = Sandbox::new(&format!("read-image-{images}"));
        let server = openai_server(
            openai_call("read", &json!({"filePath": "shot.png"})),
            openai_answer("Seen."),
        )
        .await;
        local(&sandbox, &server, images);
        shot(&sandbox);
        let out = sandbox.agent(&["run", "Look at shot.png"], &[]).await;
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let bodies = bodies(&server).await;
        assert_eq!(bodies.len(), 2, "{stderr}");
        let messages = bodies[1]["messages"].as_array().unwrap();
        let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
        if images {
            assert_eq!(tool["content"], "Image read successfully");
            let after = after_tools(&bodies[1]);
            assert_eq!(after.len(), 1, "one user message with the image: {after:?}");
            assert_eq!(
                after[0]["content"],
                json!([
                    {"type": "text", "text": "Attached by the read tool call call_1:"},
                    {"type": "image_url", "image_url": {"url": png_url()}}
                ])
            );
        } else {
            let content = tool["content"].as_str().unwrap();
            assert!(content.starts_with("Cannot read binary file"), "{content}");
            assert!(after_tools(&bodies[1]).is_empty());
            assert!(!bodies[1].to_string().contains("image_url"));
        }
    }
}

/// An Anthropic Messages stream: `blocks` are (start, deltas) pairs.
fn anthropic(blocks: &[(Value, Vec<Value>)], stop: &str) -> ResponseTemplate {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}");
    let mut events = vec![event(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",
            "model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
    )];
    for (index, (start, deltas)) in blocks.iter().enumerate() {
        events.push(event(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":start}),
        ));
        for delta in deltas {
            events.push(event(
                "content_block_delta",
                json!({"type":"content_block_delta","index":index,"delta":delta}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        ));
    }
    events.push(event(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":5}}),
    ));
    events.push(event("message_stop", json!({"type":"message_stop"})));
    sse(&events)
}

#[tokio::test]
async fn an_anthropic_model_gets_the_attached_image_and_the_read_tools_image_in_its_result() {
    let sandbox = Sandbox::new("attach-anthropic");
    let server = MockServer::start().await;
    let call = anthropic(
        &[(
            json!({"type":"tool_use","id":"toolu_1","name":"read","input":{}}),
            vec![json!({"type":"input_json_delta","partial_json":"{\"filePath\":\"shot.png\"}"})],
        )],
        "tool_use",
    );
    let answer = anthropic(
        &[(
            json!({"type":"text","text":""}),
            vec![json!({"type":"text_delta","text":"Both are dots."})],
        )],
        "end_turn",
    );
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(call)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(answer)
        .with_priority(2)
        .mount(&server)
        .await;
    let shot = shot(&sandbox);
    let env = [
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
        ("ANTHROPIC_BASE_URL", format!("{}/v1", server.uri())),
    ];
    let out = sandbox
        .agent(
            &[
                "run",
                "--model",
                "anthropic/claude-sonnet-4-5",
                "-f",
                &shot,
                "Compare",
            ],
            &env,
        )
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "Both are dots.");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let image = json!({"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": PNG_BASE64
    }});
    let first = &bodies[0]["messages"][0];
    assert_eq!(first["role"], "user");
    let content = first["content"].as_array().unwrap();
    assert_eq!(content[0]["text"], "Compare");
    // Cache breakpoints may be set on the last block: compare without them.
    let strip = |mut block: Value| {
        block.as_object_mut().unwrap().remove("cache_control");
        block
    };
    assert_eq!(strip(content[1].clone()), image, "{first}");
    let messages = bodies[1]["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .unwrap();
    let result = strip(result);
    assert_eq!(
        result,
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "text", "text": "Image read successfully"},
            image
        ]})
    );
}
