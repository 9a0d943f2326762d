//! Server-sent events: an incremental parser ([`SseParser`]) and a stream
//! adapter over HTTP body chunks ([`sse_events`]).
//!
//! The parser follows the WHATWG event-stream rules that matter for model
//! APIs: lines end in `\n` or `\r\n`, `data:` lines of one event are joined
//! with `\n`, lines starting with `:` are comments, unknown fields are
//! ignored, one leading space after the colon is dropped, and a blank line
//! dispatches the event. Chunks may split an event (or a line, or a UTF-8
//! character) anywhere. An event that is not terminated by a blank line
//! when the body ends is discarded, as the standard says: a cut stream must
//! not look complete.
//!
//! Bounded against a hostile server: one event buffers at most
//! [`MAX_EVENT_BYTES`] (or the parser's own limit), and an `id` longer than
//! [`MAX_ID_BYTES`] is ignored. The last id is copied into every later
//! event, so without that bound one long id followed by a flood of tiny
//! events would make each chunk's events many times its size.

use std::collections::VecDeque;

use futures::{Stream, StreamExt};

/// One dispatched server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// An incremental server-sent-events parser: feed it byte chunks with
/// [`SseParser::push`] and collect the complete events.
///
/// ```
/// use agentgate_providers::SseParser;
///
/// let mut parser = SseParser::new();
/// assert!(parser.push(b"event: ping\nda").is_empty());
/// let events = parser.push(b"ta: {}\r\n\r\n");
/// assert_eq!(events[0].event.as_deref(), Some("ping"));
/// assert_eq!(events[0].data, "{}");
/// ```
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    /// The most one event may hold (its line and data buffered so far).
    max_event_bytes: usize,
    /// An event outgrew `max_event_bytes`: nothing more is parsed.
    overflowed: bool,
}

/// The most one event may buffer by default: 16 MiB. Model APIs send
/// events of a few kilobytes; a server that sends one without end (no
/// newline, no blank line) would otherwise grow memory without bound.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The longest `id:` value kept: 1 KiB. Event ids are cursors for a
/// reconnect (`Last-Event-ID`), a few dozen bytes; a longer one is
/// ignored, as one holding a NUL is.
pub const MAX_ID_BYTES: usize = 1024;

impl Default for SseParser {
    fn default() -> Self {
        SseParser {
            line: Vec::new(),
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            max_event_bytes: MAX_EVENT_BYTES,
            overflowed: false,
        }
    }
}

impl SseParser {
    /// A parser with no buffered input.
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser whose events may buffer at most `max` bytes each (default
    /// [`MAX_EVENT_BYTES`]).
    pub fn with_max_event_bytes(mut self, max: usize) -> Self {
        self.max_event_bytes = max;
        self
    }

    /// Whether an event outgrew the limit; the parser then takes no more
    /// input (the caller ends the stream with an error).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Feeds a chunk and returns the events it completes, in order. Once
    /// an event outgrows the limit, the rest is dropped and
    /// [`overflowed`](Self::overflowed) is true.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if self.overflowed {
            return out;
        }
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            if self.line.len() + at + self.data.len() > self.max_event_bytes {
                self.overflow();
                return out;
            }
            self.line.extend_from_slice(&rest[..at]);
            rest = &rest[at + 1..];
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if let Some(event) = self.line_complete(&line) {
                out.push(event);
            }
            // Reuse the allocation for the next line.
            line.clear();
            self.line = line;
        }
        if self.line.len() + rest.len() + self.data.len() > self.max_event_bytes {
            self.overflow();
            return out;
        }
        self.line.extend_from_slice(rest);
        out
    }

    fn overflow(&mut self) {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
    }

    /// Whether input is buffered that has not formed a complete event yet
    /// (a partial line or an event without its closing blank line).
    pub fn has_pending(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    fn line_complete(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') && value.len() <= MAX_ID_BYTES => {
                self.id = Some(value.to_string());
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            // An event without data is not dispatched (WHATWG).
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        })
    }
}

/// Why an SSE body stream failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError<E> {
    /// The transport error of the underlying byte stream.
    #[error("reading the event stream failed: {0}")]
    Transport(E),
    /// One event outgrew the parser's limit without ending.
    #[error(
        "the server sent one stream event of more than {} MiB without ending it; the stream was stopped",
        limit / (1024 * 1024)
    )]
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// Turns a stream of byte chunks (e.g. `reqwest::Response::bytes_stream`)
/// into a stream of [`SseEvent`]s. A transport error ends the stream after
/// it is yielded.
pub fn sse_events<S, B, E>(bytes: S) -> impl Stream<Item = Result<SseEvent, SseError<E>>> + Send
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send,
    E: Send + 'static,
{
    struct State<S> {
        bytes: S,
        parser: SseParser,
        ready: VecDeque<SseEvent>,
        done: bool,
        /// The limit an event outgrew: the error that ends the stream
        /// once the events completed before it are out.
        overflowed: Option<usize>,
    }
    let state = State {
        bytes,
        parser: SseParser::new(),
        ready: VecDeque::new(),
        done: false,
        overflowed: None,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if let Some(limit) = state.overflowed.take() {
                return Some((Err(SseError::EventTooLarge { limit }), state));
            }
            if state.done {
                return None;
            }
            match state.bytes.next().await {
                Some(Ok(chunk)) => {
                    state.ready.extend(state.parser.push(chunk.as_ref()));
                    if state.parser.overflowed() {
                        // What was complete still goes out first, then
                        // the error: a cut stream must not look complete.
                        state.done = true;
                        state.overflowed = Some(state.parser.max_event_bytes);
                    }
                }
                Some(Err(e)) => {
                    state.done = true;
                    return Some((Err(SseError::Transport(e)), state));
                }
                None => state.done = true,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Vec<SseEvent> {
        SseParser::new().push(input)
    }

    #[test]
    fn an_event_without_end_stops_at_the_limit() {
        let mut parser = SseParser::new().with_max_event_bytes(1024);
        assert_eq!(parser.push(b"data: ok\n\n").len(), 1);
        for _ in 0..100 {
            assert!(parser.push(&[b'x'; 100]).is_empty());
        }
        assert!(parser.overflowed());
        assert!(parser.line.capacity() < 4096, "nothing more is buffered");
        // Many data lines without the blank line count too.
        let mut lines = SseParser::new().with_max_event_bytes(1024);
        for _ in 0..100 {
            lines.push(b"data: 0123456789\n");
        }
        assert!(lines.overflowed());
    }

    #[tokio::test]
    async fn the_stream_ends_with_an_error_naming_the_limit() {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            std::iter::once(Ok(b"data: 1\n\n".to_vec()))
                .chain(std::iter::repeat_with(|| Ok(vec![b'x'; 1 << 20])).take(17))
                .collect();
        let items: Vec<_> = sse_events(futures::stream::iter(chunks)).collect().await;
        assert_eq!(items.len(), 2, "{items:?}");
        assert!(matches!(&items[0], Ok(event) if event.data == "1"));
        let Err(error) = &items[1] else {
            panic!("{items:?}")
        };
        assert!(error.to_string().contains("16 MiB"), "{error}");
    }

    #[tokio::test]
    async fn an_overflow_in_the_chunk_of_complete_events_still_ends_in_the_error() {
        let mut chunk = b"data: 1\n\ndata: 2\n\n".to_vec();
        chunk.extend(vec![b'x'; MAX_EVENT_BYTES + 1]);
        let stream = futures::stream::iter([Ok::<_, std::io::Error>(chunk)]);
        let parsed: Vec<_> = sse_events(stream).collect().await;
        assert_eq!(parsed.len(), 3, "{parsed:?}");
        assert!(matches!(&parsed[1], Ok(event) if event.data == "2"));
        assert!(matches!(parsed[2], Err(SseError::EventTooLarge { .. })));
    }

    #[test]
    fn a_long_id_is_not_copied_into_every_event() {
        let mut parser = SseParser::new();
        let mut input = format!("id: {}\n", "i".repeat(MAX_ID_BYTES + 1)).into_bytes();
        input.extend(b"data: 1\n\n".repeat(1000));
        let events = parser.push(&input);
        assert_eq!(events.len(), 1000);
        assert!(events.iter().all(|event| event.id.is_none()));
        let short = parser.push(b"id: evt_1\ndata: 2\n\n");
        assert_eq!(short[0].id.as_deref(), Some("evt_1"));
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let events = parse_all(b"data: a\ndata:b\ndata:  c\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "a\nb\n c");
    }

    #[test]
    fn comments_unknown_fields_and_dataless_events_are_ignored() {
        let events = parse_all(b": keep-alive\nretry: 10\nfoo\n\nevent: x\n\ndata: 1\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, None);
        assert_eq!(events[0].data, "1");
    }

    #[test]
    fn crlf_and_field_without_colon() {
        let events = parse_all(b"event: e\r\nid: 7\r\ndata\r\n\r\n");
        assert_eq!(
            events,
            vec![SseEvent {
                event: Some("e".into()),
                data: String::new(),
                id: Some("7".into()),
            }]
        );
    }

    #[test]
    fn unterminated_event_is_pending_not_dispatched() {
        let mut parser = SseParser::new();
        assert!(parser.push(b"data: {\"a\":1}\n").is_empty());
        assert!(parser.has_pending());
        assert_eq!(parser.push(b"\n").len(), 1);
        assert!(!parser.has_pending());
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let text = "data: héllo\n\n".as_bytes();
        let mut parser = SseParser::new();
        let mut events = parser.push(&text[..8]);
        events.extend(parser.push(&text[8..]));
        assert_eq!(events[0].data, "héllo");
    }
}
