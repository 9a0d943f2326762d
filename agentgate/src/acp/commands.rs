//! Custom commands over ACP: the project's commands as the session's
//! `available_commands_update` (sent after `session/new` and
//! `session/load`), and a prompt that starts with `/NAME` prepared as
//! `agent chat` prepares it ([`CodingAgent::prepare_command`]): the model
//! receives the expanded template, and the template's shell lines and file
//! reads ask the editor through the session's approver. `/compact` is
//! built in, as opencode lists it: it compacts the session
//! ([`Engine::compact`](crate::Engine::compact)) unless the project
//! defines its own `compact`. Any other `/NAME` the project does not
//! define is sent as typed.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use agentgate_core::commands::template_hints;
use tokio_util::sync::CancellationToken;

use crate::{CodingAgent, CustomCommandError, PreparedCommand, slash_command};

/// The built-in command that compacts the session.
const COMPACT: &str = "compact";

/// The project's custom commands as an `available_commands_update`: each
/// by name with its description (empty when it has none) and, when its
/// template takes arguments, an input whose hint is its placeholders
/// (`$1 $ARGUMENTS`); then the built-in `compact` unless the project
/// defines one.
pub(crate) fn available(agent: &CodingAgent) -> SessionUpdate {
    let mut commands: Vec<AvailableCommand> = agent
        .commands()
        .sorted()
        .into_iter()
        .map(|command| {
            let hints = template_hints(&command.template);
            let entry = AvailableCommand::new(
                command.name.clone(),
                command.description.clone().unwrap_or_default(),
            );
            if hints.is_empty() {
                entry
            } else {
                entry.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hints.join(" ")),
                ))
            }
        })
        .collect();
    if agent.commands().get(COMPACT).is_none() {
        commands.push(AvailableCommand::new(COMPACT, "compact the session"));
    }
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// What a prompt's text is to the session.
pub(crate) enum Slash {
    /// Text to send as typed (not `/NAME`, or a name the project does not
    /// define).
    Text,
    /// A custom command, prepared.
    Prepared(Box<PreparedCommand>),
    /// A custom command that could not be prepared; nothing is sent.
    Failed(String),
    /// The built-in `/compact`: compact the session.
    Compact,
}

/// Reads `text` as a custom command of `agent`'s project and prepares it
/// (asking through the gate); [`Slash::Text`] when it is none.
pub(crate) async fn prepare(agent: &CodingAgent, text: &str, cancel: CancellationToken) -> Slash {
    let Some((name, arguments)) = slash_command(text) else {
        return Slash::Text;
    };
    if agent.commands().get(name).is_none() {
        return if name == COMPACT {
            Slash::Compact
        } else {
            Slash::Text
        };
    }
    match agent.prepare_command(name, arguments, cancel).await {
        Ok(prepared) => Slash::Prepared(Box::new(prepared)),
        Err(CustomCommandError::Unknown { .. }) => Slash::Text,
        Err(error) => Slash::Failed(error.to_string()),
    }
}
