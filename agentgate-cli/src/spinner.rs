//! The progress line of `agent chat`: a spinner and what is happening
//! ("thinking", "running bash: …") on stderr, redrawn in place. Off when
//! stderr is not a terminal, so piped output has no escape codes.

use std::io::Write;

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The progress line.
#[derive(Debug, Default)]
pub struct Spinner {
    enabled: bool,
    status: Option<String>,
    frame: usize,
    shown: bool,
}

impl Spinner {
    /// A spinner that draws only when `enabled` (stderr is a terminal).
    pub fn new(enabled: bool) -> Self {
        Spinner {
            enabled,
            ..Spinner::default()
        }
    }

    /// Sets what is happening (`None`: nothing to show, e.g. text is
    /// streaming).
    pub fn set(&mut self, status: Option<String>) {
        if status.is_none() {
            self.clear();
        }
        self.status = status;
    }

    /// Draws the next frame.
    pub fn tick(&mut self) {
        let (true, Some(status)) = (self.enabled, &self.status) else {
            return;
        };
        self.frame = (self.frame + 1) % FRAMES.len();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{} {status}\x1b[K", FRAMES[self.frame]);
        let _ = err.flush();
        self.shown = true;
    }

    /// Erases the line before other output.
    pub fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}
