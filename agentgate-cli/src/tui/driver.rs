//! The loop of `agent tui`: it waits for a key, an event of the running
//! turn, an ask, or a command's preparation, turns it into a message for
//! [`update`], carries out the effects update returns on the [`Backend`]
//! (an agent here or a server's session), and redraws (ratatui sends only
//! the cells that changed). While nothing happens it sleeps: no timer runs
//! unless a turn does.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use agentgate::CancellationToken;
use agentgate::permission::ApprovalRequest;
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::Backend as TerminalBackend;
use tokio::sync::mpsc;

use super::ask_modal::AskView;
use super::backend::Backend;
use super::state::State;
use super::transcript::NoteKind;
use super::transcript_view::ViewCache;
use super::update::{Effect, Msg, TurnSummary, update};
use super::view;
use super::work::{Started, Turn, Work, WorkDone};

/// Everything the loop holds besides the screen.
pub struct Driver {
    /// Where the session runs.
    pub backend: Backend,
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
async fn next_event(turn: &mut Option<Turn>) -> Option<Msg> {
    match turn {
        Some(turn) => turn.events.next().await,
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

impl Driver {
    /// A driver for `backend`, its asks arriving on `asks`.
    pub fn new(backend: Backend, state: State, asks: mpsc::Receiver<ApprovalRequest>) -> Self {
        Driver {
            backend,
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
    pub async fn run<B: TerminalBackend>(
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
                // PgUp past the top does not pile up rows PgDn must undo
                // (nor make the next frame wrap the whole transcript).
                if let Some(used) = self.cache.used_scroll() {
                    self.state.scroll = self.state.scroll.min(used);
                }
                if let Some(page) = self.cache.page_rows() {
                    self.state.page = page;
                }
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

    fn turn_event(&mut self, item: Option<Msg>) -> Msg {
        match item {
            Some(msg @ Msg::Finished(_)) => {
                self.end_turn();
                msg
            }
            Some(msg) => msg,
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
        if let WorkDone::Subtask(result) = done {
            let (kind, text) = match result {
                Ok(output) => (NoteKind::Info, output),
                Err(error) => (
                    NoteKind::Error,
                    format!("the sub-agent did not run: {error}"),
                ),
            };
            self.state.transcript.note(kind, &text);
            return Msg::Finished(TurnSummary::default());
        }
        let notes = match &done {
            WorkDone::Prepared(Ok(prepared)) => prepared.notes.join("\n"),
            _ => String::new(),
        };
        let started = self.backend.prepared(done);
        self.start(started)
            .unwrap_or(Msg::Said(NoteKind::Info, notes))
    }

    /// Follows what a command started; a message when it did not start.
    fn start(&mut self, started: Started) -> Option<Msg> {
        match started {
            Started::Work(work, cancel) => self.work = Some((work, cancel)),
            Started::Turn(turn) => self.turn = Some(turn),
            Started::Failed(message) => {
                return Some(Msg::Finished(TurnSummary {
                    stopped: Some(message),
                    ..TurnSummary::default()
                }));
            }
        }
        None
    }

    /// Carries out `effect`; the messages it answers with.
    async fn effect(&mut self, effect: Effect) -> Vec<Msg> {
        let backend = &mut self.backend;
        match effect {
            Effect::Send(text) => {
                let started = match backend.send(text).await {
                    Ok(turn) => Started::Turn(turn),
                    Err(error) => Started::Failed(format!("the prompt was not sent: {error}")),
                };
                self.start(started).into_iter().collect()
            }
            Effect::Command { name, arguments } => {
                let started = backend.command(name, arguments).await;
                self.start(started).into_iter().collect()
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
                    request.respond(answer.reply());
                }
                Vec::new()
            }
            Effect::Undo(argument) => backend.undo("/undo", &argument).await,
            Effect::Redo(argument) => backend.undo("/redo", &argument).await,
            Effect::Agent(name) => backend.switch_agent(&name).await,
            Effect::Model(name) => backend.switch_model(&name).await,
            Effect::ListSessions => backend.sessions().await,
            Effect::OpenSession(id) => backend.open(&id).await,
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
