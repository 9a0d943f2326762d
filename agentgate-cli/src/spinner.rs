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
    /// The status may hold the model's text (a command being run): it is
    /// shown on one line, terminal-safe, so it cannot redraw the screen.
    pub fn set(&mut self, status: Option<String>) {
        if status.is_none() {
            self.clear();
        }
        self.status =
            status.map(|s| crate::terminal_text::terminal_safe(&s.replace(['\n', '\t'], " ")));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_from_the_model_stays_on_one_line_and_cannot_redraw_it() {
        let mut spinner = Spinner::new(false);
        spinner.set(Some("running bash ls\r\u{1b}[2Kok\nrm -rf x".into()));
        assert_eq!(
            spinner.status.as_deref(),
            Some("running bash ls\\u{d}\\u{1b}[2Kok rm -rf x")
        );
        spinner.set(None);
        assert_eq!(spinner.status, None);
    }
}
