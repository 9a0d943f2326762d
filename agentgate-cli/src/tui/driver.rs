//! The loop of `agent tui`: it waits for a key, an event of the running
//! turn, an ask, or a command's preparation, turns it into a message for
//! [`update`], carries out the effects update returns on the [`Local`]
//! agent, and redraws (ratatui sends only the cells that changed). While
//! nothing happens it sleeps: no timer runs unless a turn does.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use agentgate::permission::ApprovalRequest;
use agentgate::{CancellationToken, StopReason, TurnEvent, TurnResult};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use super::ask_modal::AskView;
use super::local::{Local, Turn, Work, WorkDone, reply_of};
use super::state::State;
use super::transcript::NoteKind;
use super::transcript_view::ViewCache;
use super::update::{Effect, Msg, TurnSummary, update};
use super::view;

/// Everything the loop holds besides the screen.
pub struct Driver {
    /// The agent.
    pub local: Local,
    /// The screen's state.
    pub state: State,
    /// Asks from the gate.
    pub asks: mpsc::Receiver<ApprovalRequest>,
    /// The running turn.
    turn: Option<Turn>,
    /// A command being prepared, or its sub-agent, and its cancel token.
    work: Option<(Work, CancellationToken)>,
    /// Asks waiting to be answered, by id.
    pending: HashMap<String, ApprovalRequest>,
    /// Asks waiting for the modal to be free.
    queued: VecDeque<AskView>,
    cache: ViewCache,
}

/// The next event of `turn` (never, without one).
async fn next_event(turn: &mut Option<Turn>) -> Option<TurnEvent> {
    match turn {
        Some(turn) => turn.stream.next().await,
        None => std::future::pending().await,
    }
}

/// The end of `work` (never, without one).
async fn work_done(work: &mut Option<(Work, CancellationToken)>) -> WorkDone {
    match work {
        Some((work, _)) => work.await,
        None => std::future::pending().await,
    }
}

/// What the status line and transcript take from a finished turn.
fn summary_of(
    result: &Result<TurnResult, agentgate::PromptError>,
    cost: Option<agentgate::ModelCost>,
) -> TurnSummary {
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

impl Driver {
    /// A driver for `local`, its asks arriving on `asks`.
    pub fn new(local: Local, state: State, asks: mpsc::Receiver<ApprovalRequest>) -> Self {
        Driver {
            local,
            state,
            asks,
            turn: None,
            work: None,
            pending: HashMap::new(),
            queued: VecDeque::new(),
            cache: ViewCache::default(),
        }
    }

    /// Runs until the person leaves; `inputs` are the terminal's events.
    pub async fn run<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        inputs: &mut mpsc::UnboundedReceiver<crossterm::event::Event>,
    ) -> Result<(), String> {
        let mut tick = tokio::time::interval(Duration::from_millis(120));
        let mut dirty = true;
        while !self.state.quit {
            if dirty {
                terminal
                    .draw(|frame| view::draw(frame, &self.state, &mut self.cache))
                    .map_err(|e| format!("cannot draw: {e}"))?;
            }
            dirty = true;
            let busy = self.state.busy();
            let msg = tokio::select! {
                biased;
                input = inputs.recv() => match input {
                    Some(event) => match input_msg(event) {
                        Some(msg) => msg,
                        None => continue,
                    },
                    None => break,
                },
                item = next_event(&mut self.turn) => self.turn_event(item),
                Some(request) = self.asks.recv() => self.asked(request),
                done = work_done(&mut self.work) => {
                    self.work = None;
                    self.work_done(done)
                }
                _ = tick.tick(), if busy => Msg::Tick,
            };
            self.apply(msg).await;
        }
        Ok(())
    }

    /// Applies `msg`, then the effects it asks for, then shows the next
    /// queued ask if the modal is free.
    pub async fn apply(&mut self, msg: Msg) {
        let mut effects: VecDeque<Effect> = update(&mut self.state, msg).into();
        while let Some(effect) = effects.pop_front() {
            for msg in self.effect(effect).await {
                effects.extend(update(&mut self.state, msg));
            }
        }
        if self.state.ask.is_none()
            && let Some(next) = self.queued.pop_front()
        {
            update(&mut self.state, Msg::Asked(Box::new(next)));
        }
    }

    fn turn_event(&mut self, item: Option<TurnEvent>) -> Msg {
        match item {
            Some(TurnEvent::Finished(result)) => {
                self.end_turn();
                Msg::Finished(summary_of(&result, self.local.cost()))
            }
            Some(item) => Msg::Turn(Box::new(item)),
            None => {
                self.end_turn();
                Msg::Finished(TurnSummary::default())
            }
        }
    }

    /// The turn is over: its unanswered asks are dropped (the gate takes
    /// that as a rejection).
    fn end_turn(&mut self) {
        self.turn = None;
        self.pending.clear();
        self.queued.clear();
    }

    fn asked(&mut self, request: ApprovalRequest) -> Msg {
        let view = AskView::of(&request.request);
        self.pending.insert(request.request.id.clone(), request);
        if self.state.ask.is_some() {
            self.queued.push_back(view);
            return Msg::Tick;
        }
        Msg::Asked(Box::new(view))
    }

    fn work_done(&mut self, done: WorkDone) -> Msg {
        match done {
            WorkDone::Prepared(Err(message)) => Msg::Finished(TurnSummary {
                stopped: Some(message),
                ..TurnSummary::default()
            }),
            WorkDone::Prepared(Ok(prepared)) => {
                let cancel = CancellationToken::new();
                if let Some(plan) = prepared.subtask.clone() {
                    self.work = Some((self.local.subtask(plan, cancel.clone()), cancel));
                    return Msg::Said(NoteKind::Info, "running the command as a sub-agent".into());
                }
                let notes = prepared.notes.join("\n");
                self.turn = Some(self.local.send_prepared(*prepared));
                Msg::Said(NoteKind::Info, notes)
            }
            WorkDone::Subtask(result) => {
                let (kind, text) = match result {
                    Ok(output) => (NoteKind::Info, output),
                    Err(error) => (
                        NoteKind::Error,
                        format!("the sub-agent did not run: {error}"),
                    ),
                };
                self.state.transcript.note(kind, &text);
                Msg::Finished(TurnSummary::default())
            }
        }
    }

    /// Carries out `effect`; the messages it answers with.
    async fn effect(&mut self, effect: Effect) -> Vec<Msg> {
        let local = &mut self.local;
        match effect {
            Effect::Send(text) => {
                self.turn = Some(local.send(text));
                Vec::new()
            }
            Effect::Command { name, arguments } => {
                let cancel = CancellationToken::new();
                self.work = Some((local.prepare(name, arguments, cancel.clone()), cancel));
                Vec::new()
            }
            Effect::Cancel => {
                if let Some(turn) = &self.turn {
                    turn.cancel.cancel();
                }
                if let Some((_, cancel)) = &self.work {
                    cancel.cancel();
                }
                Vec::new()
            }
            Effect::Answer { id, answer } => {
                if let Some(request) = self.pending.remove(&id) {
                    request.respond(reply_of(answer));
                }
                Vec::new()
            }
            Effect::Undo(argument) => local.undo("/undo", &argument).await,
            Effect::Redo(argument) => local.undo("/redo", &argument).await,
            Effect::Agent(name) => local.switch_agent(&name).await,
            Effect::Model(name) => local.switch_model(&name).await,
            Effect::ListSessions => local.sessions().await,
            Effect::OpenSession(id) => local.open(&id).await,
            Effect::Quit => Vec::new(),
        }
    }
}

/// The message a terminal event is, if any (a resize only redraws).
fn input_msg(event: crossterm::event::Event) -> Option<Msg> {
    use crossterm::event::Event;
    match event {
        Event::Key(key) => Some(Msg::Key(key)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Resize(..) => Some(Msg::Tick),
        _ => None,
    }
}
