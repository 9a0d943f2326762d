//! The session `agent tui --attach URL` drives on an `agent serve` (or
//! `opencode serve`) server, through the `agentgate::remote` client: its
//! turns and custom commands streamed, its asks answered in the modal
//! (the client's approver is the screen's), its history shown, `/undo`,
//! `/redo` and `/sessions` over the wire.

use agentgate::remote::{
    RemoteAgent, RemoteError, RemoteEvent, RemoteSession, RemoteStop, RemoteStream, RemoteTurn,
};
use futures::StreamExt;

use super::state::{SessionRow, Status};
use super::transcript::{NoteKind, Transcript};
use super::update::{Msg, TurnSummary};
use super::work::Turn;
use crate::terminal_text::terminal_safe;

/// The server and the session shown.
pub struct Remote {
    /// The client.
    pub agent: RemoteAgent,
    /// The session prompts go to.
    pub session: RemoteSession,
    /// The model the server last named (empty until a step runs).
    pub model: String,
}

/// How a remote turn ended, for the screen.
fn summary_of(turn: &RemoteTurn) -> TurnSummary {
    let stopped = match turn.stop {
        RemoteStop::Done => None,
        RemoteStop::Rejected => Some("the turn stopped: a permission was rejected".into()),
        RemoteStop::Cancelled => Some("the turn was cancelled".into()),
        _ => Some(format!(
            "the turn failed: {}",
            turn.error
                .as_deref()
                .unwrap_or("the server did not say why")
        )),
    };
    let usage = &turn.usage;
    TurnSummary {
        stopped,
        tokens_in: usage.input,
        tokens_out: usage.output,
        cost: (usage.has_tokens() && usage.cost > 0.0).then_some(usage.cost),
    }
}

/// The screen's turn of a remote stream.
fn turn_of(stream: RemoteStream) -> Turn {
    let cancel = stream.cancel_token();
    let events = stream
        .map(|item| match item {
            Ok(RemoteEvent::Finished(turn)) => Msg::Finished(summary_of(&turn)),
            Ok(event) => Msg::Remote(Box::new(event)),
            Err(error) => Msg::Finished(TurnSummary {
                stopped: Some(format!("the server's turn could not be followed: {error}")),
                ..TurnSummary::default()
            }),
        })
        .boxed();
    Turn { events, cancel }
}

fn failed(error: RemoteError) -> Vec<Msg> {
    vec![Msg::Said(NoteKind::Error, error.to_string())]
}

impl Remote {
    /// The status line (texts made safe).
    pub fn status(&self) -> Status {
        let info = self.session.info();
        let agent = info
            .get("agent")
            .and_then(|a| a.as_str())
            .unwrap_or("server's");
        let model = if self.model.is_empty() {
            "server's"
        } else {
            &self.model
        };
        Status {
            agent: terminal_safe(agent),
            model: terminal_safe(model),
            session: terminal_safe(self.session.id()),
            sandbox: "server's".into(),
            trust: "server's trust".into(),
            place: terminal_safe(self.agent.url()),
            ..Status::default()
        }
    }

    /// The session's transcript as the server keeps it (up to its revert
    /// point).
    pub async fn transcript(&self) -> Transcript {
        let mut transcript = Transcript::new(self.session.id().to_string());
        let listed = self.session.messages().await;
        let point = self.session.revert_point().await.ok().flatten();
        match listed {
            Ok(messages) => transcript.load_remote(&messages, point.as_deref()),
            Err(error) => transcript.note(
                NoteKind::Error,
                &format!("the transcript could not be read: {error}"),
            ),
        }
        transcript
    }

    async fn reset(&self, said: String) -> Vec<Msg> {
        vec![
            Msg::Reset(Box::new(self.status()), self.transcript().await),
            Msg::Said(NoteKind::Info, said),
        ]
    }

    /// Starts a turn on `text`.
    pub async fn send(&self, text: String) -> Result<Turn, String> {
        self.session
            .stream(text)
            .await
            .map(turn_of)
            .map_err(|e| e.to_string())
    }

    /// Runs the server's custom command `name`.
    pub async fn command(&self, name: String, arguments: String) -> Result<Turn, String> {
        self.session
            .command(name, arguments)
            .await
            .map(turn_of)
            .map_err(|e| e.to_string())
    }

    /// The server's custom commands, as `/help` lists them.
    pub async fn commands(&self) -> Vec<String> {
        let listed = self.agent.commands().await.unwrap_or_default();
        listed
            .iter()
            .map(|name| terminal_safe(&format!("  /{name}")))
            .collect()
    }

    /// `/undo` or `/redo` with `argument` (`--force`).
    pub async fn undo(&self, command: &str, argument: &str) -> Vec<Msg> {
        let force = argument == "--force";
        let said = if command == "/undo" {
            match self.session.undo(force).await {
                Ok(None) => "nothing to undo".to_string(),
                Ok(Some(prompt)) => {
                    let text = prompt.parts.iter().find_map(|p| match p {
                        agentgate::remote::RemotePart::Text { text, .. } => Some(text.clone()),
                        _ => None,
                    });
                    let first = crate::render::one_line(&text.unwrap_or_default(), 80);
                    format!("undid: {first}\n/redo puts it back; the next prompt drops it")
                }
                Err(error) => return failed(error),
            }
        } else {
            match self.session.redo(force).await {
                Ok(false) => "nothing to redo".to_string(),
                Ok(true) => "redone".to_string(),
                Err(error) => return failed(error),
            }
        };
        self.reset(said).await
    }

    /// `/sessions`: the server's sessions (those of sub-agents left out).
    pub async fn sessions(&self) -> Vec<Msg> {
        match self.agent.sessions().await {
            Ok(sessions) => {
                let rows = sessions
                    .iter()
                    .filter(|s| s.info().get("parentID").is_none_or(|p| p.is_null()))
                    .map(|s| {
                        let title = s.info().get("title").and_then(|t| t.as_str()).unwrap_or("");
                        SessionRow {
                            id: terminal_safe(s.id()),
                            agent: "server".into(),
                            title: terminal_safe(&crate::render::one_line(title, 200)),
                        }
                    })
                    .collect();
                vec![Msg::Sessions(rows)]
            }
            Err(error) => failed(error),
        }
    }

    /// Shows the server's session `id`.
    pub async fn open(&mut self, id: &str) -> Vec<Msg> {
        match self.agent.session(id).await {
            Ok(session) => {
                self.session = session;
                self.reset(format!("session {id}")).await
            }
            Err(error) => failed(error),
        }
    }
}
