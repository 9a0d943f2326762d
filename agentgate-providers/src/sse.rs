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
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

impl SseParser {
    /// A parser with no buffered input.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk and returns the events it completes, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
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
        self.line.extend_from_slice(rest);
        out
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
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
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

/// Why an SSE body stream failed: the transport error of the underlying
/// byte stream.
#[derive(Debug, thiserror::Error)]
#[error("reading the event stream failed: {0}")]
pub struct SseError<E>(pub E);

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
    }
    let state = State {
        bytes,
        parser: SseParser::new(),
        ready: VecDeque::new(),
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if state.done {
                return None;
            }
            match state.bytes.next().await {
                Some(Ok(chunk)) => state.ready.extend(state.parser.push(chunk.as_ref())),
                Some(Err(e)) => {
                    state.done = true;
                    return Some((Err(SseError(e)), state));
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
