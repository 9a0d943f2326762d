//! The step's checkpoint: what its tools changed in the project's files,
//! taken from the engine's [`Checkpoints`](crate::checkpoint::Checkpoints)
//! when the step ends and kept on its message as a [`Part::Patch`].

use super::state::EngineState;
use crate::event::Event;
use crate::ids::ascending;
use crate::message::{Message, Part};
use std::path::Path;

/// Adds to `message` (a step's assistant message) the changes recorded for
/// its session since the last step, when there are any.
pub(super) async fn add_step_patch(engine: &EngineState, root: &Path, message: &mut Message) {
    let Some(checkpoints) = &engine.checkpoints else {
        return;
    };
    let files = match checkpoints.take(root, &message.session_id).await {
        Ok(files) => files,
        Err(error) => {
            tracing::warn!(session_id = %message.session_id, %error, "checkpoint: the step's file changes could not be taken; they cannot be reverted");
            return;
        }
    };
    if files.is_empty() {
        return;
    }
    let part = Part::Patch {
        id: ascending("prt"),
        files,
    };
    engine.events.emit(|| Event::PartCreated {
        session_id: message.session_id.clone(),
        message_id: message.id.clone(),
        part: part.clone(),
    });
    message.parts.push(part);
}
