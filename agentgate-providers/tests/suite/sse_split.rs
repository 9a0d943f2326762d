//! The SSE parser yields the same events however the fixtures are cut
//! into chunks.

use agentgate_providers::{SseEvent, SseParser, sse_events};
use futures::StreamExt;
use proptest::prelude::*;

const FIXTURES: &[&str] = &[
    include_str!("../fixtures/anthropic_messages_thinking_tool_use.sse"),
    include_str!("../fixtures/anthropic_stream_error.sse"),
    include_str!("../fixtures/openai_chat_tool_calls.sse"),
    include_str!("../fixtures/ollama_openai_compat_tool_call.sse"),
    include_str!("../fixtures/openai_responses_function_call.sse"),
    include_str!("../fixtures/gemini_stream_function_call.sse"),
];

fn parse_whole(text: &[u8]) -> Vec<SseEvent> {
    SseParser::new().push(text)
}

fn parse_split(text: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
    cuts.sort_unstable();
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut start = 0;
    for cut in cuts {
        events.extend(parser.push(&text[start..cut]));
        start = cut;
    }
    events.extend(parser.push(&text[start..]));
    events
}

#[test]
fn every_fixture_parses_to_json_events() {
    for (i, fixture) in FIXTURES.iter().enumerate() {
        let events = parse_whole(fixture.as_bytes());
        assert!(events.len() >= 2, "fixture {i} has too few events");
        for event in &events {
            if event.data != "[DONE]" {
                serde_json::from_str::<serde_json::Value>(&event.data)
                    .unwrap_or_else(|e| panic!("fixture {i}: {e}: {}", event.data));
            }
        }
    }
    // The Gemini fixture uses CRLF; its data must not keep the `\r`.
    let gemini = parse_whole(FIXTURES[5].as_bytes());
    assert_eq!(gemini.len(), 2);
    assert!(FIXTURES[5].contains("\r\n"));
    assert!(!gemini[0].data.contains('\r'));
}

#[test]
fn crlf_and_lf_versions_agree() {
    for fixture in FIXTURES {
        let lf = fixture.replace("\r\n", "\n");
        let crlf = lf.replace('\n', "\r\n");
        assert_eq!(parse_whole(lf.as_bytes()), parse_whole(crlf.as_bytes()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_splits_give_the_same_events(
        which in 0..FIXTURES.len(),
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let text = FIXTURES[which].as_bytes();
        prop_assert_eq!(parse_split(text, &cuts), parse_whole(text));
    }

    #[test]
    fn the_stream_adapter_gives_the_same_events(
        which in 0..FIXTURES.len(),
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let text = FIXTURES[which].as_bytes();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
        cuts.push(text.len());
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(Ok::<Vec<u8>, ()>(text[start..cut].to_vec()));
            start = cut;
        }
        let events: Vec<SseEvent> = futures::executor::block_on(
            sse_events(futures::stream::iter(chunks))
                .map(|e| e.expect("no transport error"))
                .collect(),
        );
        prop_assert_eq!(events, parse_whole(text));
    }

    #[test]
    fn byte_at_a_time_gives_the_same_events(which in 0..FIXTURES.len()) {
        let text = FIXTURES[which].as_bytes();
        let cuts: Vec<usize> = (0..text.len()).collect();
        prop_assert_eq!(parse_split(text, &cuts), parse_whole(text));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = SseParser::new().push(&bytes);
    }
}
