//! Ctrl-C and SIGTERM for `agent run`.
//!
//! The handlers are installed first thing, so a signal at any stage (the
//! config, the MCP servers starting, a retry's backoff, the stream, a tool)
//! lands on one token; each stage waits on it, and a run whose token fired
//! ends with status 130 and never sends its prompt.

use std::time::Duration;

use agentgate_core::CancellationToken;
use tokio::signal::unix::{SignalKind, signal};

/// The exit status of an interrupted run (128 + SIGINT, as shells report).
pub const INTERRUPTED: u8 = 130;

/// How long the turn gets to wind down after the token fired before the
/// run stops waiting for it (tools are abandoned after their own grace).
pub const WIND_DOWN: Duration = Duration::from_millis(750);

/// A token cancelled by the first SIGINT or SIGTERM. Later signals find
/// the token cancelled already; the run is ending by then.
pub fn cancel_on_signals() -> Result<CancellationToken, String> {
    let mut interrupt =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;
    let mut terminate =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    let token = CancellationToken::new();
    let fired = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        fired.cancel();
    });
    Ok(token)
}
