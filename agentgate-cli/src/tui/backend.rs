//! Where `agent tui`'s session runs: an agent in this process
//! ([`Local`]) or a server's session ([`Remote`]); the driver carries its
//! effects out on either the same way, and the screen looks the same.

use super::local::Local;
use super::remote::Remote;
use super::state::Status;
use super::transcript::{NoteKind, Transcript};
use super::update::Msg;
use super::work::{Started, Turn, Work, WorkDone};

/// The session's home.
pub enum Backend {
    /// An agent here.
    Local(Box<Local>),
    /// A server's session.
    Remote(Remote),
}

/// What `/agent` and `/model` answer when attached.
const SERVERS_CHOICE: &str =
    "attached to a server: its session keeps the agent and model the server gives it";

impl Backend {
    /// The status line.
    pub fn status(&self) -> Status {
        match self {
            Backend::Local(local) => local.status(),
            Backend::Remote(remote) => remote.status(),
        }
    }

    /// The session's stored transcript.
    pub async fn transcript(&self) -> Transcript {
        match self {
            Backend::Local(local) => local.transcript().await,
            Backend::Remote(remote) => remote.transcript().await,
        }
    }

    /// Starts a turn on `text`.
    pub async fn send(&self, text: String) -> Result<Turn, String> {
        match self {
            Backend::Local(local) => Ok(local.send(text)),
            Backend::Remote(remote) => remote.send(text).await,
        }
    }

    /// Starts custom command `name`.
    pub async fn command(&self, name: String, arguments: String) -> Started {
        match self {
            Backend::Local(local) => {
                let cancel = agentgate::CancellationToken::new();
                Started::Work(local.prepare(name, arguments, cancel.clone()), cancel)
            }
            Backend::Remote(remote) => match remote.command(name, arguments).await {
                Ok(turn) => Started::Turn(turn),
                Err(error) => Started::Failed(error),
            },
        }
    }

    /// What follows a command's preparation (here only): its turn, or its
    /// sub-agent's work.
    pub fn prepared(&self, done: WorkDone) -> Started {
        let Backend::Local(local) = self else {
            return Started::Failed("no command is prepared here when attached".into());
        };
        match done {
            WorkDone::Prepared(Err(message)) => Started::Failed(message),
            WorkDone::Prepared(Ok(prepared)) => match prepared.subtask.clone() {
                Some(plan) => {
                    let cancel = agentgate::CancellationToken::new();
                    let work: Work = local.subtask(plan, cancel.clone());
                    Started::Work(work, cancel)
                }
                None => Started::Turn(local.send_prepared(*prepared)),
            },
            WorkDone::Subtask(_) => Started::Failed("a sub-agent's answer is not a command".into()),
        }
    }

    /// `/undo` or `/redo`.
    pub async fn undo(&self, command: &str, argument: &str) -> Vec<Msg> {
        match self {
            Backend::Local(local) => local.undo(command, argument).await,
            Backend::Remote(remote) => remote.undo(command, argument).await,
        }
    }

    /// `/agent [NAME]`.
    pub async fn switch_agent(&mut self, name: &str) -> Vec<Msg> {
        match self {
            Backend::Local(local) => local.switch_agent(name).await,
            Backend::Remote(_) => vec![Msg::Said(NoteKind::Info, SERVERS_CHOICE.into())],
        }
    }

    /// `/model [PROVIDER/MODEL]`.
    pub async fn switch_model(&mut self, name: &str) -> Vec<Msg> {
        match self {
            Backend::Local(local) => local.switch_model(name).await,
            Backend::Remote(_) => vec![Msg::Said(NoteKind::Info, SERVERS_CHOICE.into())],
        }
    }

    /// `/sessions`.
    pub async fn sessions(&self) -> Vec<Msg> {
        match self {
            Backend::Local(local) => local.sessions().await,
            Backend::Remote(remote) => remote.sessions().await,
        }
    }

    /// Shows session `id`.
    pub async fn open(&mut self, id: &str) -> Vec<Msg> {
        match self {
            Backend::Local(local) => local.open(id).await,
            Backend::Remote(remote) => remote.open(id).await,
        }
    }
}
