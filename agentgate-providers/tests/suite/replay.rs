//! Record and replay: every recorded stream in `tests/data` (real traffic,
//! sources in `tests/data/SOURCES.md`) is served by a wiremock server to
//! the client of its API. The events must add up to what an independent
//! reading of the recording says (`tests/data/expected.json`, computed by
//! `tests/data/expect.py`), and the next request — the assistant turn
//! rebuilt from the events as the agent loop does, plus a result for each
//! tool call — must carry the call ids, signatures and reasoning back as
//! the API requires.

#![allow(clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use agentgate_providers::core::{
    ContentPart, FinishReason, LanguageModel, ModelError, ModelMessage, ModelRequest, ModelRole,
    ProviderMetadata, StreamEvent, ToolSpec,
};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses};
use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer};

use super::common::{events_and_error, run, serve, sse};

fn data_dir() -> String {
    format!("{}/tests/data", env!("CARGO_MANIFEST_DIR"))
}

fn expected() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(format!("{}/expected.json", data_dir()))
        .expect("tests/data/expected.json");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

/// The recordings on disk, by file name.
fn recordings() -> BTreeMap<String, String> {
    std::fs::read_dir(data_dir())
        .expect("tests/data")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            name.ends_with(".sse")
                .then(|| (name, std::fs::read_to_string(&path).expect("recording")))
        })
        .collect()
}

/// The client for a recording, by its file-name prefix.
fn client(name: &str, server: &MockServer) -> Box<dyn LanguageModel> {
    let base = server.uri();
    let http = super::common::http();
    if name.starts_with("anthropic-") {
        return Box::new(
            Anthropic::new("claude-sonnet-4-5", "k")
                .with_base_url(format!("{base}/v1"))
                .with_http_client(http),
        );
    }
    if name.starts_with("responses-") {
        return Box::new(
            OpenAiResponses::new("gpt-5", "k")
                .with_base_url(format!("{base}/v1"))
                .with_http_client(http),
        );
    }
    if name.starts_with("gemini-") {
        return Box::new(
            Gemini::new("gemini-2.5-flash", "k")
                .with_base_url(format!("{base}/v1beta"))
                .with_http_client(http),
        );
    }
    let (provider, model) = match name {
        n if n.contains("deepseek") => ("deepseek", "deepseek-reasoner"),
        n if n.contains("mistral-reasoning") => ("mistral", "magistral-medium-2507"),
        n if n.contains("mistral") => ("mistral", "mistral-small-latest"),
        n if n.contains("groq") => ("groq", "qwen/qwen3-32b"),
        n if n.contains("xai") => ("xai", "grok-4"),
        _ => ("azure", "model-router"),
    };
    Box::new(
        OpenAiCompatible::new(provider, model, format!("{base}/v1"))
            .with_api_key("k")
            .with_http_client(http),
    )
}

/// What a stream added up to.
#[derive(Debug, Default)]
struct Summary {
    text: String,
    reasoning: String,
    calls: Vec<Value>,
    finish: Option<FinishReason>,
    usage: Value,
    /// Signatures / encrypted reasoning in the events' provider metadata.
    signatures: Vec<String>,
}

fn signatures_in(meta: &ProviderMetadata, out: &mut Vec<String>) {
    for inner in meta.values() {
        for key in ["signature", "encryptedContent", "thoughtSignature"] {
            if let Some(s) = inner.get(key).and_then(Value::as_str) {
                out.push(s.to_string());
            }
        }
    }
}

fn merge(into: &mut Option<ProviderMetadata>, extra: &ProviderMetadata) {
    let target = into.get_or_insert_with(Default::default);
    for (provider, fields) in extra {
        match (target.get_mut(provider), fields) {
            (Some(Value::Object(have)), Value::Object(add)) => {
                for (k, v) in add {
                    have.insert(k.clone(), v.clone());
                }
            }
            _ => {
                target.insert(provider.clone(), fields.clone());
            }
        }
    }
}

/// Checks the event grammar and rebuilds the assistant turn the way the
/// agent loop does (text and reasoning blocks by id, metadata of start and
/// end merged, complete tool calls).
fn summarise(name: &str, events: &[StreamEvent]) -> (Summary, Vec<ContentPart>) {
    let mut summary = Summary::default();
    let mut parts: Vec<ContentPart> = Vec::new();
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    let mut ended: BTreeSet<String> = BTreeSet::new();
    for (i, event) in events.iter().enumerate() {
        assert!(
            summary.finish.is_none(),
            "{name}: event after Finish: {event:?}"
        );
        match event {
            StreamEvent::TextStart { id } => {
                assert!(!open.contains_key(id), "{name}: text {id} started twice");
                open.insert(id.clone(), parts.len());
                parts.push(ContentPart::Text {
                    text: String::new(),
                    provider_metadata: None,
                });
            }
            StreamEvent::ReasoningStart {
                id,
                provider_metadata,
            } => {
                assert!(
                    !open.contains_key(id),
                    "{name}: reasoning {id} started twice"
                );
                open.insert(id.clone(), parts.len());
                parts.push(ContentPart::Reasoning {
                    text: String::new(),
                    provider_metadata: provider_metadata.clone(),
                });
            }
            StreamEvent::TextDelta { id, delta } | StreamEvent::ReasoningDelta { id, delta } => {
                let at = *open
                    .get(id)
                    .unwrap_or_else(|| panic!("{name}: delta for unopened block {id} (#{i})"));
                match &mut parts[at] {
                    ContentPart::Text { text, .. } => {
                        summary.text.push_str(delta);
                        text.push_str(delta)
                    }
                    ContentPart::Reasoning { text, .. } => {
                        summary.reasoning.push_str(delta);
                        text.push_str(delta)
                    }
                    _ => unreachable!(),
                }
            }
            StreamEvent::TextEnd {
                id,
                provider_metadata,
            }
            | StreamEvent::ReasoningEnd {
                id,
                provider_metadata,
            } => {
                let at = open
                    .remove(id)
                    .unwrap_or_else(|| panic!("{name}: end of unopened block {id}"));
                ended.insert(id.clone());
                if let Some(extra) = provider_metadata {
                    match &mut parts[at] {
                        ContentPart::Text {
                            provider_metadata, ..
                        }
                        | ContentPart::Reasoning {
                            provider_metadata, ..
                        } => merge(provider_metadata, extra),
                        _ => unreachable!(),
                    }
                }
            }
            StreamEvent::ToolCall(call) => {
                assert!(!call.name.is_empty(), "{name}: tool call without a name");
                summary
                    .calls
                    .push(json!([call.id, call.name, call.input.clone()]));
                if let Some(meta) = &call.provider_metadata {
                    signatures_in(meta, &mut summary.signatures);
                }
                parts.push(ContentPart::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                    provider_metadata: call.provider_metadata.clone(),
                });
            }
            StreamEvent::Finish { reason, usage, .. } => {
                assert!(
                    open.is_empty(),
                    "{name}: blocks still open at Finish: {open:?}"
                );
                summary.finish = Some(*reason);
                summary.usage = json!({
                    "input": usage.input, "output": usage.output, "reasoning": usage.reasoning,
                    "cache_read": usage.cache_read, "cache_write": usage.cache_write,
                    "total": usage.total,
                });
            }
            _ => {}
        }
    }
    for part in &parts {
        if let ContentPart::Text {
            provider_metadata: Some(meta),
            ..
        }
        | ContentPart::Reasoning {
            provider_metadata: Some(meta),
            ..
        } = part
        {
            signatures_in(meta, &mut summary.signatures);
        }
    }
    (summary, parts)
}

/// The conversation after the recorded turn: the assistant's parts and a
/// result for every call.
fn next_request(parts: Vec<ContentPart>) -> ModelRequest {
    let results: Vec<ContentPart> = parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::ToolCall { id, name, .. } => Some(ContentPart::ToolResult {
                call_id: id.clone(),
                name: name.clone(),
                output: format!("result of {id}"),
                is_error: false,
            }),
            _ => None,
        })
        .collect();
    let mut messages = vec![
        ModelMessage::user("the recorded prompt"),
        ModelMessage {
            role: ModelRole::Assistant,
            content: parts,
        },
    ];
    if results.is_empty() {
        messages.push(ModelMessage::user("go on"));
    } else {
        messages.push(ModelMessage {
            role: ModelRole::Tool,
            content: results,
        });
    }
    ModelRequest::new(messages).with_tools(vec![ToolSpec {
        name: "weather".into(),
        description: "a tool".into(),
        parameters: std::sync::Arc::new(json!({"type": "object"})),
    }])
}

fn finish_name(reason: Option<FinishReason>) -> &'static str {
    reason.map_or("none", FinishReason::as_str)
}

/// What the second request must carry back, per API.
fn check_round_trip(name: &str, body: &Value, expect: &Value) {
    let calls = expect["calls"].as_array().cloned().unwrap_or_default();
    let signatures: Vec<&str> = expect["signatures"]
        .as_array()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = body.to_string();
    if name.starts_with("anthropic-") {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let blocks: Vec<Value> = messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .collect();
        let sent: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "thinking")
            .filter_map(|b| b["signature"].as_str())
            .collect();
        assert_eq!(sent, signatures, "{name}: thinking signatures");
        let uses: Vec<Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| json!([b["id"], b["name"], b["input"]]))
            .collect();
        assert_eq!(uses, calls, "{name}: tool_use blocks");
        for call in &calls {
            assert!(
                messages.iter().any(|m| m["role"] == "user"
                    && m["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == call[0]))),
                "{name}: no tool_result for {}",
                call[0]
            );
        }
    } else if name.starts_with("responses-") {
        let input = body["input"].as_array().cloned().unwrap_or_default();
        let sent: Vec<&str> = input
            .iter()
            .filter(|i| i["type"] == "reasoning")
            .filter_map(|i| i["encrypted_content"].as_str())
            .collect();
        assert_eq!(sent, signatures, "{name}: encrypted reasoning");
        let fcs: Vec<Value> = input
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(|i| {
                let args: Value = serde_json::from_str(i["arguments"].as_str().unwrap_or(""))
                    .unwrap_or(Value::Null);
                json!([i["call_id"], i["name"], args])
            })
            .collect();
        assert_eq!(fcs, calls, "{name}: function_call items");
        for call in &calls {
            assert!(
                input
                    .iter()
                    .any(|i| i["type"] == "function_call_output" && i["call_id"] == call[0]),
                "{name}: no function_call_output for {}",
                call[0]
            );
        }
    } else if name.starts_with("chat-") {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let assistant = messages
            .iter()
            .find(|m| m["role"] == "assistant")
            .cloned()
            .unwrap_or(Value::Null);
        let sent: Vec<Value> = assistant["tool_calls"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|c| {
                        let args: Value =
                            serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or(""))
                                .unwrap_or(Value::Null);
                        json!([c["id"], c["function"]["name"], args])
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(sent, calls, "{name}: assistant tool_calls");
        for call in &calls {
            assert!(
                messages
                    .iter()
                    .any(|m| m["role"] == "tool" && m["tool_call_id"] == call[0]),
                "{name}: no tool message for {}",
                call[0]
            );
        }
        // DeepSeek's thinking mode needs the reasoning of a tool-calling
        // turn back.
        if name.contains("deepseek") && !calls.is_empty() {
            assert_eq!(
                assistant["reasoning_content"], expect["reasoning"],
                "{name}: reasoning_content"
            );
        }
    } else if name.starts_with("gemini-") {
        let model = body["contents"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["role"] == "model"))
            .cloned()
            .unwrap_or(Value::Null);
        let parts = model["parts"].as_array().cloned().unwrap_or_default();
        let sent: Vec<Value> = parts
            .iter()
            .filter(|p| p.get("functionCall").is_some())
            .map(|p| json!([p["functionCall"]["name"], p["functionCall"]["args"]]))
            .collect();
        let want: Vec<Value> = calls.iter().map(|c| json!([c[1], c[2]])).collect();
        assert_eq!(sent, want, "{name}: functionCall parts");
        let sigs: Vec<&str> = parts
            .iter()
            .filter_map(|p| p["thoughtSignature"].as_str())
            .collect();
        assert_eq!(sigs, signatures, "{name}: thought signatures");
        let responses = text.matches("\"functionResponse\"").count();
        assert_eq!(responses, calls.len(), "{name}: functionResponse parts");
    }
}

fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[tokio::test]
async fn every_recording_replays_and_round_trips() {
    let expected = expected();
    let recordings = recordings();
    assert!(
        recordings.len() >= 30,
        "only {} recordings",
        recordings.len()
    );
    assert_eq!(
        recordings.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "expected.json is stale: rerun tests/data/expect.py"
    );
    let mut failures = Vec::new();
    for (name, body) in &recordings {
        let expect = &expected[name];
        let route = Mock::given(method("POST")).and(path_regex(
            "/v1(beta)?/(messages|responses|chat/completions|models/.*)$",
        ));
        let server = serve(route, sse(body.clone())).await;
        let model = client(name, &server);
        let (events, error) = events_and_error(run(model.as_ref(), next_request(Vec::new())).await);
        if let Some(message) = expect.get("error").and_then(Value::as_str) {
            match error {
                Some(ModelError::Api(api)) if api.message == message => {}
                other => {
                    failures.push(format!("{name}: expected error {message:?}, got {other:?}"))
                }
            }
            continue;
        }
        if let Some(error) = error {
            failures.push(format!("{name}: stream failed: {error}"));
            continue;
        }
        let (summary, parts) = match std::panic::catch_unwind(|| summarise(name, &events)) {
            Ok(done) => done,
            Err(panic) => {
                failures.push(format!("{name}: events: {}", panic_text(panic)));
                continue;
            }
        };
        let got = json!({
            "text": summary.text, "reasoning": summary.reasoning, "calls": summary.calls,
            "finish": finish_name(summary.finish), "usage": summary.usage,
        });
        let want = json!({
            "text": expect["text"], "reasoning": expect["reasoning"], "calls": expect["calls"],
            "finish": expect["finish"], "usage": expect["usage"],
        });
        if got != want {
            failures.push(format!("{name}:\n  got  {got}\n  want {want}"));
            continue;
        }
        let _ = run(model.as_ref(), next_request(parts)).await;
        let requests = server.received_requests().await.expect("recording on");
        let second: Value = serde_json::from_slice(&requests[1].body).expect("JSON body");
        if let Err(panic) = std::panic::catch_unwind(|| check_round_trip(name, &second, expect)) {
            failures.push(format!("{name}: next request: {}", panic_text(panic)));
        }
    }
    println!(
        "replay: {} recordings, {} failed",
        recordings.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
