//! What the handlers share: the sessions this process serves (each with
//! its agent, built lazily, and its turn queue), the gate, the store, the
//! relay and the bus; running a prompt, aborting, answering asks.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agentgate_store::AskRelay;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::events::{Bus, TurnTranslator};
use super::served::ServedSessions;
pub(crate) use super::served::{Served, ServedRef};
use crate::agent_factory::{AgentFactory, AgentSetup};
use crate::permission::{PermissionEvent, PermissionGate, PermissionRequest, Reply};
use crate::protocol::{ServerEvent, SessionInfo};
use crate::{
    CodingAgent, Config, Event, Message, ModelRef, Part, PromptError, PromptOptions, Role,
    SessionStore, SessionStoreError, TurnEvent, TurnResult,
};

/// Why a request failed, with the HTTP status it is answered with.
#[derive(Debug)]
pub(crate) enum Failure {
    /// 400.
    BadRequest(String),
    /// 404.
    NotFound(String),
    /// 409: the session was aborted before the queued prompt ran.
    Aborted(String),
    /// 409 with the error's name: the session is busy (`SessionBusyError`),
    /// or files changed since a checkpoint (`FileConflictError`).
    Conflict(&'static str, String),
    /// 500.
    Internal(String),
    /// The turn was set aside at an ask and dropped from memory (see
    /// the `parking` module); it resumes when the ask is answered.
    Parked(String),
}

impl Failure {
    /// What went wrong, as the error answer says it.
    pub(crate) fn message(&self) -> &str {
        match self {
            Failure::BadRequest(m)
            | Failure::NotFound(m)
            | Failure::Aborted(m)
            | Failure::Conflict(_, m)
            | Failure::Internal(m)
            | Failure::Parked(m) => m,
        }
    }
}

impl From<SessionStoreError> for Failure {
    fn from(error: SessionStoreError) -> Self {
        match error {
            SessionStoreError::NotFound(id) => Failure::NotFound(format!("session {id} not found")),
            SessionStoreError::MessageNotFound { session, message } => {
                Failure::NotFound(format!("session {session} has no message {message}"))
            }
            other => Failure::Internal(other.to_string()),
        }
    }
}

/// What a queued turn of a session does.
pub(crate) enum Work {
    /// A prompt of these parts.
    Prompt(Vec<Part>),
    /// The user's shell command (`POST /session/{id}/shell`).
    Shell(String),
    /// A compaction asked for by hand (`POST /session/{id}/summarize`).
    Compact,
    /// A custom command that runs as a sub-agent (its `task` call).
    Subtask(crate::SubtaskPlan),
    /// A turn stopped at an ask a process that is gone raised, resumed
    /// with its answer ([`Engine::resume_ask`](crate::Engine::resume_ask)).
    Resume(Box<PermissionRequest>, Reply),
}

impl Work {
    /// The engine's events of this work on session `id`, then its result.
    fn stream(
        self,
        engine: &crate::Engine,
        id: &str,
        once: PromptOptions,
        (cancel, park): (CancellationToken, CancellationToken),
    ) -> futures::stream::BoxStream<'static, TurnEvent> {
        let (runner, root) = (engine.clone(), id.to_string());
        let run: futures::future::BoxFuture<'static, Result<TurnResult, PromptError>> = match self {
            Work::Prompt(parts) => {
                Box::pin(
                    async move { runner.prompt_with_options(&root, parts, once, cancel).await },
                )
            }
            Work::Shell(command) => {
                Box::pin(async move { runner.run_shell(&root, &command, once, cancel).await })
            }
            Work::Compact => Box::pin(async move { runner.compact(&root, once, cancel).await }),
            Work::Subtask(plan) => {
                Box::pin(async move { runner.run_subtask_call(&root, &plan, once, cancel).await })
            }
            Work::Resume(request, reply) => {
                Box::pin(async move { runner.resume_ask(&request, reply, cancel).await })
            }
        };
        engine
            .follow(id, super::served::unless_parked(run, park))
            .boxed()
    }
}

/// The state of one server.
pub(crate) struct Shared {
    pub(crate) factory: Arc<dyn AgentFactory>,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) gate: PermissionGate,
    pub(crate) relay: Arc<dyn AskRelay>,
    pub(crate) directory: PathBuf,
    pub(crate) config: Option<Config>,
    /// The served project's custom commands, for `GET /command`.
    pub(crate) commands: crate::Commands,
    /// Whether the served project's configuration is trusted.
    pub(crate) trust: crate::ProjectTrust,
    /// The audit log `GET /audit` reads, if the server keeps one.
    pub(crate) audit: Option<Arc<dyn agentgate_store::AuditLog>>,
    pub(crate) bus: Bus,
    pub(crate) sessions: ServedSessions,
    /// The agent whose engine new and reopened sessions share, when the
    /// factory allows it ([`AgentFactory::shares_engine`]).
    template: Mutex<Option<CodingAgent>>,
    /// Asks of this process published on the relay and not yet withdrawn.
    published: Mutex<HashSet<String>>,
    /// Asks this process parked (see the `parking` module) and has not
    /// seen answered: an answer relayed here for one of them resumes it.
    pub(crate) parked_asks: Mutex<HashSet<String>>,
    /// Stops the background tasks when the server stops.
    pub(crate) stop: CancellationToken,
    /// How long a turn may wait at an ask in memory before it is parked
    /// (see the `parking` module); `None`: never.
    pub(crate) park_after: Option<std::time::Duration>,
}

/// The project a server serves: its directory, configuration and trust.
pub(crate) struct ServedProject {
    pub(crate) directory: PathBuf,
    pub(crate) config: Option<Config>,
    pub(crate) commands: crate::Commands,
    pub(crate) trust: crate::ProjectTrust,
    /// The audit log `GET /audit` reads, if the server keeps one.
    pub(crate) audit: Option<Arc<dyn agentgate_store::AuditLog>>,
}

impl Shared {
    pub(crate) fn new(
        factory: Arc<dyn AgentFactory>,
        store: Arc<dyn SessionStore>,
        gate: PermissionGate,
        relay: Arc<dyn AskRelay>,
        project: ServedProject,
        bus: Bus,
    ) -> Self {
        let ServedProject {
            directory,
            config,
            commands,
            trust,
            audit,
        } = project;
        Shared {
            factory,
            store,
            gate,
            relay,
            directory,
            config,
            commands,
            trust,
            audit,
            bus,
            sessions: ServedSessions::default(),
            template: Mutex::new(None),
            published: Mutex::new(HashSet::new()),
            parked_asks: Mutex::new(HashSet::new()),
            stop: CancellationToken::new(),
            park_after: None,
        }
    }

    /// This, parking turns that wait at an ask for `after` (see
    /// the `parking` module); `None`: never.
    pub(crate) fn parking_after(mut self, after: Option<std::time::Duration>) -> Self {
        self.park_after = after;
        self
    }

    fn setup(&self, resume: Option<String>, agent: Option<String>) -> AgentSetup {
        AgentSetup::new(self.directory.clone())
            .with_permissions(self.gate.clone())
            .with_store(Arc::clone(&self.store))
            .with_resume(resume)
            .with_agent(agent)
    }

    /// The agent new sessions open on, if the factory shares engines and
    /// one was built.
    fn template(&self) -> Option<CodingAgent> {
        self.template
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Builds through the factory; the first agent of a factory that
    /// shares engines becomes the template.
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, Failure> {
        let built = self.factory.build(setup).await.map_err(|e| {
            match e.downcast_ref::<crate::CodingAgentError>() {
                Some(unknown @ crate::CodingAgentError::UnknownAgent { .. }) => {
                    Failure::BadRequest(unknown.to_string())
                }
                _ => Failure::Internal(format!("the session's agent could not be built: {e}")),
            }
        })?;
        if self.factory.shares_engine() {
            let mut template = self.template.lock().unwrap_or_else(PoisonError::into_inner);
            if template.is_none() {
                *template = Some(built.clone());
            }
        }
        Ok(built)
    }

    /// Creates a session through the factory, or on the template's engine.
    pub(crate) async fn create(
        &self,
        agent: Option<String>,
        title: Option<String>,
    ) -> Result<ServedRef, Failure> {
        let built = match self.template() {
            Some(template) => {
                template
                    .new_session(agent.as_deref())
                    .await
                    .map_err(|e| match e {
                        crate::CodingAgentError::UnknownAgent { .. } => {
                            Failure::BadRequest(e.to_string())
                        }
                        e => Failure::Internal(format!("the session could not be created: {e}")),
                    })?
            }
            None => self.build(self.setup(None, agent)).await?,
        };
        if let Some(title) = title {
            let mut session = self.store.session(&built.session().id).await?;
            session.title = title;
            self.store.put_session(&session).await?;
        }
        Ok(self.sessions.register(built))
    }

    /// The served session `id`, opened now when nothing holds it (it may
    /// have been idle, come from an earlier run or from another process
    /// sharing the store).
    pub(crate) async fn served(&self, id: &str) -> Result<ServedRef, Failure> {
        if let Some(served) = self.sessions.get(id) {
            return Ok(served);
        }
        self.store.session(id).await?;
        let built = match self.template() {
            Some(template) => template
                .open_session(id)
                .await
                .map_err(|e| Failure::Internal(format!("the session could not be opened: {e}")))?,
            None => self.build(self.setup(Some(id.to_string()), None)).await?,
        };
        Ok(self.sessions.register(built))
    }

    /// Forgets a session's agent (after an abort or a deletion).
    pub(crate) fn forget(&self, id: &str) {
        self.sessions.remove(id);
    }

    /// Stops the server's work: every session is aborted, the bridges and
    /// the event streams end.
    ///
    /// With a relay whose asks outlive the process, a session waiting at an
    /// ask is left as it is (its ask stays listed, and the next process
    /// resumes it when it is answered); the others are aborted.
    pub(crate) fn shutdown(&self) {
        let waiting: HashSet<String> = if self.relay.outlives_the_process() {
            self.gate
                .pending()
                .into_iter()
                .map(|r| r.session_id)
                .collect()
        } else {
            HashSet::new()
        };
        for id in self.sessions.ids() {
            if !waiting.contains(&id) {
                self.abort(&id);
            }
        }
        self.stop.cancel();
    }

    /// Aborts session `id`: its pending asks are rejected, then the running
    /// turn and the prompts queued so far are cancelled.
    pub(crate) fn abort(&self, id: &str) {
        for request in self.gate.pending() {
            if request.session_id == id {
                // NotFound: it was answered meanwhile.
                let _ = self.gate.reply(&request.id, Reply::reject());
            }
        }
        if let Some(served) = self.sessions.get(id) {
            served.abort();
        }
    }

    /// Runs `work` (a prompt, a shell command, a compaction) on `served`
    /// once the prompts queued before it have run; its result. The prompt's `agent` and `model` are stored
    /// on the session (they run its next prompts too); `once` (a custom
    /// command's agent and model) runs this turn only.
    pub(crate) async fn prompt_once(
        self: &Arc<Self>,
        served: ServedRef,
        work: Work,
        (agent, model): (Option<String>, Option<ModelRef>),
        once: PromptOptions,
    ) -> Result<TurnResult, Failure> {
        let epoch = served.epoch();
        let _turn = served.turn.lock().await;
        let id = served.agent.session().id.clone();
        // A prompt refused before its turn starts (aborted while queued, a
        // bad agent or model, a store failure) still ends for those who
        // follow the session's events: `session.error`, then idle.
        let setup = self.turn_setup(&served, &epoch, agent, model, &once).await;
        let (mut translator, (untitled, mut reverted)) = match setup {
            Ok(setup) => setup,
            Err(failure) => {
                self.bus.refused(&id, failure.message());
                return Err(failure);
            }
        };
        let engine = served.agent.engine();
        self.bus.busy(&id);
        let parked = served.parked();
        let mut stream = work.stream(engine, &id, once, (epoch.child_token(), parked.clone()));
        let mut finished = None;
        while let Some(item) = stream.next().await {
            match item {
                TurnEvent::Event(event) => {
                    // The prompt removed what a revert hid: clients reload.
                    if reverted
                        && matches!(&event, Event::MessageCreated { role, .. } if *role == Role::User)
                    {
                        reverted = false;
                        self.announce_session(&id).await;
                    }
                    translator.publish(&event, &self.bus)
                }
                TurnEvent::Finished(result) => finished = Some(result),
                _ => {}
            }
        }
        if parked.is_cancelled() && matches!(finished, Some(Err(_))) {
            // Still waiting at its ask (not idle), in the store only now.
            return Err(Failure::Parked(format!(
                "session {id} waits at an ask; its turn resumes, on any server, when the ask is answered"
            )));
        }
        self.bus.idle(&id);
        if untitled {
            self.announce_title(engine, &id);
        }
        self.withdraw_resolved().await;
        match finished {
            Some(Ok(result)) => Ok(result),
            Some(Err(PromptError::UnknownAgent(agent))) => {
                Err(Failure::BadRequest(format!("unknown agent {agent:?}")))
            }
            Some(Err(error)) => Err(Failure::Internal(error.to_string())),
            None => Err(Failure::Internal("the turn ended without a result".into())),
        }
    }

    /// Publishes `session.updated` once the title the engine writes in the
    /// background for untitled session `id` is stored, so the page and
    /// opencode's clients show it without asking again.
    fn announce_title(self: &Arc<Self>, engine: &crate::Engine, id: &str) {
        let (shared, engine, id) = (Arc::clone(self), engine.clone(), id.to_string());
        tokio::spawn(async move {
            engine.wait_for_titles().await;
            if let Ok(session) = shared.store.session(&id).await
                && !session.title.is_empty()
            {
                let info = shared.session_info(&session).await;
                shared
                    .bus
                    .session_changed(ServerEvent::SessionUpdated, &id, &info);
            }
        });
    }

    /// Publishes `session.updated` with session `id` as stored now.
    async fn announce_session(&self, id: &str) {
        if let Ok(session) = self.store.session(id).await {
            let info = self.session_info(&session).await;
            self.bus
                .session_changed(ServerEvent::SessionUpdated, id, &info);
        }
    }

    /// `session` as opencode's `Session`, its last change taken from its
    /// messages when the store keeps no time of its own.
    pub(crate) async fn session_info(&self, session: &crate::Session) -> SessionInfo {
        if session.time.updated > 0 {
            return SessionInfo::of(session, None);
        }
        let updated = self
            .store
            .messages(&session.id)
            .await
            .ok()
            .and_then(|messages| messages.last().map(|m| m.time.end.unwrap_or(m.time.start)));
        SessionInfo::of(session, updated)
    }

    /// The checks and the session update before a turn: not aborted, the
    /// prompt's agent and model usable (and stored on the session); the
    /// translator of the turn's events, and whether the session has no
    /// title yet and whether it is reverted (read once, with the rest).
    async fn turn_setup(
        &self,
        served: &Served,
        epoch: &tokio_util::sync::CancellationToken,
        agent: Option<String>,
        model: Option<ModelRef>,
        once: &PromptOptions,
    ) -> Result<(TurnTranslator, (bool, bool)), Failure> {
        let id = served.agent.session().id.clone();
        if epoch.is_cancelled() {
            return Err(Failure::Aborted(format!(
                "session {id} was aborted before this prompt ran"
            )));
        }
        let engine = served.agent.engine();
        let mut session = self.store.session(&id).await?;
        let flags = (session.title.is_empty(), session.revert.is_some());
        if agent.is_some() || model.is_some() {
            if let Some(agent) = agent {
                if engine.agent(&agent).is_none() {
                    return Err(Failure::BadRequest(format!("unknown agent {agent:?}")));
                }
                session.agent = agent;
            }
            if let Some(model) = model {
                session.model = Some(model);
            }
            // Checked before it is stored: a bad model would break the
            // session's next prompts too.
            engine
                .model_for(&session)
                .map_err(|e| Failure::BadRequest(e.to_string()))?;
            self.store.put_session(&session).await?;
        }
        // The turn's own agent and model, as the engine runs it.
        if let Some(agent) = &once.agent {
            if engine.agent(agent).is_none() {
                return Err(Failure::BadRequest(format!("unknown agent {agent:?}")));
            }
            session.agent = agent.clone();
        }
        if let Some(model) = &once.model {
            session.model = Some(model.clone());
        }
        let info = engine
            .model_for(&session)
            .map_err(|e| Failure::BadRequest(e.to_string()))?;
        let info = info.info();
        let translator = TurnTranslator::new(
            session.directory.clone(),
            info.provider.clone(),
            info.id.clone(),
            session.agent.clone(),
        )
        .priced(info.cost);
        Ok((translator, flags))
    }

    /// Whether this process parked ask `id` and had not yet seen it
    /// answered; forgets it.
    pub(crate) fn take_parked(&self, id: &str) -> bool {
        self.parked_asks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }

    /// Withdraws from the relay the asks of this process that are no
    /// longer pending (answered, or dropped with their turn).
    async fn withdraw_resolved(&self) {
        let pending: HashSet<String> = self.gate.pending().into_iter().map(|r| r.id).collect();
        let gone: Vec<String> = {
            let mut published = self
                .published
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let gone = published.difference(&pending).cloned().collect();
            published.retain(|id| pending.contains(id));
            gone
        };
        for id in gone {
            if let Err(error) = self.relay.withdraw(&id).await {
                tracing::warn!(%error, request = %id, "an ask could not be withdrawn from the relay");
            }
        }
    }

    /// Has the gate save each ask in the relay before its answer counts, and
    /// remove it before the asking call goes on: with a relay whose asks
    /// outlive the process, an ask listed after a crash was never answered,
    /// so resuming it cannot run a call twice.
    fn keep_asks_in_the_relay(self: &Arc<Self>) {
        let relay = Arc::clone(&self.relay);
        // Weak: the gate holds the hook, and this holds the gate.
        let shared = Arc::downgrade(self);
        self.gate.on_asked(Arc::new(move |request: PermissionRequest| {
            let (relay, shared) = (Arc::clone(&relay), shared.clone());
            Box::pin(async move {
                if let Err(error) = relay.publish(&request).await {
                    tracing::warn!(%error, request = %request.id, "an ask could not be saved; it will not survive a restart");
                } else if let Some(shared) = shared.upgrade() {
                    shared.park_later(request);
                }
                true
            })
        }));
        let relay = Arc::clone(&self.relay);
        self.gate.on_answered(Arc::new(move |request: PermissionRequest| {
            let relay = Arc::clone(&relay);
            // The claim another process won (it resumed the call there)
            // means this call must not run; a claim that cannot be made
            // (the database failed) does not run it either.
            Box::pin(async move {
                match relay.claim(&request.id).await {
                    Ok(claimed) => claimed.is_some(),
                    Err(error) => {
                        tracing::warn!(%error, request = %request.id, "an answered ask could not be claimed; its call does not run");
                        false
                    }
                }
            })
        }));
    }

    /// Follows the gate (publishing asks on the relay and the bus) and the
    /// relay (applying replies given in other processes to this gate's
    /// asks) until the server stops.
    pub(crate) fn spawn_bridges(self: &Arc<Self>) {
        let durable = self.relay.outlives_the_process();
        if durable {
            self.keep_asks_in_the_relay();
        }
        let shared = Arc::clone(self);
        let mut gate_events = self.gate.subscribe();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    () = shared.stop.cancelled() => break,
                    event = gate_events.recv() => event,
                };
                match event {
                    Ok(event) => {
                        shared.bus.publish_permission(&event);
                        if durable {
                            // The gate's own hooks keep the relay.
                        } else if let PermissionEvent::Asked(request) = &event {
                            shared
                                .published
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .insert(request.id.clone());
                            if let Err(error) = shared.relay.publish(request).await {
                                tracing::warn!(%error, "an ask could not be published on the relay");
                            }
                        } else {
                            shared.withdraw_resolved().await;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "permission events lagged");
                        shared.withdraw_resolved().await;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }

    /// Session `id`'s messages, with the model of the session for their
    /// info.
    pub(crate) async fn messages(&self, id: &str) -> Result<Vec<Message>, Failure> {
        self.store.session(id).await?;
        Ok(self.store.messages(id).await?)
    }
}

/// The prompt's parts as the engine's: text as text, a subtask as a
/// subtask, an agent mention as `@name`, a file by its name and URL (not
/// read here: the model reads it through its tools, past the gate).
pub(crate) fn parts_of(inputs: Vec<super::wire::PartInput>) -> Result<Vec<Part>, Failure> {
    let mut parts = Vec::new();
    for input in inputs {
        match input.kind.as_str() {
            "text" => parts.push(Part::text(input.text.unwrap_or_default())),
            "file" => {
                let url = input.url.unwrap_or_default();
                let name = input.filename.unwrap_or_else(|| url.clone());
                parts.push(Part::text(format!("[file {name}: {url}]")));
            }
            "agent" => parts.push(Part::text(format!("@{}", input.name.unwrap_or_default()))),
            "subtask" => parts.push(Part::Subtask {
                id: Part::text("").id().to_string(),
                agent: input.agent.unwrap_or_default(),
                description: input.description.unwrap_or_default(),
                prompt: input.prompt.unwrap_or_default(),
            }),
            other => {
                return Err(Failure::BadRequest(format!(
                    "unknown part type {other:?}: use text, file, agent or subtask"
                )));
            }
        }
    }
    if parts.is_empty() {
        return Err(Failure::BadRequest(
            "a prompt needs at least one part".into(),
        ));
    }
    Ok(parts)
}

/// The last assistant message of a turn.
pub(crate) fn answer_of(result: &TurnResult) -> Option<&Message> {
    result
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
}
