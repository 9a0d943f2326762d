//! The ACP agent side of one connection: the handlers of `initialize`,
//! `session/new`, `session/load`, `session/set_mode`, `session/prompt` and
//! `session/cancel`, and the sessions they share.
//!
//! The SDK runs a handler inside its dispatch loop, so anything that waits
//! (building an agent, a turn, which asks the client for permissions) runs
//! on a spawned task and answers through the request's responder.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, EmbeddedResourceResource,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionId, SessionMode, SessionModeState, SessionNotification, SessionUpdate,
    SetSessionModeRequest, SetSessionModeResponse, StopReason as AcpStop,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, Responder, V1};
use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::approver::{ClientApprover, TurnSlot};
use super::commands::{self, Slash};
use super::setup::client_mcp_entries;
use super::updates;
use super::usage::{UsageMeter, turn_usage};
use crate::agent_factory::{AgentFactory, AgentSetup};
use crate::{
    AgentMode, CodingAgent, DeltaField, Event, FinishReason, Part, PromptError, Role, StopReason,
    TurnEvent, TurnResult,
};

/// An ACP session: its agent and the turn it is running.
struct AcpSession {
    agent: CodingAgent,
    turn: Arc<TurnSlot>,
}

/// What the handlers share.
struct Shared {
    factory: Arc<dyn AgentFactory>,
    /// Where an untrusted project's trust is recorded when the editor
    /// grants it; `None`: never asked.
    trust: Option<crate::project_trust::TrustStore>,
    info: Implementation,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl Shared {
    fn session(&self, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&*id.0)
            .cloned()
            .ok_or_else(|| {
                agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into()
            })
    }
}

/// Serves ACP on `input`/`output` (newline-delimited JSON-RPC) until the
/// client closes its end, building each session's agent with `factory`.
pub(crate) async fn serve<R, W>(
    factory: Arc<dyn AgentFactory>,
    trust: Option<crate::project_trust::TrustStore>,
    info: Implementation,
    input: R,
    output: W,
) -> Result<(), Error>
where
    R: AsyncRead + Send + 'static,
    W: AsyncWrite + Send + 'static,
{
    let shared = Arc::new(Shared {
        factory,
        trust,
        info,
        sessions: Mutex::new(HashMap::new()),
    });
    let transport = ByteStreams::new(output.compat_write(), input.compat());
    let on_new = Arc::clone(&shared);
    let on_load = Arc::clone(&shared);
    let on_mode = Arc::clone(&shared);
    let on_prompt = Arc::clone(&shared);
    let on_cancel = Arc::clone(&shared);
    let on_init = Arc::clone(&shared);
    let result = Agent
        .v1()
        .name("agentgate")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(initialize(&on_init, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let shared = Arc::clone(&on_new);
                let connection = cx.clone();
                cx.spawn(new_session(shared, connection, request, responder))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let shared = Arc::clone(&on_load);
                let connection = cx.clone();
                cx.spawn(load_session(shared, connection, request, responder))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                let shared = Arc::clone(&on_mode);
                cx.spawn(async move {
                    match set_mode(&shared, &request).await {
                        Ok(()) => responder.respond(SetSessionModeResponse::new()),
                        Err(error) => responder.respond_with_error(error),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                let shared = Arc::clone(&on_prompt);
                let connection = cx.clone();
                cx.spawn(async move {
                    match prompt(&shared, &connection, request).await {
                        Ok(response) => responder.respond(response),
                        Err(error) => responder.respond_with_error(error),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(session) = on_cancel.session(&notification.session_id) {
                    session.turn.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    // The sessions' agents (and the MCP servers they started) stop here.
    shared
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    result
}

/// `session/new`: builds the session's agent, answers with its id and
/// modes, then lists the project's custom commands.
async fn new_session(
    shared: Arc<Shared>,
    connection: ConnectionTo<Client>,
    request: NewSessionRequest,
    responder: Responder<NewSessionResponse, V1>,
) -> Result<(), Error> {
    let opened = open(
        &shared,
        &connection,
        request.cwd,
        None,
        &request.mcp_servers,
    );
    match opened.await {
        Ok((id, modes)) => {
            responder.respond(NewSessionResponse::new(id.clone()).modes(modes))?;
            announce_commands(&shared, &connection, &id);
            Ok(())
        }
        Err(error) => responder.respond_with_error(error),
    }
}

/// `session/load`: builds the stored session's agent, replays its
/// transcript, answers with its modes, then lists the project's custom
/// commands.
async fn load_session(
    shared: Arc<Shared>,
    connection: ConnectionTo<Client>,
    request: LoadSessionRequest,
    responder: Responder<LoadSessionResponse, V1>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let opened = open(
        &shared,
        &connection,
        request.cwd,
        Some(id),
        &request.mcp_servers,
    );
    match opened.await {
        Ok((id, modes)) => {
            replay(&shared, &connection, &id).await;
            responder.respond(LoadSessionResponse::new().modes(modes))?;
            announce_commands(&shared, &connection, &id);
            Ok(())
        }
        Err(error) => responder.respond_with_error(error),
    }
}

/// Sends session `id` its `available_commands_update` (after the answer
/// that tells the client the session exists, as opencode does).
fn announce_commands(shared: &Shared, connection: &ConnectionTo<Client>, id: &str) {
    if let Ok(session) = shared.session(&SessionId::new(id)) {
        notify(connection, id, commands::available(&session.agent));
    }
}

/// The answer to `initialize`: protocol 1 (the stable one), sessions can
/// be loaded, prompts may carry embedded text resources, MCP servers may
/// be stdio or HTTP ones.
fn initialize(shared: &Shared, request: &InitializeRequest) -> InitializeResponse {
    let version = if request.protocol_version < ProtocolVersion::V1 {
        request.protocol_version
    } else {
        ProtocolVersion::V1
    };
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            PromptCapabilities::new()
                .image(false)
                .audio(false)
                .embedded_context(true),
        )
        .mcp_capabilities(McpCapabilities::new().http(true).sse(false));
    InitializeResponse::new(version)
        .agent_capabilities(capabilities)
        .agent_info(shared.info.clone())
}

/// Builds the agent of a new or loaded session and registers it; its id
/// and modes.
async fn open(
    shared: &Shared,
    connection: &ConnectionTo<Client>,
    cwd: std::path::PathBuf,
    resume: Option<String>,
    mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
) -> Result<(String, SessionModeState), Error> {
    if !cwd.is_absolute() {
        return Err(Error::invalid_params().data(format!(
            "cwd must be an absolute path, got {}",
            cwd.display()
        )));
    }
    let session_id = Arc::new(Mutex::new(resume.clone().unwrap_or_default()));
    let turn = Arc::new(TurnSlot::default());
    let approver = ClientApprover {
        connection: connection.clone(),
        session_id: Arc::clone(&session_id),
        turn: Arc::clone(&turn),
    };
    let setup = AgentSetup::new(cwd)
        .with_approver(Arc::new(approver))
        .with_resume(resume)
        .with_mcp_servers(client_mcp_entries(mcp_servers));
    let build = |setup: AgentSetup| async {
        shared
            .factory
            .build(setup)
            .await
            .map_err(|error| Error::internal_error().data(error.to_string()))
    };
    let mut agent = build(setup.clone()).await?;
    let id = agent.session().id.clone();
    *session_id.lock().unwrap_or_else(PoisonError::into_inner) = id.clone();
    if let Some(store) = &shared.trust
        && trusted_by_the_editor(connection, store, &agent, &id).await
    {
        // Built again on the recorded trust, continuing the same session.
        drop(agent);
        agent = build(setup.with_resume(Some(id.clone()))).await?;
    }
    let modes = modes_of(&agent).await;
    shared
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.clone(), Arc::new(AcpSession { agent, turn }));
    Ok((id, modes))
}

/// Whether the editor trusted `agent`'s untrusted project (asked only when
/// its configuration would do something trust changes); a yes is recorded
/// in `store`. A record that cannot be written is logged and counts as no.
async fn trusted_by_the_editor(
    connection: &ConnectionTo<Client>,
    store: &crate::project_trust::TrustStore,
    agent: &CodingAgent,
    session_id: &str,
) -> bool {
    let trust = agent.trust();
    if trust.is_trusted() || trust.parts().is_empty() {
        return false;
    }
    let root = agent.project_root();
    if !super::approver::ask_trust(connection, session_id, root, &trust.lines()).await {
        return false;
    }
    match store.record(root, trust.parts()) {
        Ok(_) => true,
        Err(error) => {
            tracing::warn!(%error, "the project's trust could not be recorded; it stays untrusted");
            false
        }
    }
}

/// The primary agents (those a person picks) as the session's modes, the
/// session's own agent current.
async fn modes_of(agent: &CodingAgent) -> SessionModeState {
    let current = agent
        .engine()
        .store()
        .session(&agent.session().id)
        .await
        .map(|s| s.agent)
        .unwrap_or_else(|_| agent.session().agent.clone());
    let modes = primary_agents(agent)
        .into_iter()
        .map(|(name, description)| SessionMode::new(name.clone(), name).description(description))
        .collect();
    SessionModeState::new(current, modes)
}

fn primary_agents(agent: &CodingAgent) -> Vec<(String, Option<String>)> {
    let Some(agents) = agent.engine().agents() else {
        return Vec::new();
    };
    agents
        .list()
        .into_iter()
        .filter(|a| a.mode != AgentMode::Subagent && !a.hidden)
        .map(|a| (a.name.clone(), a.description.clone()))
        .collect()
}

/// `session/set_mode`: the session's next prompts run on that agent.
async fn set_mode(shared: &Shared, request: &SetSessionModeRequest) -> Result<(), Error> {
    let session = shared.session(&request.session_id)?;
    let mode = request.mode_id.0.to_string();
    if !primary_agents(&session.agent)
        .iter()
        .any(|(name, _)| *name == mode)
    {
        return Err(Error::invalid_params().data(format!("unknown mode {mode:?}")));
    }
    let store = session.agent.engine().store();
    let id = &session.agent.session().id;
    let mut stored = store
        .session(id)
        .await
        .map_err(|e| Error::internal_error().data(e.to_string()))?;
    stored.agent = mode;
    store
        .put_session(&stored)
        .await
        .map_err(|e| Error::internal_error().data(e.to_string()))
}

fn notify(connection: &ConnectionTo<Client>, session_id: &str, update: SessionUpdate) {
    if let Err(error) =
        connection.send_notification(SessionNotification::new(session_id.to_string(), update))
    {
        tracing::warn!(%error, "a session update could not be sent");
    }
}

/// `session/load`: the stored transcript as updates, before the answer.
async fn replay(shared: &Shared, connection: &ConnectionTo<Client>, id: &str) {
    let Ok(session) = shared.session(&SessionId::new(id)) else {
        return;
    };
    match session.agent.engine().store().messages(id).await {
        Ok(messages) => {
            for message in &messages {
                for update in updates::replay(message) {
                    notify(connection, id, update);
                }
            }
        }
        Err(error) => tracing::warn!(%error, "the stored transcript could not be read"),
    }
}

/// The prompt's text: its text blocks, embedded text resources (with
/// their URI) and links, in order.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(contents) = &resource.resource
                {
                    parts.push(format!(
                        "<file uri=\"{}\">\n{}\n</file>",
                        contents.uri, contents.text
                    ));
                }
            }
            _ => {}
        }
    }
    parts.join("\n")
}

/// `session/prompt`: runs the turn (a custom command's when the prompt
/// starts with `/NAME` of one, a compaction for `/compact`), streaming it
/// as updates (with a `usage_update` after each step); its stop reason
/// and the turn's tokens.
async fn prompt(
    shared: &Shared,
    connection: &ConnectionTo<Client>,
    request: PromptRequest,
) -> Result<PromptResponse, Error> {
    let session = shared.session(&request.session_id)?;
    let agent = &session.agent;
    let id = agent.session().id.clone();
    let meter = usage_meter(agent).await;
    let cancel = session.turn.start();
    let text = prompt_text(&request.prompt);
    let stop = match commands::prepare(agent, &text, cancel.clone()).await {
        Slash::Text => {
            let stream = agent.stream_with(text, cancel.clone());
            finished(stream_turn(connection, &id, meter, stream).await, &cancel)
        }
        Slash::Prepared(prepared) => {
            let prepared = *prepared;
            for note in &prepared.notes {
                notify(connection, &id, thought(format!("{note}\n")));
            }
            match &prepared.subtask {
                Some(plan) => {
                    run_subtask(connection, agent, plan, &cancel).await;
                    Ok(PromptResponse::new(ended(&cancel)))
                }
                None => {
                    let stream =
                        agent.stream_parts(prepared.parts, prepared.options, cancel.clone());
                    finished(stream_turn(connection, &id, meter, stream).await, &cancel)
                }
            }
        }
        Slash::Failed(message) => {
            notify(connection, &id, said(message));
            Ok(PromptResponse::new(ended(&cancel)))
        }
        Slash::Compact => {
            let engine = agent.engine();
            let (runner, root, token) = (engine.clone(), id.clone(), cancel.clone());
            let run = async move {
                runner
                    .compact(&root, crate::PromptOptions::default(), token)
                    .await
            };
            finished(
                stream_turn(connection, &id, meter, engine.follow(&id, run)).await,
                &cancel,
            )
        }
    };
    session.turn.finish();
    stop
}

/// Streams a turn's events of session `id` as updates; its result.
async fn stream_turn(
    connection: &ConnectionTo<Client>,
    id: &str,
    meter: UsageMeter,
    stream: impl futures::Stream<Item = TurnEvent>,
) -> Option<Result<TurnResult, PromptError>> {
    let mut stream = Box::pin(stream);
    let mut streamer = TurnStreamer::new(id.to_string(), meter);
    let mut finished = None;
    while let Some(item) = stream.next().await {
        match item {
            TurnEvent::Event(event) => {
                for update in streamer.updates(&event) {
                    notify(connection, id, update);
                }
            }
            TurnEvent::Finished(result) => finished = Some(result),
            _ => {}
        }
    }
    finished
}

/// Runs a command's sub-agent; its answer (or why it did not run) is the
/// agent's message.
async fn run_subtask(
    connection: &ConnectionTo<Client>,
    agent: &CodingAgent,
    plan: &crate::SubtaskPlan,
    cancel: &tokio_util::sync::CancellationToken,
) {
    let id = &agent.session().id;
    let run = agent.engine().run_subtask(id, plan, cancel.clone()).await;
    let text = match run {
        Ok(output) => output.output,
        Err(error) => format!("the sub-agent {} did not run: {error}", plan.agent),
    };
    notify(connection, id, said(text));
}

/// An agent message chunk of `text`.
fn said(text: String) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
}

/// An agent thought chunk of `text`.
fn thought(text: String) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(text)))
}

/// How a turn that ran no model ends: cancelled, or at its end.
fn ended(cancel: &tokio_util::sync::CancellationToken) -> AcpStop {
    if cancel.is_cancelled() {
        AcpStop::Cancelled
    } else {
        AcpStop::EndTurn
    }
}

/// A streamed turn's result as the prompt's answer: its stop reason and
/// tokens.
fn finished(
    result: Option<Result<TurnResult, PromptError>>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<PromptResponse, Error> {
    let cancelled = cancel.is_cancelled();
    match result {
        Some(Ok(result)) => {
            Ok(PromptResponse::new(stop_reason(&result, cancelled)?)
                .usage(turn_usage(&result.usage)))
        }
        Some(Err(error)) => Err(prompt_error(&error)),
        None if cancelled => Ok(PromptResponse::new(AcpStop::Cancelled)),
        None => Err(Error::internal_error().data("the turn ended without a result")),
    }
}

/// The session's usage account: its model's window and prices, and the
/// cost of its stored transcript.
async fn usage_meter(agent: &CodingAgent) -> UsageMeter {
    let Ok(model) = agent.engine().model_for(agent.session()) else {
        return UsageMeter::default();
    };
    let info = model.info();
    let id = &agent.session().id;
    let history = agent
        .engine()
        .store()
        .messages(id)
        .await
        .unwrap_or_default();
    UsageMeter::new(info.limits.context, info.cost, &history)
}

fn prompt_error(error: &PromptError) -> Error {
    match error {
        PromptError::Busy(_) => Error::invalid_request().data(error.to_string()),
        _ => Error::internal_error().data(error.to_string()),
    }
}

/// The turn's end as an ACP stop reason; a failed model call is an error
/// the client shows.
fn stop_reason(result: &TurnResult, cancelled: bool) -> Result<AcpStop, Error> {
    Ok(match &result.stop {
        StopReason::Cancelled => AcpStop::Cancelled,
        _ if cancelled => AcpStop::Cancelled,
        StopReason::Done { finish } => match finish {
            FinishReason::Length => AcpStop::MaxTokens,
            FinishReason::ContentFilter => AcpStop::Refusal,
            _ => AcpStop::EndTurn,
        },
        StopReason::ContentFilter => AcpStop::Refusal,
        StopReason::StepLimit => AcpStop::MaxTurnRequests,
        StopReason::ContextOverflow => AcpStop::MaxTokens,
        StopReason::Error { error } => {
            return Err(Error::internal_error().data(error.message.clone()));
        }
        // A rejected ask or a denied loop check ends the turn as the user
        // (or the rules) asked.
        _ => AcpStop::EndTurn,
    })
}

/// Turns the engine's events of one turn into updates: text and
/// reasoning deltas as chunks, each tool call first as `tool_call` then
/// as `tool_call_update`s, a finished todo list as a plan. Only the
/// session's own events: a sub-agent's run shows as its task call.
struct TurnStreamer {
    session_id: String,
    user_messages: HashSet<String>,
    known_calls: HashSet<String>,
    meter: UsageMeter,
}

impl TurnStreamer {
    fn new(session_id: String, meter: UsageMeter) -> Self {
        TurnStreamer {
            session_id,
            user_messages: HashSet::new(),
            known_calls: HashSet::new(),
            meter,
        }
    }

    fn updates(&mut self, event: &Event) -> Vec<SessionUpdate> {
        if event.session_id() != self.session_id {
            return Vec::new();
        }
        match event {
            Event::MessageCreated {
                message_id, role, ..
            } => {
                if *role == Role::User {
                    self.user_messages.insert(message_id.clone());
                }
                Vec::new()
            }
            Event::PartDelta {
                message_id,
                field,
                delta,
                ..
            } if !self.user_messages.contains(message_id) && !delta.is_empty() => {
                let chunk = ContentChunk::new(ContentBlock::from(delta.clone()));
                match field {
                    DeltaField::Text => vec![SessionUpdate::AgentMessageChunk(chunk)],
                    DeltaField::Reasoning => vec![SessionUpdate::AgentThoughtChunk(chunk)],
                    _ => Vec::new(),
                }
            }
            Event::PartCreated {
                part: Part::Tool(tool),
                ..
            }
            | Event::PartUpdated {
                part: Part::Tool(tool),
                ..
            } => {
                let mut out = Vec::new();
                if self.known_calls.insert(tool.call_id.clone()) {
                    out.push(SessionUpdate::ToolCall(updates::tool_call(tool)));
                } else {
                    out.push(SessionUpdate::ToolCallUpdate(updates::tool_call_update(
                        tool,
                    )));
                }
                if let Some(plan) = updates::plan_of(tool) {
                    out.push(SessionUpdate::Plan(plan));
                }
                out
            }
            Event::StepFinished { usage, .. } => self.meter.step(usage).into_iter().collect(),
            _ => Vec::new(),
        }
    }
}
