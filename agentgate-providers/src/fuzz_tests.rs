//! No decoder panics, whatever the server sends: random bytes, fixtures
//! and recordings with bytes cut out, and fixtures and recordings whose
//! JSON values changed type.

use agentgate_core::StreamEvent;
use proptest::prelude::*;
use serde_json::Value;

use crate::anthropic::MessagesDecoder;
use crate::gemini::GenerateDecoder;
use crate::http::Decoder;
use crate::openai_chat::ChatDecoder;
use crate::responses::ResponsesDecoder;
use crate::sse::{SseEvent, SseParser};

const FIXTURES: &[&str] = &[
    include_str!("../tests/fixtures/anthropic_messages_thinking_tool_use.sse"),
    include_str!("../tests/fixtures/anthropic_stream_error.sse"),
    include_str!("../tests/fixtures/openai_chat_tool_calls.sse"),
    include_str!("../tests/fixtures/ollama_openai_compat_tool_call.sse"),
    include_str!("../tests/fixtures/openai_responses_function_call.sse"),
    include_str!("../tests/fixtures/gemini_stream_function_call.sse"),
    // The recorded corpus (tests/data/SOURCES.md).
    include_str!("../tests/data/anthropic-clear-thinking.sse"),
    include_str!("../tests/data/anthropic-json-tool.sse"),
    include_str!("../tests/data/anthropic-mcp.sse"),
    include_str!("../tests/data/anthropic-message-delta-input-tokens.sse"),
    include_str!("../tests/data/anthropic-programmatic-tool-calling.1.sse"),
    include_str!("../tests/data/anthropic-programmatic-tool-calling.2.sse"),
    include_str!("../tests/data/anthropic-refusal.sse"),
    include_str!("../tests/data/anthropic-text.sse"),
    include_str!("../tests/data/anthropic-tool-no-args.sse"),
    include_str!("../tests/data/anthropic-web-fetch.sse"),
    include_str!("../tests/data/chat-azure-model-router.sse"),
    include_str!("../tests/data/chat-deepseek-tool-call.sse"),
    include_str!("../tests/data/chat-groq-tool-call.sse"),
    include_str!("../tests/data/chat-mistral-incremental-tool-call.sse"),
    include_str!("../tests/data/chat-mistral-reasoning.sse"),
    include_str!("../tests/data/chat-mistral-text.sse"),
    include_str!("../tests/data/chat-mistral-tool-call.sse"),
    include_str!("../tests/data/chat-xai-text.sse"),
    include_str!("../tests/data/chat-xai-tool-call.sse"),
    include_str!("../tests/data/gemini-reasoning-gemini3.sse"),
    include_str!("../tests/data/gemini-reasoning.sse"),
    include_str!("../tests/data/gemini-streamed-function-call-arguments.sse"),
    include_str!("../tests/data/gemini-streamed-no-args-tool-call.sse"),
    include_str!("../tests/data/gemini-text.sse"),
    include_str!("../tests/data/gemini-tool-call-gemini3.sse"),
    include_str!("../tests/data/gemini-tool-call.sse"),
    include_str!("../tests/data/responses-azure-text.sse"),
    include_str!("../tests/data/responses-azure-tool-call.sse"),
    include_str!("../tests/data/responses-copilot-id-rotation.sse"),
    include_str!("../tests/data/responses-custom-tool.sse"),
    include_str!("../tests/data/responses-error-event.sse"),
    include_str!("../tests/data/responses-reasoning-encrypted-content.sse"),
];

fn decoders() -> Vec<Box<dyn Decoder>> {
    vec![
        Box::new(MessagesDecoder::default()),
        Box::new(ChatDecoder::new("fuzz".into())),
        Box::new(ResponsesDecoder::default()),
        Box::new(GenerateDecoder::default()),
    ]
}

/// Runs every decoder over the events until its first error or its end.
fn feed_all(events: &[SseEvent]) {
    for mut decoder in decoders() {
        let mut out: Vec<StreamEvent> = Vec::new();
        let mut failed = false;
        for event in events {
            if decoder.event(event.clone(), &mut out).is_err() {
                failed = true;
                break;
            }
            if decoder.finished() {
                break;
            }
        }
        if !failed && !decoder.finished() {
            let _ = decoder.end(&mut out);
        }
    }
}

/// Every scalar replaced by a value of another type.
fn confuse(value: &Value, mode: u8) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), confuse(v, mode)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| confuse(v, mode)).collect()),
        other => match (mode % 4, other) {
            (0, Value::String(_)) => Value::from(u64::MAX),
            (1, Value::Number(_)) => Value::from("7"),
            (2, _) => Value::Null,
            (3, Value::String(s)) => Value::Array(vec![Value::from(s.as_str())]),
            (_, other) => other.clone(),
        },
    }
}

#[test]
fn type_confused_fixtures_never_panic() {
    for fixture in FIXTURES {
        let events = SseParser::new().push(fixture.as_bytes());
        for mode in 0..4 {
            let confused: Vec<SseEvent> = events
                .iter()
                .map(|e| SseEvent {
                    data: serde_json::from_str::<Value>(&e.data)
                        .map(|v| confuse(&v, mode).to_string())
                        .unwrap_or_else(|_| e.data.clone()),
                    ..e.clone()
                })
                .collect();
            feed_all(&confused);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_data_never_panics(data in proptest::collection::vec(".{0,64}", 0..8)) {
        let events: Vec<SseEvent> = data
            .into_iter()
            .map(|data| SseEvent { data, ..Default::default() })
            .collect();
        feed_all(&events);
    }

    #[test]
    fn fixtures_with_bytes_cut_out_never_panic(
        which in 0..FIXTURES.len(),
        cuts in proptest::collection::vec((any::<usize>(), 1usize..8), 1..6),
    ) {
        let mut bytes = FIXTURES[which].as_bytes().to_vec();
        for (at, len) in cuts {
            let at = at % bytes.len().max(1);
            let end = (at + len).min(bytes.len());
            bytes.drain(at..end);
        }
        feed_all(&SseParser::new().push(&bytes));
    }
}
