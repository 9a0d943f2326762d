//! Reading lines for `agent chat` with a line editor (rustyline: editing
//! keys, in-memory history) on a thread of its own, so the async side can
//! wait for a line while it follows a turn.

use std::sync::mpsc;

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use tokio::sync::oneshot;

/// What reading a line gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line (without its newline).
    Text(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D or the end of input.
    Eof,
}

type Request = (String, bool, oneshot::Sender<Line>);

/// A handle to the line-editor thread.
#[derive(Debug, Clone)]
pub struct LineReader {
    requests: mpsc::Sender<Request>,
}

impl LineReader {
    /// Starts the editor thread.
    pub fn start() -> Result<Self, String> {
        let mut editor =
            DefaultEditor::new().map_err(|e| format!("cannot start the line editor: {e}"))?;
        let (requests, incoming) = mpsc::channel::<Request>();
        std::thread::spawn(move || {
            while let Ok((prompt, remember, reply)) = incoming.recv() {
                let line = match editor.readline(&prompt) {
                    Ok(text) => {
                        if remember && !text.trim().is_empty() {
                            let _ = editor.add_history_entry(text.as_str());
                        }
                        Line::Text(text)
                    }
                    Err(ReadlineError::Interrupted) => Line::Interrupted,
                    Err(_) => Line::Eof,
                };
                let _ = reply.send(line);
            }
        });
        Ok(LineReader { requests })
    }

    /// Reads a line after `prompt`; `remember` adds it to the history.
    pub async fn read(&self, prompt: &str, remember: bool) -> Line {
        let (reply, answer) = oneshot::channel();
        if self
            .requests
            .send((prompt.to_string(), remember, reply))
            .is_err()
        {
            return Line::Eof;
        }
        answer.await.unwrap_or(Line::Eof)
    }
}
