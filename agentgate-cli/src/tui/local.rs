//! The agent `agent tui` drives in this process: a [`CodingAgent`] and
//! what its effects do with it (start a turn, `/undo`, switch agent,
//! model or session), each answered with the messages for the screen.
//! Only the `agentgate` facade's public API is used.

use agentgate::{
    CancellationToken, CodingAgent, ModelCost, ModelRef, PreparedCommand, ProjectTrust,
    PromptError, PromptOptions, StopReason, StreamExt, TurnEvent, TurnResult,
};
use futures::Stream;

use super::state::{SessionRow, Status};
use super::transcript::{NoteKind, Transcript};
use super::update::{Msg, TurnSummary};
use super::work::{Turn, Work, WorkDone};
use crate::terminal_text::terminal_safe;

/// The agent, and what the screen chose for it.
pub struct Local {
    /// The agent on the session shown.
    pub agent: CodingAgent,
    /// The custom commands.
    pub commands: agentgate::Commands,
    /// The agents `/agent` may pick.
    pub agents: Vec<String>,
    /// The directory.
    pub directory: std::path::PathBuf,
    /// The model `/model` chose (`None`: the session's).
    pub model: Option<ModelRef>,
}

/// What the status line and transcript take from a finished turn.
fn summary_of(result: &Result<TurnResult, PromptError>, cost: Option<ModelCost>) -> TurnSummary {
    let stopped = crate::render::stop_message(result);
    match result {
        Ok(turn) => {
            let usage = &turn.usage;
            let reported = usage.context_tokens() > 0 || usage.output > 0;
            TurnSummary {
                stopped: match &turn.stop {
                    StopReason::Done { .. } => None,
                    _ => stopped,
                },
                tokens_in: usage.input,
                tokens_out: usage.output,
                cost: cost.filter(|_| reported).map(|c| c.of(usage)),
            }
        }
        Err(_) => TurnSummary {
            stopped,
            ..TurnSummary::default()
        },
    }
}

/// How the trust state reads in the status line.
fn trust_word(trust: &ProjectTrust) -> &'static str {
    match trust {
        ProjectTrust::NotNeeded => "no trust needed",
        ProjectTrust::Trusted => "project trusted",
        ProjectTrust::Untrusted { .. } => "project untrusted",
        ProjectTrust::Changed { .. } => "project changed since trusted",
        #[allow(unreachable_patterns)]
        _ => "unknown",
    }
}

impl Local {
    /// The model a prompt runs on: `/model`'s, else the session's.
    fn model(&self) -> Result<std::sync::Arc<dyn agentgate::LanguageModel>, String> {
        let mut session = self.agent.session().clone();
        if let Some(model) = &self.model {
            session.model = Some(model.clone());
        }
        self.agent
            .engine()
            .model_for(&session)
            .map_err(|e| e.to_string())
    }

    /// The model's prices, when configured.
    pub fn cost(&self) -> Option<ModelCost> {
        self.model().ok().and_then(|m| m.info().cost)
    }

    /// The status line of the session shown (texts made safe).
    pub fn status(&self) -> Status {
        let model = match self.model() {
            Ok(model) => format!("{}/{}", model.info().provider, model.info().id),
            Err(_) => "unavailable".into(),
        };
        Status {
            agent: terminal_safe(&self.agent.session().agent),
            model: terminal_safe(&model),
            session: terminal_safe(&self.agent.session().id),
            sandbox: self
                .agent
                .sandbox()
                .map_or("custom tools", |p| p.mode.as_str())
                .to_string(),
            trust: trust_word(self.agent.trust()).to_string(),
            place: "local".into(),
            ..Status::default()
        }
    }

    /// The session's transcript as stored (up to a revert point).
    pub async fn transcript(&self) -> Transcript {
        let session = self.agent.session();
        let mut transcript = Transcript::new(session.id.clone());
        let store = self.agent.engine().store();
        let revert = store.session(&session.id).await.ok().and_then(|s| s.revert);
        match store.messages(&session.id).await {
            Ok(messages) => {
                transcript.load(&messages, revert.as_ref().map(|r| r.message_id.as_str()))
            }
            Err(error) => transcript.note(
                NoteKind::Error,
                &format!("the transcript could not be read: {error}"),
            ),
        }
        transcript
    }

    /// The screen's messages after switching to another session.
    async fn reset(&self, said: String) -> Vec<Msg> {
        vec![
            Msg::Reset(Box::new(self.status()), self.transcript().await),
            Msg::Said(NoteKind::Info, said),
        ]
    }

    /// The turn of `events`, its end summed up with the model's prices.
    fn turn(
        &self,
        events: impl Stream<Item = TurnEvent> + Send + 'static,
        cancel: CancellationToken,
    ) -> Turn {
        let cost = self.cost();
        let events = events
            .map(move |item| match item {
                TurnEvent::Finished(result) => Msg::Finished(summary_of(&result, cost)),
                item => Msg::Turn(Box::new(item)),
            })
            .boxed();
        Turn { events, cancel }
    }

    /// Starts a turn on `text`.
    pub fn send(&self, text: String) -> Turn {
        let cancel = CancellationToken::new();
        let mut options = PromptOptions::default();
        if let Some(model) = &self.model {
            options = options.model(model.clone());
        }
        let parts = vec![agentgate::Part::text(text)];
        self.turn(
            self.agent.stream_parts(parts, options, cancel.clone()),
            cancel,
        )
    }

    /// Starts the turn of a prepared command.
    pub fn send_prepared(&self, prepared: PreparedCommand) -> Turn {
        let cancel = CancellationToken::new();
        let events = self
            .agent
            .stream_parts(prepared.parts, prepared.options, cancel.clone());
        self.turn(events, cancel)
    }

    /// Prepares custom command `name` (its shell lines and file reads may
    /// ask meanwhile).
    pub fn prepare(&self, name: String, arguments: String, cancel: CancellationToken) -> Work {
        let agent = self.agent.clone();
        let commands = self.commands.clone();
        Box::pin(async move {
            let prepared =
                crate::commands_cli::prepare(&agent, &commands, &name, &arguments, cancel).await;
            WorkDone::Prepared(prepared.map(Box::new).map_err(|n| n.message))
        })
    }

    /// Runs a prepared command's sub-agent.
    pub fn subtask(&self, plan: agentgate::SubtaskPlan, cancel: CancellationToken) -> Work {
        let engine = self.agent.engine().clone();
        let session = self.agent.session().id.clone();
        Box::pin(async move {
            let done = engine.run_subtask(&session, &plan, cancel).await;
            WorkDone::Subtask(done.map(|o| o.output).map_err(|e| e.to_string()))
        })
    }

    /// `/undo` or `/redo` with `argument`: the transcript as it now is,
    /// then what was taken back or put back.
    pub async fn undo(&self, command: &str, argument: &str) -> Vec<Msg> {
        let said = crate::undo_cli::slash(&self.agent, command, argument).await;
        self.reset(said).await
    }

    /// `/agent [NAME]`.
    pub async fn switch_agent(&mut self, name: &str) -> Vec<Msg> {
        if name.is_empty() {
            let said = format!(
                "agent {} (/agent NAME switches to one of {})",
                self.agent.session().agent,
                self.agents.join(", ")
            );
            return vec![Msg::Said(NoteKind::Info, said)];
        }
        match self.agent.new_session(Some(name)).await {
            Ok(agent) => {
                self.agent = agent;
                let session = self.agent.session();
                let said = format!("session {} (agent {})", session.id, session.agent);
                self.reset(said).await
            }
            Err(error) => vec![Msg::Said(NoteKind::Error, error.to_string())],
        }
    }

    /// `/model [PROVIDER/MODEL]`.
    pub async fn switch_model(&mut self, name: &str) -> Vec<Msg> {
        if name.is_empty() {
            let said = format!(
                "model {} (/model PROVIDER/MODEL switches)",
                self.status().model
            );
            return vec![Msg::Said(NoteKind::Info, said)];
        }
        let Some(model) = ModelRef::parse(name) else {
            return vec![Msg::Said(
                NoteKind::Error,
                format!("{name}: give the model as PROVIDER/MODEL"),
            )];
        };
        let before = self.model.replace(model);
        match self.model() {
            Ok(_) => vec![
                Msg::Reset(Box::new(self.status()), self.transcript().await),
                Msg::Said(NoteKind::Info, format!("model {name}")),
            ],
            Err(error) => {
                self.model = before;
                vec![Msg::Said(NoteKind::Error, error)]
            }
        }
    }

    /// `/sessions`: the directory's sessions, most recent first.
    pub async fn sessions(&self) -> Vec<Msg> {
        let store = self.agent.engine().store();
        match crate::workspace::sessions_of(store.as_ref(), &self.directory).await {
            Ok(sessions) => {
                let rows = sessions
                    .iter()
                    .rev()
                    .map(|s| SessionRow {
                        id: terminal_safe(&s.id),
                        agent: terminal_safe(&s.agent),
                        title: terminal_safe(&crate::render::one_line(&s.title, 200)),
                    })
                    .collect();
                vec![Msg::Sessions(rows)]
            }
            Err(error) => vec![Msg::Said(NoteKind::Error, error)],
        }
    }

    /// Shows session `id`.
    pub async fn open(&mut self, id: &str) -> Vec<Msg> {
        match self.agent.open_session(id).await {
            Ok(agent) => {
                self.agent = agent;
                self.reset(format!("session {id}")).await
            }
            Err(error) => vec![Msg::Said(NoteKind::Error, error.to_string())],
        }
    }
}
