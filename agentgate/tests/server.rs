//! `agentgate::server` on a loopback port, driven over HTTP: the guard
//! (auth, origins), the 404 and body-limit answers, and a session whose
//! turn raises an ask that a reply, a relayed reply or an abort resolves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentgate::permission::{Action, Rule, Ruleset};
use agentgate::server::{AgentFactory, AgentSetup, Auth, FactoryError, Server, ServerError};
use agentgate::{
    CodingAgent, ConfigLoader, ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool,
};
use agentgate_core::testing::{Script, ScriptedModel};
use futures::StreamExt;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GuardedArgs {
    /// What to do.
    what: String,
    /// What an "always" answer approves (none by default).
    #[serde(default)]
    always: Option<String>,
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
            args.always.clone().into_iter().collect::<Vec<String>>(),
            json!({}),
        )
        .await?;
        Ok(ToolOutput::text(format!("did {}", args.what)))
    }
}

/// Each session on the scripted model, with the one tool and a rule that
/// asks for it (and, with `bash`, the bash tool under those rules too);
/// configuration isolated from the machine's.
struct Scripted {
    model: Arc<ScriptedModel>,
    home: PathBuf,
    bash: Option<Ruleset>,
    /// How many agents were built.
    builds: Arc<std::sync::atomic::AtomicUsize>,
}

#[agentgate::async_trait]
impl AgentFactory for Scripted {
    // One engine for every session: the server's template path (tests/remote.rs
    // keeps the default, a build per session).
    fn shares_engine(&self) -> bool {
        true
    }

    async fn build(&self, setup: AgentSetup) -> Result<CodingAgent, FactoryError> {
        self.builds
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut tools = ToolRegistry::new();
        tools.register(Guarded);
        let mut rules = vec![Rule::new("guarded", "*", Action::Ask)];
        if let Some(bash) = &self.bash {
            tools.register(agentgate::tools::BashTool::new());
            rules.extend(bash.iter().cloned());
        }
        let loader = ConfigLoader::new(setup.directory())
            .home(&self.home)
            .global_dir(self.home.join("global"))
            .env(|_| None);
        let builder = CodingAgent::builder(setup.directory())
            .config(loader)
            .model(self.model.clone())
            .tools(tools)
            .without_mcp()
            .session_permission(Ruleset::from(rules));
        Ok(setup.apply(builder).build().await?)
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentgate-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    dir
}

struct Running {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    model: Arc<ScriptedModel>,
    builds: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(
    name: &str,
    scripts: Vec<Script>,
    configure: impl FnOnce(agentgate::server::ServerBuilder) -> agentgate::server::ServerBuilder,
) -> Running {
    start_with_bash(name, scripts, None, configure).await
}

/// [`start`], the sessions with the bash tool under `bash` rules.
async fn start_with_bash(
    name: &str,
    scripts: Vec<Script>,
    bash: Option<Ruleset>,
    configure: impl FnOnce(agentgate::server::ServerBuilder) -> agentgate::server::ServerBuilder,
) -> Running {
    let dir = scratch(name);
    let model = Arc::new(ScriptedModel::new(scripts));
    let builds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let factory = Scripted {
        model: model.clone(),
        home: dir.join("home"),
        bash,
        builds: Arc::clone(&builds),
    };
    let builder =
        Server::builder(Arc::new(factory), &dir).address(SocketAddr::from(([127, 0, 0, 1], 0)));
    let bound = configure(builder).build().unwrap().bind().await.unwrap();
    let base = format!("http://{}", bound.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Running {
        base,
        stop: Some(stop),
        model,
        builds,
    }
}

/// Reads server-sent events as JSON values.
struct Events {
    stream: futures::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: String,
}

impl Events {
    async fn open(base: &str) -> Events {
        let response = reqwest::get(format!("{base}/event")).await.unwrap();
        assert_eq!(response.status(), 200);
        Events {
            stream: response
                .bytes_stream()
                .map(|r| r.map(|b| b.to_vec()))
                .boxed(),
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: String = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.stream.next())
                .await
                .expect("an event within 30 s")
                .expect("the event stream is open")
                .unwrap();
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next event of type `kind`.
    async fn until(&mut self, kind: &str) -> Value {
        loop {
            let event = self.next().await;
            if event["type"] == kind {
                return event;
            }
        }
    }
}

fn call_then_answer() -> Vec<Script> {
    vec![
        Script::calls([("call_1", "guarded", json!({"what": "the thing"}))]),
        Script::reply("finished"),
    ]
}

async fn post(url: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn new_session(base: &str) -> String {
    let session: Value = post(&format!("{base}/session"), json!({"title": "t"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(session["title"], "t");
    session["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_non_loopback_address_needs_a_password() {
    let dir = scratch("unprotected");
    let factory = Scripted {
        model: Arc::new(ScriptedModel::new([])),
        home: dir.join("home"),
        bash: None,
        builds: Arc::default(),
    };
    let built = Server::builder(Arc::new(factory), &dir)
        .address(SocketAddr::from(([0, 0, 0, 0], 0)))
        .build();
    assert!(matches!(built, Err(ServerError::Unprotected(_))));
}

#[tokio::test]
async fn basic_auth_is_required_when_configured() {
    let server = start("auth", vec![], |b| b.auth(Auth::password("pw"))).await;
    let client = reqwest::Client::new();
    let url = format!("{}/global/health", server.base);
    let refused = client.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().contains_key("www-authenticate"));
    let wrong = client
        .get(&url)
        .basic_auth("opencode", Some("nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let ok = client
        .get(&url)
        .basic_auth("opencode", Some("pw"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.json::<Value>().await.unwrap()["healthy"], true);
}

#[tokio::test]
async fn unknown_routes_answer_a_json_404_naming_the_routes() {
    let server = start("notfound", vec![], |b| b).await;
    let response = reqwest::get(format!("{}/tui/open-help", server.base))
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["name"], "NotFoundError");
    let routes = body["data"]["routes"].as_array().unwrap();
    assert!(routes.contains(&json!("POST /permission/{requestID}/reply")));
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let server = start("limit", vec![], |b| b.body_limit(1024)).await;
    let id = new_session(&server.base).await;
    let big = "x".repeat(4096);
    let response = post(
        &format!("{}/session/{id}/message", server.base),
        json!({"parts": [{"type": "text", "text": big}]}),
    )
    .await;
    assert_eq!(response.status(), 413);
    assert_eq!(
        response.json::<Value>().await.unwrap()["name"],
        "BadRequestError"
    );
    assert_eq!(server.model.remaining(), 0, "no turn ran");
}

#[tokio::test]
async fn cross_site_requests_are_refused_unless_their_origin_is_configured() {
    let closed = start("cors-closed", vec![], |b| b).await;
    let client = reqwest::Client::new();
    let refused = client
        .get(format!("{}/session", closed.base))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert!(
        !refused
            .headers()
            .contains_key("access-control-allow-origin")
    );

    let open = start("cors-open", vec![], |b| b.cors("http://app.example")).await;
    let allowed = client
        .get(format!("{}/session", open.base))
        .header("origin", "http://app.example")
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "http://app.example"
    );
    let other = client
        .get(format!("{}/session", open.base))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 403);
}

#[tokio::test]
async fn a_foreign_host_name_is_refused_without_a_password() {
    let server = start("rebinding", vec![], |b| b).await;
    let response = reqwest::Client::new()
        .get(format!("{}/session", server.base))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn a_reply_for_an_unknown_request_is_a_404() {
    let server = start("unknown-reply", vec![], |b| b).await;
    let response = post(
        &format!("{}/permission/per_nope/reply", server.base),
        json!({"reply": "once"}),
    )
    .await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.json::<Value>().await.unwrap()["name"],
        "NotFoundError"
    );
    let bad = post(
        &format!("{}/permission/per_nope/reply", server.base),
        json!({"reply": "maybe"}),
    )
    .await;
    assert_eq!(bad.status(), 422);
}

#[tokio::test]
async fn an_ask_answered_once_lets_the_tool_run_and_the_turn_answers() {
    let server = start("once", call_then_answer(), |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    assert_eq!(events.next().await["type"], "server.connected");
    let url = format!("{}/session/{id}/message", server.base);
    let turn = tokio::spawn(async move {
        post(&url, json!({"parts": [{"type": "text", "text": "go"}]})).await
    });
    let asked = events.until("permission.asked").await;
    let request = asked["properties"]["id"].as_str().unwrap().to_string();
    assert_eq!(asked["properties"]["sessionID"], id.as_str());
    assert_eq!(asked["properties"]["patterns"], json!(["the thing"]));
    let pending: Value = reqwest::get(format!("{}/permission", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(pending[0]["id"], request.as_str());
    let replied = post(
        &format!("{}/permission/{request}/reply", server.base),
        json!({"reply": "once"}),
    )
    .await;
    assert_eq!(replied.status(), 200);
    assert_eq!(
        events.until("permission.replied").await["properties"]["reply"],
        "once"
    );
    let answer: Value = turn.await.unwrap().json().await.unwrap();
    assert_eq!(answer["info"]["role"], "assistant");
    assert_eq!(
        answer["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"] == "text")
            .unwrap()["text"],
        "finished"
    );
    events.until("session.idle").await;
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tool = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(tool["state"]["status"], "completed");
    assert_eq!(tool["state"]["output"], "did the thing");
    let pending: Value = reqwest::get(format!("{}/permission", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(pending, json!([]), "the answered ask is withdrawn");
}

#[tokio::test]
async fn aborting_a_session_rejects_the_ask_it_waits_on() {
    let server = start("abort", call_then_answer(), |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    let accepted = post(
        &format!("{}/session/{id}/prompt_async", server.base),
        json!({"parts": [{"type": "text", "text": "go"}]}),
    )
    .await;
    assert_eq!(accepted.status(), 204);
    let asked = events.until("permission.asked").await;
    let request = asked["properties"]["id"].as_str().unwrap().to_string();
    let aborted = post(&format!("{}/session/{id}/abort", server.base), json!({})).await;
    assert_eq!(aborted.status(), 200);
    let replied = events.until("permission.replied").await;
    assert_eq!(replied["properties"]["requestID"], request.as_str());
    assert_eq!(replied["properties"]["reply"], "reject");
    events.until("session.idle").await;
    let late = post(
        &format!("{}/permission/{request}/reply", server.base),
        json!({"reply": "once"}),
    )
    .await;
    assert_eq!(late.status(), 404, "the rejected ask is no longer pending");
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tool = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(tool["state"]["status"], "error");
}

#[tokio::test]
async fn a_reply_given_to_another_process_reaches_the_ask_through_the_relay() {
    let relay: Arc<dyn agentgate_store::AskRelay> = Arc::new(agentgate_store::LocalRelay::new());
    let owner = start("relay-owner", call_then_answer(), {
        let relay = relay.clone();
        |b| b.relay(relay)
    })
    .await;
    let other = start("relay-other", vec![], {
        let relay = relay.clone();
        |b| b.relay(relay)
    })
    .await;
    let id = new_session(&owner.base).await;
    let mut events = Events::open(&owner.base).await;
    let url = format!("{}/session/{id}/message", owner.base);
    let turn = tokio::spawn(async move {
        post(&url, json!({"parts": [{"type": "text", "text": "go"}]})).await
    });
    let request = events.until("permission.asked").await["properties"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The other server lists it and takes the reply.
    let listed: Value = reqwest::get(format!("{}/permission", other.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], request.as_str());
    let replied = post(
        &format!("{}/permission/{request}/reply", other.base),
        json!({"reply": "reject", "message": "not that"}),
    )
    .await;
    assert_eq!(replied.status(), 200);
    assert_eq!(
        events.until("permission.replied").await["properties"]["reply"],
        "reject"
    );
    let answer = turn.await.unwrap();
    assert_eq!(answer.status(), 200);
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", owner.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tool = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(tool["state"]["status"], "error");
    assert!(
        tool["state"]["error"]
            .as_str()
            .unwrap()
            .contains("not that"),
        "the feedback reaches the model: {tool}"
    );
}

#[tokio::test]
async fn sessions_after_the_first_open_on_its_engine_and_are_prompted_in_turn() {
    let scripts = (0..30)
        .map(|i| Script::reply(&format!("answer {i}")))
        .collect();
    let server = start("shared-engine", scripts, |b| b).await;
    let mut ids = Vec::new();
    for i in 0..30 {
        let id = new_session(&server.base).await;
        let answer: Value = post(
            &format!("{}/session/{id}/message", server.base),
            json!({"parts": [{"type": "text", "text": format!("question {i}")}]}),
        )
        .await
        .json()
        .await
        .unwrap();
        let text = answer["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"] == "text")
            .map(|p| p["text"].clone());
        assert_eq!(text, Some(json!(format!("answer {i}"))), "{answer}");
        ids.push(id);
    }
    assert_eq!(
        server.builds.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one agent built; the other sessions opened on its engine"
    );
    // Reopened later (nothing holds an idle session), each still has its
    // own conversation.
    for (i, id) in ids.iter().enumerate() {
        let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let messages = messages.as_array().unwrap();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0]["parts"]
                .to_string()
                .contains(&format!("\"question {i}\"")),
            "{messages:?}"
        );
    }
    // An unknown agent is the client's mistake, on the shared engine too.
    let refused = post(
        &format!("{}/session", server.base),
        json!({"agent": "nope"}),
    )
    .await;
    assert_eq!(refused.status(), 400);
}

#[tokio::test]
async fn a_deleted_session_is_gone_from_the_store() {
    let server = start("delete", vec![], |b| b).await;
    let id = new_session(&server.base).await;
    let client = reqwest::Client::new();
    let listed: Value = reqwest::get(format!("{}/session", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    let deleted = client
        .delete(format!("{}/session/{id}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let gone = reqwest::get(format!("{}/session/{id}", server.base))
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let again = client
        .delete(format!("{}/session/{id}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
}

#[tokio::test]
async fn the_approval_page_is_served_with_a_policy_that_runs_only_its_own_script() {
    let server = start("page", vec![], |b| b).await;
    let page = reqwest::get(format!("{}/", server.base)).await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"<script src="/page/app.js" defer></script>"#));
    // No inline script: the policy would block it, so the page has none.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    let script = reqwest::get(format!("{}/page/app.js", server.base))
        .await
        .unwrap();
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let script = script.text().await.unwrap();
    // Hostile text (transcripts, diffs, commands) is only ever set as text.
    assert!(
        !script.contains("innerHTML"),
        "the page must not parse text as HTML"
    );
    assert!(!script.contains("insertAdjacentHTML"));
    let not_found = reqwest::get(format!("{}/page/other.js", server.base))
        .await
        .unwrap();
    assert_eq!(not_found.status(), 404);
    let body: Value = not_found.json().await.unwrap();
    let routes = body["data"]["routes"].as_array().unwrap();
    assert!(routes.contains(&json!("GET / (the approval page)")));
}

#[tokio::test]
async fn an_async_prompt_refused_before_its_turn_still_ends_for_event_clients() {
    let server = start("refused", vec![Script::reply("unused")], |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    assert_eq!(events.next().await["type"], "server.connected");
    // Accepted (204), then refused when it runs: no such agent.
    let accepted = post(
        &format!("{}/session/{id}/prompt_async", server.base),
        json!({"parts": [{"type": "text", "text": "go"}], "agent": "no-such-agent"}),
    )
    .await;
    assert_eq!(accepted.status(), 204);
    let error = events.until("session.error").await;
    assert_eq!(error["properties"]["sessionID"], id.as_str());
    let message = error["properties"]["error"]["data"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("no-such-agent"), "{message}");
    // …and the session goes idle, so a client waiting on it ends.
    let idle = events.until("session.idle").await;
    assert_eq!(idle["properties"]["sessionID"], id.as_str());
}

#[tokio::test]
async fn sessions_are_renamed_and_forked_with_times_and_the_answering_model() {
    let server = start(
        "rename-fork",
        vec![Script::reply("one"), Script::reply("two")],
        |b| b,
    )
    .await;
    let id = new_session(&server.base).await;
    let client = reqwest::Client::new();
    for text in ["first", "second"] {
        let answer = post(
            &format!("{}/session/{id}/message", server.base),
            json!({"parts": [{"type": "text", "text": text}]}),
        )
        .await;
        assert_eq!(answer.status(), 200);
    }
    let session: Value = reqwest::get(format!("{}/session/{id}", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let created = session["time"]["created"].as_u64().unwrap();
    let updated = session["time"]["updated"].as_u64().unwrap();
    assert!(
        created > 1_700_000_000_000 && updated >= created,
        "{session}"
    );

    // Assistant messages name the model that answered.
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 4);
    let info = agentgate_core::LanguageModel::info(server.model.as_ref());
    for message in messages.iter().filter(|m| m["info"]["role"] == "assistant") {
        assert_eq!(message["info"]["providerID"], info.provider.as_str());
        assert_eq!(message["info"]["modelID"], info.id.as_str());
    }

    // PATCH sets the title.
    let renamed: Value = client
        .patch(format!("{}/session/{id}", server.base))
        .json(&json!({"title": "Renamed"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(renamed["title"], "Renamed");
    assert!(renamed["time"]["updated"].as_u64().unwrap() >= updated);
    let missing = client
        .patch(format!("{}/session/ses_missing", server.base))
        .json(&json!({"title": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // Fork before the second user message: the first exchange.
    let second = messages[2]["info"]["id"].as_str().unwrap();
    let fork: Value = post(
        &format!("{}/session/{id}/fork", server.base),
        json!({"messageID": second}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(fork["title"], "Renamed (fork #1)");
    let fork_id = fork["id"].as_str().unwrap();
    assert_ne!(fork_id, id);
    let copied: Value = reqwest::get(format!("{}/session/{fork_id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(copied.as_array().unwrap().len(), 2);
    assert_eq!(copied[0]["info"]["sessionID"], fork_id);
    let whole: Value = post(&format!("{}/session/{id}/fork", server.base), json!({}))
        .await
        .json()
        .await
        .unwrap();
    let whole_id = whole["id"].as_str().unwrap();
    let all: Value = reqwest::get(format!("{}/session/{whole_id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 4);
    let unknown = post(
        &format!("{}/session/{id}/fork", server.base),
        json!({"messageID": "msg_nope"}),
    )
    .await;
    assert_eq!(unknown.status(), 404);
}

/// The page and every API client see each "always" answer named by the
/// rules it stores and said in words; `always_exact` stores only the asked
/// pattern, so a wider command asks again.
#[tokio::test]
async fn always_choices_name_what_they_store_and_always_exact_stores_only_the_ask() {
    let call = |id: &str, what: &str| {
        Script::calls([(id, "guarded", json!({"what": what, "always": "rm *"}))])
    };
    let scripts = vec![
        call("call_1", "rm -f src/a.txt"),
        Script::reply("removed"),
        call("call_2", "rm -rf src"),
        Script::reply("stopped"),
    ];
    let server = start("always-exact", scripts, |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    let url = format!("{}/session/{id}/message", server.base);
    let prompt = |url: String| {
        tokio::spawn(
            async move { post(&url, json!({"parts": [{"type": "text", "text": "go"}]})).await },
        )
    };
    let turn = prompt(url.clone());
    let request = events.until("permission.asked").await["properties"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let pending: Value = reqwest::get(format!("{}/permission", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let choices = &pending[0]["alwaysChoices"];
    assert_eq!(choices[0]["reply"], "always");
    assert_eq!(choices[0]["label"], r#"Always allow guarded "rm *""#);
    assert_eq!(
        choices[0]["rules"],
        json!([{"permission": "guarded", "pattern": "rm *", "action": "allow"}])
    );
    assert!(
        choices[0]["meaning"]
            .as_str()
            .unwrap()
            .contains("in every session of this project"),
        "{choices}"
    );
    assert_eq!(choices[1]["reply"], "always_exact");
    assert_eq!(
        choices[1]["label"],
        r#"Always allow guarded exactly "rm -f src/a.txt""#
    );
    let replied = post(
        &format!("{}/permission/{request}/reply", server.base),
        json!({"reply": "always_exact"}),
    )
    .await;
    assert_eq!(replied.status(), 200);
    assert_eq!(turn.await.unwrap().status(), 200);
    events.until("session.idle").await;

    // The wider command asks again.
    let turn = prompt(url);
    let asked = events.until("permission.asked").await;
    assert_eq!(asked["properties"]["patterns"], json!(["rm -rf src"]));
    let request = asked["properties"]["id"].as_str().unwrap();
    post(
        &format!("{}/permission/{request}/reply", server.base),
        json!({"reply": "reject"}),
    )
    .await;
    let _ = turn.await.unwrap();
}

/// A server whose project has custom command `review` (a markdown file)
/// and `probe` (a shell line, which these sessions have no `bash` tool
/// to run).
async fn start_with_commands(name: &str, scripts: Vec<Script>) -> (Running, PathBuf) {
    let dir = scratch(name);
    let commands = dir.join(".opencode/command");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    std::fs::write(commands.join("probe.md"), "Probe: !`echo hi`\n").unwrap();
    std::fs::write(
        commands.join("delegate.md"),
        "---\ndescription: Hand a look to a sub-agent\nagent: general\nsubtask: true\n---\nLook into $ARGUMENTS.\n",
    )
    .unwrap();
    let loader = ConfigLoader::new(&dir)
        .home(dir.join("home"))
        .global_dir(dir.join("home/global"))
        .env(|_| None);
    let workspace = agentgate::Workspace::with_loader(&dir, loader).unwrap();
    let model = Arc::new(ScriptedModel::new(scripts));
    let factory = Scripted {
        model: model.clone(),
        home: dir.join("home"),
        bash: None,
        builds: Arc::default(),
    };
    let builds = Arc::clone(&factory.builds);
    let bound = Server::builder(Arc::new(factory), &dir)
        .address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .commands(workspace.commands().clone())
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
    let running = Running {
        base,
        stop: Some(stop),
        model,
        builds,
    };
    (running, dir)
}

#[tokio::test]
async fn the_project_commands_are_listed_in_opencode_shape() {
    let (server, _dir) = start_with_commands("command-list", vec![]).await;
    let listed: Value = reqwest::get(format!("{}/command", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let review = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "review")
        .expect("review is listed");
    assert_eq!(review["description"], "Review a file");
    assert_eq!(review["template"], "Review $ARGUMENTS carefully.");
    assert_eq!(review["hints"], json!(["$ARGUMENTS"]));
    assert_eq!(review["source"], "command");
}

#[tokio::test]
async fn a_command_sends_the_model_its_expanded_template_and_answers_the_message() {
    let (server, _dir) =
        start_with_commands("command-run", vec![Script::reply("looks fine")]).await;
    let id = new_session(&server.base).await;
    let response = post(
        &format!("{}/session/{id}/command", server.base),
        json!({"command": "review", "arguments": "calc.py"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["info"]["role"], "assistant");
    let texts: Vec<&str> = answer["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert!(texts.contains(&"looks fine"), "{answer}");
    let requests = server.model.requests();
    let sent = serde_json::to_string(&requests.last().unwrap().messages).unwrap();
    assert!(sent.contains("Review calc.py carefully."), "{sent}");
    assert!(!sent.contains("$ARGUMENTS"), "{sent}");
}

#[tokio::test]
async fn an_unknown_command_is_a_404_and_a_shell_line_that_cannot_run_sends_nothing() {
    let (server, _dir) = start_with_commands("command-refused", vec![]).await;
    let id = new_session(&server.base).await;
    let unknown = post(
        &format!("{}/session/{id}/command", server.base),
        json!({"command": "nope", "arguments": ""}),
    )
    .await;
    assert_eq!(unknown.status(), 404);
    let body: Value = unknown.json().await.unwrap();
    assert!(
        body["data"]["message"].as_str().unwrap().contains("review"),
        "{body}"
    );
    let probe = post(
        &format!("{}/session/{id}/command", server.base),
        json!({"command": "probe", "arguments": ""}),
    )
    .await;
    assert_eq!(probe.status(), 400);
    let body: Value = probe.json().await.unwrap();
    assert!(
        body["data"]["message"]
            .as_str()
            .unwrap()
            .contains("echo hi"),
        "{body}"
    );
    assert!(server.model.requests().is_empty());
}

#[tokio::test]
async fn a_sub_agent_command_is_recorded_as_its_task_call_and_answers_it() {
    let (server, _dir) =
        start_with_commands("command-subtask", vec![Script::reply("found it")]).await;
    let id = new_session(&server.base).await;
    let response = post(
        &format!("{}/session/{id}/command", server.base),
        json!({"command": "delegate", "arguments": "calc.py"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["info"]["role"], "assistant");
    let task = answer["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool" && p["tool"] == "task")
        .cloned()
        .unwrap_or_else(|| panic!("no task part in {answer}"));
    assert_eq!(task["state"]["status"], "completed", "{task}");
    assert_eq!(task["state"]["input"]["subagent_type"], "general");
    assert!(
        task["state"]["output"]
            .as_str()
            .unwrap()
            .contains("found it"),
        "{task}"
    );
    // The sub-agent got the expanded template; the transcript holds the
    // user's subtask part, then the call.
    let sent = serde_json::to_string(&server.model.requests()[0].messages).unwrap();
    assert!(sent.contains("Look into calc.py."), "{sent}");
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            let role = m["info"]["role"].as_str().unwrap_or_default().to_string();
            m["parts"].as_array().unwrap().iter().map(move |p| {
                (
                    role.clone(),
                    p["type"].as_str().unwrap_or_default().to_string(),
                )
            })
        })
        .collect();
    assert!(
        kinds.contains(&("user".into(), "subtask".into()))
            && kinds.contains(&("assistant".into(), "tool".into())),
        "{kinds:?}"
    );
}

/// The `bash` tool part of an answer `{info, parts}`.
fn bash_part(answer: &Value) -> Value {
    answer["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool" && p["tool"] == "bash")
        .cloned()
        .unwrap_or_else(|| panic!("no bash part in {answer}"))
}

#[tokio::test]
async fn a_shell_command_runs_as_a_bash_call_recorded_and_published_without_the_model() {
    let allow = Ruleset::from(vec![Rule::new("bash", "*", Action::Allow)]);
    let server = start_with_bash("shell-run", vec![], Some(allow), |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    let response = post(
        &format!("{}/session/{id}/shell", server.base),
        json!({"agent": "build", "command": "echo shell-said-hi"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["info"]["role"], "assistant");
    let bash = bash_part(&answer);
    assert_eq!(bash["state"]["status"], "completed", "{bash}");
    assert!(
        bash["state"]["output"]
            .as_str()
            .unwrap()
            .contains("shell-said-hi"),
        "{bash}"
    );
    loop {
        let event = events.until("message.part.updated").await;
        if event["properties"]["part"]["tool"] == "bash"
            && event["properties"]["part"]["state"]["status"] == "completed"
        {
            break;
        }
    }
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["info"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert!(server.model.requests().is_empty());
}

#[tokio::test]
async fn a_shell_command_the_rules_deny_does_not_run() {
    let deny = Ruleset::from(vec![Rule::new("bash", "*", Action::Deny)]);
    let server = start_with_bash("shell-deny", vec![], Some(deny), |b| b).await;
    let id = new_session(&server.base).await;
    // `scratch` made the project here; the command touches a file in it.
    let marker = std::env::temp_dir()
        .join(format!(
            "agentgate-server-shell-deny-{}",
            std::process::id()
        ))
        .join("touched");
    let response = post(
        &format!("{}/session/{id}/shell", server.base),
        json!({"agent": "build", "command": "touch touched"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let bash = bash_part(&response.json().await.unwrap());
    assert_eq!(bash["state"]["status"], "error", "{bash}");
    assert!(
        bash["state"]["error"].as_str().unwrap().contains("deny"),
        "{bash}"
    );
    assert!(!marker.exists(), "the denied command ran");
    assert!(server.model.requests().is_empty());
}

#[tokio::test]
async fn a_shell_command_that_asks_waits_for_a_client_and_a_rejection_stops_it() {
    let ask = Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]);
    let server = start_with_bash("shell-ask", vec![], Some(ask), |b| b).await;
    let id = new_session(&server.base).await;
    let mut events = Events::open(&server.base).await;
    // `scratch` made the project here; the command touches a file in it.
    let marker = std::env::temp_dir()
        .join(format!("agentgate-server-shell-ask-{}", std::process::id()))
        .join("touched");
    let url = format!("{}/session/{id}/shell", server.base);
    let run = tokio::spawn(async move {
        post(&url, json!({"agent": "build", "command": "touch touched"})).await
    });
    let asked = events.until("permission.asked").await;
    assert_eq!(asked["properties"]["permission"], "bash");
    let request = asked["properties"]["id"].as_str().unwrap().to_string();
    let replied = post(
        &format!("{}/permission/{request}/reply", server.base),
        json!({"reply": "reject"}),
    )
    .await;
    assert_eq!(replied.status(), 200);
    let response = run.await.unwrap();
    assert_eq!(response.status(), 200);
    let bash = bash_part(&response.json().await.unwrap());
    assert_eq!(bash["state"]["status"], "error", "{bash}");
    assert!(!marker.exists(), "the rejected command ran");
    assert!(server.model.requests().is_empty());
}

#[tokio::test]
async fn summarize_compacts_the_older_turns_on_the_given_model() {
    let scripts = vec![
        Script::reply("one"),
        Script::reply("two"),
        Script::reply("three"),
        Script::reply("## Goal\nthe summary"),
    ];
    let server = start("summarize", scripts, |b| b).await;
    let id = new_session(&server.base).await;
    let url = format!("{}/session/{id}/summarize", server.base);
    let model = json!({"providerID": "scripted", "modelID": "scripted"});
    let early = post(&url, model.clone()).await;
    assert_eq!(early.status(), 400, "nothing to summarise yet");
    for text in ["first", "second", "third"] {
        let sent = post(
            &format!("{}/session/{id}/message", server.base),
            json!({"parts": [{"type": "text", "text": text}]}),
        )
        .await;
        assert_eq!(sent.status(), 200);
    }
    let mut events = Events::open(&server.base).await;
    let response = post(&url, model).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), json!(true));
    events.until("session.idle").await;
    let requests = server.model.requests();
    assert_eq!(requests.len(), 4);
    let sent = serde_json::to_string(&requests[3].messages).unwrap();
    assert!(
        sent.contains("first"),
        "the oldest turn is summarised: {sent}"
    );
    let messages: Value = reqwest::get(format!("{}/session/{id}/message", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let messages = messages.as_array().unwrap();
    let compaction = messages
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap().clone())
        .find(|p| p["type"] == "compaction")
        .expect("a compaction part");
    assert_eq!(compaction["auto"], false);
    let last = messages.last().unwrap();
    assert_eq!(last["info"]["role"], "assistant", "no continuation message");
    assert!(
        serde_json::to_string(last).unwrap().contains("the summary"),
        "{last}"
    );
}
