//! Server-sent events read with bounds: a server that never ends an event
//! (or sends one larger than the limit) is an error, not unbounded memory.

/// Splits a byte stream into the `data` of its events.
#[derive(Debug)]
pub(crate) struct SseBuffer {
    buffer: Vec<u8>,
    max_event: usize,
}

/// What the buffer holds after more bytes arrived.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SseError {
    /// An event grew past the limit without ending.
    TooLarge(usize),
}

impl SseBuffer {
    /// A buffer that refuses events longer than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        SseBuffer {
            buffer: Vec::new(),
            max_event: max_event.max(1),
        }
    }

    /// Adds `chunk` and returns the `data` of every event it completed
    /// (comments and events without data are skipped).
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>, SseError> {
        self.buffer
            .extend(chunk.iter().copied().filter(|byte| *byte != b'\r'));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                events.push(data.join("\n"));
            }
        }
        if self.buffer.len() > self.max_event {
            return Err(SseError::TooLarge(self.max_event));
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn events_split_across_chunks_join_and_comments_are_skipped() {
        let mut sse = SseBuffer::new(64);
        assert_eq!(
            sse.push(b": keep-alive\n\ndata: {\"a\"").unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            sse.push(b":1}\r\n\r\ndata:x\ndata: y\n\n").unwrap(),
            vec!["{\"a\":1}".to_string(), "x\ny".to_string()]
        );
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut sse = SseBuffer::new(16);
        assert_eq!(sse.push(&[b'a'; 17]), Err(SseError::TooLarge(16)));
    }
}
