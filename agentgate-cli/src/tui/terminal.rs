//! The terminal while `agent tui` runs: raw mode, the alternate screen
//! and bracketed paste, given back on every way out (an error, a panic
//! included); the keys read on a thread of their own.

use std::io::Stdout;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

/// The terminal `agent tui` draws on.
pub type Screen = Terminal<CrosstermBackend<Stdout>>;

/// Gives the terminal back as it was.
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Reads the terminal's events until `stop`, sending them on `events`.
fn read_events(events: mpsc::UnboundedSender<Event>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        match crossterm::event::poll(Duration::from_millis(200)) {
            Ok(true) => match crossterm::event::read() {
                Ok(event) => {
                    if events.send(event).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {}
            Err(_) => return,
        }
    }
}

/// The full screen, taken by [`FullScreen::enter`] and given back when
/// dropped.
pub struct FullScreen {
    /// The terminal to draw on.
    pub terminal: Screen,
    /// The terminal's events (keys, pastes, resizes).
    pub inputs: mpsc::UnboundedReceiver<Event>,
    stop: Arc<AtomicBool>,
}

impl FullScreen {
    /// Takes the terminal: raw mode, the alternate screen, bracketed
    /// paste, and a thread reading its events; a panic gives it back
    /// before its message is printed.
    pub fn enter() -> Result<FullScreen, String> {
        enable_raw_mode().map_err(|e| format!("cannot use the terminal: {e}"))?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let entered = execute!(
            std::io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste
        );
        let terminal =
            entered.and_then(|()| Terminal::new(CrosstermBackend::new(std::io::stdout())));
        let terminal = match terminal {
            Ok(terminal) => terminal,
            Err(error) => {
                restore();
                return Err(format!("cannot use the terminal: {error}"));
            }
        };
        let (sender, inputs) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reading = stop.clone();
        std::thread::spawn(move || read_events(sender, reading));
        Ok(FullScreen {
            terminal,
            inputs,
            stop,
        })
    }
}

impl Drop for FullScreen {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        restore();
    }
}
