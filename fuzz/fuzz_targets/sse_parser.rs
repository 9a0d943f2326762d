//! `agentgate_providers::SseParser`: never panics, and the events do not depend
//! on how the bytes are split into chunks (the first byte picks the chunk
//! size; the rest is the stream).
#![no_main]

use agentgate_providers::SseParser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let mut whole = SseParser::new();
    let expected = whole.push(stream);
    let mut chunked = SseParser::new();
    let mut got = Vec::new();
    for chunk in stream.chunks(1 + size as usize % 17) {
        got.extend(chunked.push(chunk));
    }
    assert_eq!(got, expected, "chunks of {}", 1 + size as usize % 17);
    assert_eq!(whole.has_pending(), chunked.has_pending());
});
