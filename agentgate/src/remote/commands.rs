//! A server's custom commands: listed (`GET /command`) and run in a
//! session (`POST /session/{id}/command`) with the turn streamed as a
//! prompt's is.

use super::client::{RemoteAgent, RemoteSession};
use super::error::RemoteError;
use super::turn::{Kickoff, RemoteStream, start};
use crate::protocol::{CommandBody, CommandInfo};

impl RemoteAgent {
    /// The names of the server's custom commands (`GET /command`): what
    /// [`RemoteSession::command`] can run.
    pub async fn commands(&self) -> Result<Vec<String>, RemoteError> {
        let listed: Vec<CommandInfo> = self.get("/command").await?;
        Ok(listed.into_iter().map(|command| command.name).collect())
    }
}

impl RemoteSession {
    /// Runs the server's custom command `name` with `arguments` in the
    /// session, expanded there as `agent chat` expands `/NAME ARGS` (its
    /// shell lines asked through this agent's approver like any ask), and
    /// streams its turn as [`stream`](Self::stream) does. A command the
    /// server does not know ends the stream with its error
    /// ([`RemoteError::Status`], 404, naming the commands it has).
    pub async fn command(
        &self,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Result<RemoteStream, RemoteError> {
        let body = CommandBody {
            command: name.into(),
            arguments: arguments.into(),
            ..CommandBody::default()
        };
        start(
            self.agent.clone(),
            self.id().to_string(),
            Kickoff::Command(body),
        )
        .await
    }
}
