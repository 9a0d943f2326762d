//! [`StderrTail`]: the last lines a local server wrote to stderr, kept for
//! error reports.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How many lines are kept.
const MAX_LINES: usize = 20;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 500;

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
            let mut lines = BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tail.push(line);
            }
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
}
