//! `agentgate::remote::RemoteAgent` against a real `agentgate::server` on a
//! loopback port (the scripted model behind it), and against fake servers
//! that go silent, hang up or send garbage.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate::permission::{Action, AllowAll, Approver, PermissionRequest, Reply, Rule, Ruleset};
use agentgate::remote::{RemoteAgent, RemoteError, RemoteEvent, RemoteStop, RemoteTurn};
use agentgate::server::{AgentFactory, AgentSetup, Auth, FactoryError, Server};
use agentgate::{
    CodingAgent, ConfigLoader, ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool,
};
use agentgate_core::testing::{Script, ScriptedModel};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GuardedArgs {
    /// What to do.
    what: String,
}

/// A tool that asks permission `guarded` before it acts.
struct Guarded;

#[agentgate::async_trait]
impl TypedTool for Guarded {
    type Args = GuardedArgs;
    fn id(&self) -> &str {
        "guarded"
    }
    fn description(&self) -> &str {
        "Does something only after asking."
    }
    async fn run(&self, args: GuardedArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.ask(
            "guarded",
            [args.what.clone()],
            Vec::<String>::new(),
            json!({}),
        )
        .await?;
        Ok(ToolOutput::text(format!("did {}", args.what)))
    }
}

struct Scripted {
    model: Arc<ScriptedModel>,
    home: PathBuf,
}

#[agentgate::async_trait]
impl AgentFactory for Scripted {
    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        let mut tools = ToolRegistry::new();
        tools.register(Guarded);
        let loader = ConfigLoader::new(setup.directory())
            .home(&self.home)
            .global_dir(self.home.join("global"))
            .env(|_| None);
        let builder = CodingAgent::builder(setup.directory())
            .config(loader)
            .model(self.model.clone())
            .tools(tools)
            .without_mcp()
            .session_permission(Ruleset::from(vec![Rule::new("guarded", "*", Action::Ask)]));
        Ok(setup.apply(builder).build().await?)
    }
}

struct Running {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    model: Arc<ScriptedModel>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(name: &str, scripts: Vec<Script>, auth: Auth) -> Running {
    let dir = std::env::temp_dir().join(format!("agentgate-remote-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let model = Arc::new(ScriptedModel::new(scripts));
    let factory = Scripted {
        model: model.clone(),
        home: dir.join("home"),
    };
    let bound = Server::builder(Arc::new(factory), &dir)
        .address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .auth(auth)
        .build()
        .unwrap()
        .bind()
        .await
        .unwrap();
    let base = format!("http://{}", bound.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Running {
        base,
        stop: Some(stop),
        model,
    }
}

fn call_then_answer() -> Vec<Script> {
    vec![
        Script::calls([("call_1", "guarded", json!({"what": "the thing"}))]),
        Script::reply("finished"),
    ]
}

/// Every event of a turn, the last being its end.
async fn collect(stream: &mut agentgate::remote::RemoteStream) -> (Vec<RemoteEvent>, RemoteTurn) {
    let mut events = Vec::new();
    loop {
        let item = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .expect("an event within 30 s")
            .expect("the stream ends with Finished");
        match item.unwrap() {
            RemoteEvent::Finished(turn) => return (events, turn),
            event => events.push(event),
        }
    }
}

async fn pending_asks(base: &str) -> Vec<Value> {
    let asks: Value = reqwest::get(format!("{base}/permission"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    asks.as_array().unwrap().clone()
}

/// Answers with a fixed reply and records what it was asked.
struct Recording {
    reply: Reply,
    asked: Mutex<Vec<PermissionRequest>>,
}

#[agentgate::async_trait]
impl Approver for Recording {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.asked.lock().unwrap().push(request.clone());
        self.reply.clone()
    }
}

fn recording(reply: Reply) -> Arc<Recording> {
    Arc::new(Recording {
        reply,
        asked: Mutex::new(Vec::new()),
    })
}

#[tokio::test]
async fn a_prompt_streams_its_text_to_the_end() {
    let server = start(
        "text",
        vec![
            Script::new()
                .text_chunks(&["Hel", "lo ", "there"])
                .finish(agentgate::FinishReason::Stop),
        ],
        Auth::None,
    )
    .await;
    let agent = RemoteAgent::connect(&server.base).await.unwrap();
    let session = agent.new_session().await.unwrap();
    let mut stream = session.stream("say hello").await.unwrap();
    let (events, turn) = collect(&mut stream).await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RemoteEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() >= 2, "streamed in pieces: {deltas:?}");
    assert_eq!(deltas.concat(), "Hello there");
    assert_eq!(turn.stop, RemoteStop::Done);
    assert_eq!(turn.text, "Hello there");
    assert_eq!(turn.session_id, session.id());
    let message = turn.message.expect("the assistant message");
    assert_eq!(message["role"], "assistant");
    // The stream ends after Finished; a resumed session is the same one.
    assert!(stream.next().await.is_none());
    let again = agent.session(session.id()).await.unwrap();
    assert_eq!(again.id(), session.id());
}

#[tokio::test]
async fn an_ask_allowed_once_by_the_local_approver_runs_the_tool() {
    let server = start("once", call_then_answer(), Auth::None).await;
    let approver = recording(Reply::Once);
    let agent = RemoteAgent::builder(&server.base)
        .approver(approver.clone())
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (events, turn) = collect(&mut session.stream("do it").await.unwrap()).await;
    assert_eq!(turn.stop, RemoteStop::Done);
    assert_eq!(turn.text, "finished");
    let asked = approver.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].permission, "guarded");
    assert_eq!(asked[0].patterns, vec!["the thing"]);
    assert_eq!(asked[0].session_id, session.id());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RemoteEvent::Asked(r) if r.id == asked[0].id))
    );
    assert!(events.iter().any(
        |e| matches!(e, RemoteEvent::Replied { request_id, reply: Reply::Once } if *request_id == asked[0].id)
    ));
    let completed = events
        .iter()
        .find_map(|e| match e {
            RemoteEvent::Tool(call) if call.status == "completed" => Some(call.clone()),
            _ => None,
        })
        .expect("the tool completed");
    assert_eq!(completed.tool, "guarded");
    assert_eq!(completed.output.as_deref(), Some("did the thing"));
    assert_eq!(completed.input["what"], "the thing");
}

#[tokio::test]
async fn a_rejection_with_feedback_reaches_the_model() {
    let server = start("feedback", call_then_answer(), Auth::None).await;
    let agent = RemoteAgent::builder(&server.base)
        .approver(recording(Reply::correct("do the other thing")))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (events, turn) = collect(&mut session.stream("do it").await.unwrap()).await;
    // The model read the feedback and answered: the turn goes on.
    assert_eq!(turn.stop, RemoteStop::Done);
    assert_eq!(turn.text, "finished");
    let failed = events
        .iter()
        .find_map(|e| match e {
            RemoteEvent::Tool(call) if call.status == "error" => Some(call.clone()),
            _ => None,
        })
        .expect("the tool call failed");
    assert!(failed.error.unwrap().contains("do the other thing"));
    let requests = server.model.requests();
    assert_eq!(requests.len(), 2);
    assert!(format!("{:?}", requests[1]).contains("do the other thing"));
}

#[tokio::test]
async fn a_plain_rejection_stops_the_turn() {
    let server = start("reject", call_then_answer(), Auth::None).await;
    let agent = RemoteAgent::builder(&server.base)
        .approver(recording(Reply::reject()))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (_, turn) = collect(&mut session.stream("do it").await.unwrap()).await;
    assert_eq!(turn.stop, RemoteStop::Rejected);
    assert_eq!(
        server.model.requests().len(),
        1,
        "the model was not called again"
    );
}

/// Answers its own session's ask only once another session's ask is
/// pending on the server, so that ask's event reaches the client first.
struct StartsAnother {
    base: String,
    other: String,
    asked: Mutex<Vec<PermissionRequest>>,
}

#[agentgate::async_trait]
impl Approver for StartsAnother {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.asked.lock().unwrap().push(request.clone());
        let accepted = reqwest::Client::new()
            .post(format!("{}/session/{}/prompt_async", self.base, self.other))
            .json(&json!({"parts": [{"type": "text", "text": "other"}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(accepted.status(), 204);
        for _ in 0..300 {
            if pending_asks(&self.base)
                .await
                .iter()
                .any(|a| a["sessionID"] == self.other.as_str())
            {
                return Reply::Once;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the other session never asked");
    }
}

#[tokio::test]
async fn an_ask_of_another_session_is_not_answered() {
    let server = start(
        "other",
        vec![
            Script::calls([("call_1", "guarded", json!({"what": "mine"}))]),
            Script::calls([("call_2", "guarded", json!({"what": "theirs"}))]),
            Script::reply("finished"),
        ],
        Auth::None,
    )
    .await;
    let bystander = RemoteAgent::connect(&server.base).await.unwrap();
    let other = bystander.new_session().await.unwrap();
    let approver = Arc::new(StartsAnother {
        base: server.base.clone(),
        other: other.id().to_string(),
        asked: Mutex::new(Vec::new()),
    });
    let agent = RemoteAgent::builder(&server.base)
        .approver(approver.clone())
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (events, turn) = collect(&mut session.stream("do it").await.unwrap()).await;
    assert_eq!(turn.stop, RemoteStop::Done);
    let asked = approver.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "only its own session's ask: {asked:?}");
    assert_eq!(asked[0].patterns, vec!["mine"]);
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, RemoteEvent::Asked(r) if r.session_id != session.id()))
    );
    let pending = pending_asks(&server.base).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["sessionID"], other.id());
    assert_eq!(pending[0]["patterns"], json!(["theirs"]));
    other.abort().await.unwrap();
}

/// Never answers (a person who walked away).
struct Silent;

#[agentgate::async_trait]
impl Approver for Silent {
    async fn approve(&self, _request: &PermissionRequest) -> Reply {
        futures::future::pending().await
    }
}

async fn until_asked(stream: &mut agentgate::remote::RemoteStream) -> PermissionRequest {
    loop {
        let item = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let RemoteEvent::Asked(request) = item {
            return request;
        }
    }
}

#[tokio::test]
async fn cancelling_aborts_the_turn_on_the_server() {
    let server = start("cancel", call_then_answer(), Auth::None).await;
    let agent = RemoteAgent::builder(&server.base)
        .approver(Arc::new(Silent))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let mut stream = session.stream("do it").await.unwrap();
    until_asked(&mut stream).await;
    assert_eq!(pending_asks(&server.base).await.len(), 1);
    stream.cancel();
    let (_, turn) = collect(&mut stream).await;
    assert_eq!(turn.stop, RemoteStop::Cancelled);
    assert!(
        pending_asks(&server.base).await.is_empty(),
        "the abort rejected the ask"
    );
    assert_eq!(server.model.requests().len(), 1);
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_turn_on_the_server() {
    let server = start("drop", call_then_answer(), Auth::None).await;
    let agent = RemoteAgent::builder(&server.base)
        .approver(Arc::new(Silent))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let mut stream = session.stream("do it").await.unwrap();
    until_asked(&mut stream).await;
    drop(stream);
    let mut cleared = false;
    for _ in 0..300 {
        if pending_asks(&server.base).await.is_empty() {
            cleared = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(cleared, "the dropped turn's ask was rejected by the abort");
}

#[tokio::test]
async fn a_password_server_names_the_variable_to_set() {
    let server = start("auth", vec![Script::reply("ok")], Auth::password("s3cret")).await;
    let error = RemoteAgent::connect(&server.base).await.unwrap_err();
    assert!(matches!(error, RemoteError::Unauthorized { .. }));
    let message = error.to_string();
    assert!(message.contains("OPENCODE_SERVER_PASSWORD"), "{message}");
    assert!(message.contains(&server.base), "{message}");
    let wrong = RemoteAgent::builder(&server.base)
        .password("nope")
        .connect()
        .await;
    assert!(matches!(wrong, Err(RemoteError::Unauthorized { .. })));
    let agent = RemoteAgent::builder(&server.base)
        .credentials_from(|name| (name == "AGENT_SERVER_PASSWORD").then(|| "s3cret".to_string()))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (_, turn) = collect(&mut session.stream("hi").await.unwrap()).await;
    assert_eq!(turn.text, "ok");
}

#[tokio::test]
async fn nothing_listening_asks_whether_the_server_runs() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let error = RemoteAgent::connect(&url).await.unwrap_err();
    assert!(matches!(error, RemoteError::Unreachable { .. }));
    assert!(
        error
            .to_string()
            .contains(&format!("is `agent serve` running at {url}?")),
        "{error}"
    );
    assert!(matches!(
        RemoteAgent::connect("ftp://example").await,
        Err(RemoteError::InvalidUrl { .. })
    ));
    let server = start("ids", vec![], Auth::None).await;
    let agent = RemoteAgent::connect(&server.base).await.unwrap();
    assert!(matches!(
        agent.session("../global").await,
        Err(RemoteError::InvalidId { .. })
    ));
    assert!(matches!(
        agent.session("ses_missing").await,
        Err(RemoteError::Status { status: 404, .. })
    ));
}

/// How a fake server's event stream behaves after its first events.
#[derive(Clone, Copy)]
enum Fake {
    /// Goes silent, the connection open.
    Silent,
    /// Closes the connection mid-turn.
    HangUp,
    /// Sends an event that never ends.
    Endless,
}

/// A minimal HTTP server speaking just enough of the API for one turn.
async fn fake_server(mode: Fake) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split(' ').nth(1).unwrap_or("").to_string();
                let json_reply = |body: &str| {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                if path == "/event" {
                    let _ = socket
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
                        .await;
                    let _ = socket
                        .write_all(b"data: {\"type\":\"server.connected\",\"properties\":{}}\n\ndata: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"ses_fake\",\"status\":{\"type\":\"busy\"}}}\n\ndata: not json at all\n\n")
                        .await;
                    match mode {
                        Fake::Silent => futures::future::pending::<()>().await,
                        Fake::HangUp => {}
                        Fake::Endless => {
                            let _ = socket.write_all(b"data: ").await;
                            for _ in 0..64 {
                                if socket.write_all(&[b'x'; 1024]).await.is_err() {
                                    return;
                                }
                            }
                            futures::future::pending::<()>().await
                        }
                    }
                } else if path.ends_with("/prompt_async") {
                    let _ = socket
                        .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                        .await;
                } else if path == "/session" {
                    let _ = socket
                        .write_all(json_reply("{\"id\":\"ses_fake\"}").as_bytes())
                        .await;
                } else {
                    let _ = socket.write_all(json_reply("true").as_bytes()).await;
                }
            });
        }
    });
    base
}

async fn fake_turn(mode: Fake) -> RemoteError {
    let base = fake_server(mode).await;
    let agent = RemoteAgent::builder(&base)
        .idle_timeout(Duration::from_millis(300))
        .max_event_size(16 * 1024)
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let mut stream = session.stream("hi").await.unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .expect("the stream ends by itself")
        {
            Some(Err(error)) => {
                assert!(stream.next().await.is_none(), "the error is the last item");
                return error;
            }
            Some(Ok(RemoteEvent::Finished(turn))) => {
                panic!("a turn that never ended finished: {turn:?}")
            }
            Some(Ok(_)) => {}
            None => panic!("the stream ended without saying why"),
        }
    }
}

#[tokio::test]
async fn a_silent_server_ends_the_turn_with_an_idle_error() {
    let error = fake_turn(Fake::Silent).await;
    assert!(matches!(error, RemoteError::Idle { .. }), "{error}");
    assert!(error.to_string().contains("agent serve"));
}

#[tokio::test]
async fn a_server_that_hangs_up_mid_turn_is_an_error_not_a_hang() {
    let error = fake_turn(Fake::HangUp).await;
    assert!(matches!(error, RemoteError::Disconnected { .. }), "{error}");
}

#[tokio::test]
async fn an_endless_event_is_refused() {
    let error = fake_turn(Fake::Endless).await;
    assert!(matches!(error, RemoteError::Protocol { .. }), "{error}");
}

#[tokio::test]
async fn allow_all_answers_every_ask_once() {
    let server = start("allowall", call_then_answer(), Auth::None).await;
    let agent = RemoteAgent::builder(&server.base)
        .approver(Arc::new(AllowAll))
        .connect()
        .await
        .unwrap();
    let session = agent.new_session().await.unwrap();
    let (_, turn) = collect(&mut session.stream("do it").await.unwrap()).await;
    assert_eq!(turn.stop, RemoteStop::Done);
    assert!(pending_asks(&server.base).await.is_empty());
}

#[tokio::test]
async fn sessions_messages_undo_and_redo_over_the_wire() {
    use agentgate::remote::RemotePart;
    let server = start(
        "history",
        vec![
            Script::reply("first answer"),
            Script::reply("second answer"),
        ],
        Auth::None,
    )
    .await;
    let agent = RemoteAgent::connect(&server.base).await.unwrap();
    let session = agent.new_session().await.unwrap();
    for prompt in ["one", "two"] {
        let mut stream = session.stream(prompt).await.unwrap();
        collect(&mut stream).await;
    }
    let listed = agent.sessions().await.unwrap();
    assert!(listed.iter().any(|s| s.id() == session.id()));
    let messages = session.messages().await.unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert!(matches!(&messages[0].parts[..], [RemotePart::Text { text, .. }] if text == "one"));
    assert!(
        messages[3]
            .parts
            .iter()
            .any(|p| matches!(p, RemotePart::Text { text, .. } if text == "second answer"))
    );
    // /undo twice takes both prompts back; /redo puts them back one by one.
    assert_eq!(session.revert_point().await.unwrap(), None);
    let undone = session.undo(false).await.unwrap().unwrap();
    assert_eq!(undone.id, messages[2].id);
    assert_eq!(
        session.revert_point().await.unwrap(),
        Some(messages[2].id.clone())
    );
    session.undo(false).await.unwrap();
    assert_eq!(
        session.revert_point().await.unwrap(),
        Some(messages[0].id.clone())
    );
    assert!(
        session.undo(false).await.unwrap().is_none(),
        "nothing left to undo"
    );
    assert!(session.redo(false).await.unwrap());
    assert_eq!(
        session.revert_point().await.unwrap(),
        Some(messages[2].id.clone())
    );
    assert!(session.redo(false).await.unwrap());
    assert_eq!(session.revert_point().await.unwrap(), None);
    assert!(!session.redo(false).await.unwrap(), "nothing left to redo");
}
