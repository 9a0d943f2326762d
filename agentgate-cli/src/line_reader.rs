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

/// A prompt, whether to remember the line, whether to discard what was
/// typed before it, and where to send the line.
type Request = (String, bool, bool, oneshot::Sender<Line>);

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
            while let Ok((prompt, remember, fresh, reply)) = incoming.recv() {
                if fresh {
                    discard_typed_ahead();
                }
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
        self.request(prompt, remember, false).await
    }

    /// Reads the answer to an ask that was just drawn: what was typed
    /// before it (in answer to something the model printed, perhaps a
    /// fake ask) is discarded first, so only keys pressed after the real
    /// ask was shown can answer it.
    pub async fn read_answer(&self, prompt: &str) -> Line {
        self.request(prompt, false, true).await
    }

    async fn request(&self, prompt: &str, remember: bool, fresh: bool) -> Line {
        let (reply, answer) = oneshot::channel();
        if self
            .requests
            .send((prompt.to_string(), remember, fresh, reply))
            .is_err()
        {
            return Line::Eof;
        }
        answer.await.unwrap_or(Line::Eof)
    }
}

/// Drops the input the terminal holds that was not read yet (nothing when
/// stdin is not a terminal: piped answers are meant to be read).
fn discard_typed_ahead() {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = nix::sys::termios::tcflush(&stdin, nix::sys::termios::FlushArg::TCIFLUSH);
    }
}
