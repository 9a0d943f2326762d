//! [`StderrTail`]: the last lines a local server wrote to stderr, kept for
//! error reports.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

/// How many lines are kept.
const MAX_LINES: usize = 20;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 500;
/// Bytes of a line kept while reading it: enough for `MAX_LINE_CHARS`
/// characters of up to four bytes and one more, so a cut line still shows
/// as cut. The rest of the line is read and dropped.
const MAX_LINE_BYTES: usize = 4 * (MAX_LINE_CHARS + 1);

/// A bounded buffer of a process's last stderr lines. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    /// Reads `stream` line by line in a background task until it ends.
    pub(crate) fn follow<R>(&self, stream: R)
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut stream = stream;
            let mut cutter = LineCutter::default();
            let mut chunk = vec![0u8; 8192];
            loop {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => cutter.feed(&chunk[..n], |line| tail.push(line)),
                }
            }
            cutter.finish(|line| tail.push(line));
        });
    }

    /// Adds a line, dropping the oldest beyond the limit.
    pub(crate) fn push(&self, line: String) {
        let line = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line,
        };
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == MAX_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines joined with newlines (empty when nothing was written).
    pub(crate) fn text(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Splits a byte stream into lines, keeping at most [`MAX_LINE_BYTES`] of
/// each while it arrives: a process writing a gigabyte without a newline
/// costs a few kilobytes, not a gigabyte.
#[derive(Debug, Default)]
struct LineCutter {
    line: Vec<u8>,
}

impl LineCutter {
    /// Takes the next bytes; `emit` gets every line they complete.
    fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(String)) {
        while !bytes.is_empty() {
            let (piece, ends_line) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&piece[..piece.len().min(room)]);
            if !ends_line {
                return;
            }
            bytes = &bytes[piece.len() + 1..];
            self.emit_line(&mut emit);
        }
    }

    /// The stream ended: a last line without a newline is emitted too.
    fn finish(&mut self, mut emit: impl FnMut(String)) {
        if !self.line.is_empty() {
            self.emit_line(&mut emit);
        }
    }

    fn emit_line(&mut self, emit: &mut impl FnMut(String)) {
        let mut line = String::from_utf8_lossy(&self.line).into_owned();
        if line.ends_with('\r') {
            line.pop();
        }
        self.line.clear();
        emit(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_cut_to_length() {
        let tail = StderrTail::default();
        for i in 0..30 {
            tail.push(format!("line {i}"));
        }
        tail.push("x".repeat(600));
        let text = tail.text();
        assert!(!text.contains("line 10\n"));
        assert!(text.starts_with("line 11"));
        assert!(text.ends_with(&format!("{}…", "x".repeat(500))));
    }

    #[test]
    fn a_line_is_cut_while_it_is_read() {
        let tail = StderrTail::default();
        let mut cutter = LineCutter::default();
        let chunk = vec![b'x'; 64 * 1024];
        // 16 MB without a newline: the buffer stays at the cut.
        for _ in 0..256 {
            cutter.feed(&chunk, |line| tail.push(line));
            assert!(cutter.line.len() <= MAX_LINE_BYTES);
        }
        cutter.feed(b"\nnext line\r\nlast", |line| tail.push(line));
        cutter.finish(|line| tail.push(line));
        let text = tail.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{}", &text[..80]);
        assert_eq!(lines[0], format!("{}…", "x".repeat(MAX_LINE_CHARS)));
        assert_eq!(lines[1], "next line");
        assert_eq!(lines[2], "last");
    }

    #[test]
    fn multibyte_lines_are_cut_on_characters() {
        let tail = StderrTail::default();
        let mut cutter = LineCutter::default();
        let line = "é".repeat(3000) + "\n";
        // Fed one byte at a time, so characters arrive split.
        for byte in line.as_bytes() {
            cutter.feed(std::slice::from_ref(byte), |l| tail.push(l));
        }
        assert_eq!(tail.text(), format!("{}…", "é".repeat(MAX_LINE_CHARS)));
    }
}
