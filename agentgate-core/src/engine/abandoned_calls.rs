//! Calls a stopped process left open in the store, closed as interrupted
//! when their session is prompted again.

use super::state::EngineState;
use crate::ids::now_ms;
use crate::message::{Message, Part, interrupted_state};
use crate::sessions::SessionStoreError;

/// Closes, as interrupted, the calls of `history` still open in the store:
/// a process stopped while they ran (or while they waited for an ask no one
/// answered), and the session is prompted again. Each message changed is
/// stored, so the transcript no longer shows them running. Called with the
/// session held busy, so no turn of this process has them open.
pub(super) async fn close_abandoned_calls(
    state: &EngineState,
    history: &mut [Message],
) -> Result<(), SessionStoreError> {
    let now = now_ms();
    for message in history.iter_mut() {
        let mut changed = false;
        for part in &mut message.parts {
            if let Part::Tool(tool) = part
                && let Some(closed) = interrupted_state(&tool.state, now)
            {
                tool.state = closed;
                changed = true;
            }
        }
        if changed {
            if message.time.end.is_none() {
                message.time.end = Some(now);
            }
            state.store.put_message(message).await?;
        }
    }
    Ok(())
}
