//! Fault injection: streams cut at every event
//! boundary, 429 storms, 5xx bursts, a hanging model, an approver that
//! never answers, a panicking tool and cancellation at random points.
//!
//! Every scenario ends with the same two checks: the stored transcript is
//! consistent (every tool call has a final state, and the next model input
//! answers every call with exactly one result) and no task is left behind
//! (tokio's `num_alive_tasks`, stable since tokio 1.39, is back to its
//! value before the engine was built). All time is tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentSpec, ApiError, ContentPart, Engine, FinishReason, Message, ModelRole, Part, Session,
    StopReason, StreamEvent, ToolContext, ToolError, ToolOutput, ToolState, TypedTool,
    transcript::to_model_messages,
};
use agentgate_permission::{
    Approver, AskRequest, PermissionGate, PermissionRequest, Reply, Ruleset,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------- harness

#[derive(Deserialize, JsonSchema)]
struct TextArgs {
    text: String,
}

/// Echoes its input after `delay`, counting executions.
#[derive(Clone, Default)]
struct Echo {
    delay: Duration,
    runs: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl TypedTool for Echo {
    type Args = TextArgs;
    fn id(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its input."
    }
    async fn run(&self, args: TextArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        Ok(ToolOutput::text(args.text))
    }
}

/// Panics when run.
#[derive(Clone, Default)]
struct Panics;

#[async_trait::async_trait]
impl TypedTool for Panics {
    type Args = TextArgs;
    fn id(&self) -> &str {
        "panics"
    }
    fn description(&self) -> &str {
        "Panics."
    }
    async fn run(&self, args: TextArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::task::yield_now().await;
        panic!("tool bug: {}", args.text);
    }
}

/// Asks `bash` for its command, with an optional ask timeout, then "runs" it.
#[derive(Clone, Default)]
struct Asks {
    timeout: Option<Duration>,
    ran: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl TypedTool for Asks {
    type Args = TextArgs;
    fn id(&self) -> &str {
        "asks"
    }
    fn description(&self) -> &str {
        "Asks before running."
    }
    async fn run(&self, args: TextArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match self.timeout {
            None => {
                ctx.ask(
                    "bash",
                    [args.text.as_str()],
                    [args.text.as_str()],
                    json!({}),
                )
                .await?
            }
            Some(timeout) => {
                let request =
                    AskRequest::new(ctx.session_id.as_str(), "bash", [args.text.as_str()])
                        .ruleset(ctx.ruleset().clone())
                        .tool(ctx.message_id.as_str(), ctx.call_id.as_str())
                        .timeout(timeout);
                tokio::select! {
                    result = ctx.permissions().ask(request) => result?,
                    () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                }
            }
        }
        self.ran.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text(format!("ran {}", args.text)))
    }
}

/// An approver that never answers; counts how many of its futures are alive.
#[derive(Default)]
struct Silent {
    alive: Arc<AtomicUsize>,
}

struct AliveGuard(Arc<AtomicUsize>);

impl Drop for AliveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl Approver for Silent {
    async fn approve(&self, _request: &PermissionRequest) -> Reply {
        self.alive.fetch_add(1, Ordering::SeqCst);
        let _guard = AliveGuard(Arc::clone(&self.alive));
        std::future::pending::<()>().await;
        Reply::Once
    }
}

fn rules(json: &str) -> Ruleset {
    serde_json::from_str(json).unwrap()
}

/// Allow everything, ask for `bash`.
fn build_agent() -> AgentSpec {
    AgentSpec::new("build").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"},
            {"permission":"bash","pattern":"*","action":"ask"}]"#,
    ))
}

async fn engine_with(
    model: Arc<ScriptedModel>,
    configure: impl FnOnce(agentgate_core::EngineBuilder) -> agentgate_core::EngineBuilder,
) -> (Engine, Session) {
    let engine = configure(Engine::builder(model).agent(build_agent())).build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    (engine, session)
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Lets every task that can finish finish (the paused clock advances
/// through pending timers).
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_secs(3600)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

/// Drops the engine, then asserts the task count is back to `baseline`.
async fn assert_no_leaked_task(engine: Engine, baseline: usize, what: &str) {
    drop(engine);
    settle().await;
    assert_eq!(
        alive_tasks(),
        baseline,
        "{what}: tasks left alive after the engine was dropped"
    );
}

/// Every tool call has a final state, and the model input built from the
/// transcript answers each call exactly once, right after it.
fn assert_consistent(history: &[Message], what: &str) {
    for message in history {
        for part in &message.parts {
            if let Part::Tool(tool) = part {
                assert!(
                    tool.state.is_finished(),
                    "{what}: call {} left {}",
                    tool.call_id,
                    tool.state.status()
                );
            }
        }
    }
    let mut open: Vec<String> = Vec::new();
    for message in to_model_messages(history) {
        if message.role != ModelRole::Tool {
            assert!(open.is_empty(), "{what}: calls {open:?} have no result");
        }
        for part in &message.content {
            match part {
                ContentPart::ToolCall { id, .. } => open.push(id.clone()),
                ContentPart::ToolResult { call_id, .. } => {
                    let at = open.iter().position(|id| id == call_id);
                    assert!(at.is_some(), "{what}: result for unknown call {call_id}");
                    open.remove(at.unwrap_or_default());
                }
                _ => {}
            }
        }
    }
    assert!(open.is_empty(), "{what}: calls {open:?} have no result");
}

/// The session can be prompted again (by an engine on the same store with a
/// fresh model, so scripts the fault left unplayed do not interfere): the
/// request it sends answers every earlier call, and the transcript stays
/// consistent.
async fn assert_session_goes_on(engine: &Engine, session_id: &str, what: &str) {
    let model = Arc::new(ScriptedModel::new([Script::reply("next")]));
    let next = Engine::builder(model.clone())
        .agent(build_agent())
        .store(Arc::clone(engine.store()))
        .build();
    let turn = next.prompt(session_id, "next").await.unwrap();
    assert_eq!(turn.text(), "next", "{what}");
    let requests = model.requests();
    let (mut calls, mut results) = (0, 0);
    for message in requests[0].messages.iter() {
        for part in &message.content {
            match part {
                ContentPart::ToolCall { .. } => calls += 1,
                ContentPart::ToolResult { .. } => results += 1,
                _ => {}
            }
        }
    }
    assert_eq!(
        calls, results,
        "{what}: every call answered in the next request"
    );
    assert_consistent(&next.messages(session_id).await.unwrap(), what);
}

fn tool_states(history: &[Message]) -> Vec<ToolState> {
    history
        .iter()
        .flat_map(|m| m.tool_parts())
        .map(|t| t.state.clone())
        .collect()
}

fn error_text(state: &ToolState) -> Option<&str> {
    match state {
        ToolState::Error { error, .. } => Some(error),
        _ => None,
    }
}

/// The events of one complete tool-call response: some text, two calls
/// (streamed arguments), a finish.
fn tool_call_response() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextStart { id: "t1".into() },
        StreamEvent::TextDelta {
            id: "t1".into(),
            delta: "Calling.".into(),
        },
        StreamEvent::TextEnd {
            id: "t1".into(),
            provider_metadata: None,
        },
        StreamEvent::ToolInputStart {
            id: "c1".into(),
            name: "echo".into(),
        },
        StreamEvent::ToolInputDelta {
            id: "c1".into(),
            delta: r#"{"text":"#.into(),
        },
        StreamEvent::ToolInputDelta {
            id: "c1".into(),
            delta: r#""one"}"#.into(),
        },
        StreamEvent::ToolCall(agentgate_core::ToolCall {
            id: "c1".into(),
            name: "echo".into(),
            input: json!({"text": "one"}),
            provider_metadata: None,
        }),
        StreamEvent::ToolInputStart {
            id: "c2".into(),
            name: "echo".into(),
        },
        StreamEvent::ToolInputDelta {
            id: "c2".into(),
            delta: r#"{"text":"two"}"#.into(),
        },
        StreamEvent::ToolCall(agentgate_core::ToolCall {
            id: "c2".into(),
            name: "echo".into(),
            input: json!({"text": "two"}),
            provider_metadata: None,
        }),
        StreamEvent::Finish {
            reason: FinishReason::ToolCalls,
            usage: Default::default(),
            provider_metadata: None,
        },
    ]
}

fn script_of(events: &[StreamEvent]) -> Script {
    events
        .iter()
        .cloned()
        .fold(Script::new(), |script, event| script.event(event))
}

/// A tiny deterministic generator (xorshift64*), so "random" points are
/// reproducible from the seed printed on failure.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ------------------------------------------------------------------ tests

#[tokio::test(start_paused = true)]
async fn a_stream_cut_at_every_event_boundary_leaves_a_consistent_transcript() {
    let full = tool_call_response();
    // The first delta of text commits the attempt: cuts after it are final
    // failures; cuts before it are retried.
    let commit_at = 2;
    for cut in 0..full.len() {
        let what = format!("cut after {cut} events");
        let baseline = alive_tasks();
        let model = Arc::new(ScriptedModel::new([
            script_of(&full[..cut]).cut(),
            script_of(&full),
            Script::reply("Done."),
        ]));
        let echo = Echo::default();
        let (engine, session) = engine_with(model.clone(), |b| b.tool(echo.clone())).await;
        let turn = tokio::spawn({
            let engine = engine.clone();
            let id = session.id.clone();
            async move { engine.prompt(&id, "go").await }
        })
        .await
        .expect("the prompt task does not panic")
        .expect("the prompt runs");

        let history = engine.messages(&session.id).await.unwrap();
        assert_consistent(&history, &what);
        if cut < commit_at {
            // Retried from scratch: both calls ran once, the turn finished.
            assert_eq!(
                turn.stop,
                StopReason::Done {
                    finish: FinishReason::Stop
                },
                "{what}"
            );
            assert_eq!(echo.runs.load(Ordering::SeqCst), 2, "{what}");
            assert_eq!(model.requests().len(), 3, "{what}");
            let states = tool_states(&history);
            assert_eq!(states.len(), 2, "{what}");
            assert!(
                states
                    .iter()
                    .all(|s| matches!(s, ToolState::Completed { .. })),
                "{what}"
            );
        } else {
            // Output was already handed out: the step fails for good, and
            // nothing of the cut stream ran (calls run only after a finish).
            assert!(
                matches!(turn.stop, StopReason::Error { .. }),
                "{what}: {:?}",
                turn.stop
            );
            assert_eq!(echo.runs.load(Ordering::SeqCst), 0, "{what}");
            assert_eq!(model.requests().len(), 1, "{what}");
            for state in tool_states(&history) {
                assert!(matches!(state, ToolState::Error { .. }), "{what}");
            }
        }
        assert_session_goes_on(&engine, &session.id, &what).await;
        assert_no_leaked_task(engine, baseline, &what).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_429_storm_waits_every_retry_after_then_succeeds() {
    let baseline = alive_tasks();
    let storm = [3, 1, 4, 1, 5, 9, 2];
    let mut scripts: Vec<Script> = storm
        .iter()
        .map(|s| Script::rate_limited(&s.to_string()))
        .collect();
    scripts.push(Script::calls([("c1", "echo", json!({"text": "x"}))]));
    scripts.push(Script::reply("ok"));
    let model = Arc::new(ScriptedModel::new(scripts));
    let (engine, session) = engine_with(model.clone(), |b| b.tool(Echo::default())).await;

    let start = Instant::now();
    let turn = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(start.elapsed(), Duration::from_secs(storm.iter().sum()));
    assert_eq!(turn.text(), "ok");
    assert_eq!(model.requests().len(), storm.len() + 2);
    assert_consistent(&engine.messages(&session.id).await.unwrap(), "429 storm");
    assert_no_leaked_task(engine, baseline, "429 storm").await;
}

#[tokio::test(start_paused = true)]
async fn a_429_storm_longer_than_the_attempt_limit_fails_the_turn_cleanly() {
    let baseline = alive_tasks();
    // Default policy: no retry whose wait ends past 160 s after the first
    // attempt, so attempts at 0, 60 and 120 s (a fourth would start at 180).
    let model = Arc::new(ScriptedModel::new(
        (0..20).map(|_| Script::rate_limited("60")),
    ));
    let (engine, session) = engine_with(model.clone(), |b| b.tool(Echo::default())).await;

    let start = Instant::now();
    let turn = engine.prompt(&session.id, "go").await.unwrap();

    assert!(matches!(turn.stop, StopReason::Error { .. }), "{turn:?}");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(start.elapsed(), Duration::from_secs(2 * 60));
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "429 over the limit");
    assert!(history.last().unwrap().error.is_some());
    assert_no_leaked_task(engine, baseline, "429 over the limit").await;
}

#[tokio::test(start_paused = true)]
async fn a_5xx_burst_backs_off_exponentially_then_runs_the_calls_once() {
    let baseline = alive_tasks();
    let mut scripts: Vec<Script> = [500, 502, 503, 504]
        .iter()
        .map(|&status| Script::fail(ApiError::new(status, "upstream failed")))
        .collect();
    scripts.push(Script::calls([
        ("c1", "echo", json!({"text": "a"})),
        ("c2", "echo", json!({"text": "b"})),
    ]));
    scripts.push(Script::reply("ok"));
    let model = Arc::new(ScriptedModel::new(scripts));
    let echo = Echo::default();
    let (engine, session) = engine_with(model.clone(), |b| b.tool(echo.clone())).await;

    let start = Instant::now();
    let turn = engine.prompt(&session.id, "go").await.unwrap();

    // No headers: 2 s, 4 s, 8 s, 16 s.
    assert_eq!(start.elapsed(), Duration::from_secs(2 + 4 + 8 + 16));
    assert_eq!(turn.text(), "ok");
    assert_eq!(echo.runs.load(Ordering::SeqCst), 2);
    assert_consistent(&engine.messages(&session.id).await.unwrap(), "5xx burst");
    assert_no_leaked_task(engine, baseline, "5xx burst").await;
}

#[tokio::test(start_paused = true)]
async fn a_5xx_mid_stream_after_a_partial_call_is_retried_and_never_runs_the_partial_call() {
    let baseline = alive_tasks();
    let model = Arc::new(ScriptedModel::new([
        Script::new()
            .partial_tool_call("c1", "echo", r#"{"te"#)
            .error(ApiError::new(503, "overloaded")),
        Script::new()
            .partial_tool_call("c1", "echo", r#"{"te"#)
            .error(ApiError::new(500, "internal")),
        Script::calls([("c1", "echo", json!({"text": "x"}))]),
        Script::reply("ok"),
    ]));
    let echo = Echo::default();
    let (engine, session) = engine_with(model.clone(), |b| b.tool(echo.clone())).await;
    let turn = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(turn.text(), "ok");
    assert_eq!(echo.runs.load(Ordering::SeqCst), 1);
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "5xx mid stream");
    assert_eq!(
        tool_states(&history).len(),
        1,
        "no trace of the partial calls"
    );
    assert_no_leaked_task(engine, baseline, "5xx mid stream").await;
}

#[tokio::test(start_paused = true)]
async fn a_hanging_model_is_ended_by_cancellation_with_the_open_call_closed() {
    let baseline = alive_tasks();
    let model = Arc::new(ScriptedModel::new([Script::new()
        .text("Working.")
        .partial_tool_call("c1", "echo", r#"{"text":"#)
        .hang()]));
    let (engine, session) = engine_with(model.clone(), |b| b.tool(Echo::default())).await;
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let engine = engine.clone();
        let id = session.id.clone();
        let cancel = cancel.clone();
        async move {
            engine
                .prompt_with(&id, vec![Part::text("go")], cancel)
                .await
        }
    });
    tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
    assert!(!task.is_finished(), "a hanging model hangs the turn");
    cancel.cancel();
    let turn = task.await.unwrap().unwrap();
    assert_eq!(turn.stop, StopReason::Cancelled);
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "hanging model");
    assert!(tool_states(&history).iter().all(ToolState::is_interrupted));
    assert_no_leaked_task(engine, baseline, "hanging model").await;
}

#[tokio::test(start_paused = true)]
async fn an_approver_that_never_answers_is_ended_by_the_ask_timeout() {
    let baseline = alive_tasks();
    let permissions = PermissionGate::new();
    let silent = Silent::default();
    let alive = Arc::clone(&silent.alive);
    permissions.set_approver(Arc::new(silent));
    let model = Arc::new(ScriptedModel::new([
        Script::calls([("c1", "asks", json!({"text": "rm -rf /"}))]),
        Script::reply("unreachable"),
    ]));
    let asks = Asks {
        timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let (engine, session) = engine_with(model.clone(), |b| {
        b.tool(asks.clone()).permissions(permissions.clone())
    })
    .await;
    drop(permissions);

    let start = Instant::now();
    let turn = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(start.elapsed(), Duration::from_secs(30));
    // A timed-out ask is a rejection: the call fails and the turn stops.
    assert_eq!(turn.stop, StopReason::Rejected);
    assert_eq!(asks.ran.load(Ordering::SeqCst), 0);
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "ask timeout");
    let states = tool_states(&history);
    assert!(error_text(&states[0]).is_some(), "{states:?}");
    assert!(engine.permissions().pending().is_empty());
    settle().await;
    assert_eq!(alive.load(Ordering::SeqCst), 0, "the approver was dropped");
    assert_no_leaked_task(engine, baseline, "ask timeout").await;
}

#[tokio::test(start_paused = true)]
async fn an_approver_that_never_answers_is_ended_by_cancellation() {
    let baseline = alive_tasks();
    let permissions = PermissionGate::new();
    let silent = Silent::default();
    let alive = Arc::clone(&silent.alive);
    permissions.set_approver(Arc::new(silent));
    let model = Arc::new(ScriptedModel::new([Script::calls([
        ("c1", "asks", json!({"text": "ls"})),
        ("c2", "echo", json!({"text": "fast"})),
    ])]));
    let asks = Asks::default();
    let (engine, session) = engine_with(model.clone(), |b| {
        b.tool(asks.clone())
            .tool(Echo::default())
            .permissions(permissions.clone())
    })
    .await;
    drop(permissions);
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let engine = engine.clone();
        let id = session.id.clone();
        let cancel = cancel.clone();
        async move {
            engine
                .prompt_with(&id, vec![Part::text("go")], cancel)
                .await
        }
    });
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(alive.load(Ordering::SeqCst), 1, "the approver is deciding");
    assert_eq!(engine.permissions().pending().len(), 1);
    cancel.cancel();
    let turn = task.await.unwrap().unwrap();

    assert_eq!(turn.stop, StopReason::Cancelled);
    assert_eq!(asks.ran.load(Ordering::SeqCst), 0);
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "approver cancelled");
    let states = tool_states(&history);
    assert!(states[0].is_interrupted(), "{states:?}");
    assert!(
        matches!(states[1], ToolState::Completed { .. }),
        "{states:?}"
    );
    assert!(engine.permissions().pending().is_empty());
    settle().await;
    assert_eq!(alive.load(Ordering::SeqCst), 0, "the approver was dropped");
    assert_no_leaked_task(engine, baseline, "approver cancelled").await;
}

/// A panicking tool fails its own call (closed with an error naming the
/// panic), its sibling completes, and the turn goes on. (Before the
/// engine caught the unwind in `run_call`, the panic went through
/// `Engine::prompt` and the whole step was lost.)
#[tokio::test(start_paused = true)]
async fn a_panicking_tool_closes_its_call_with_an_error_and_the_session_survives() {
    let baseline = alive_tasks();
    let model = Arc::new(ScriptedModel::new([
        Script::calls([
            ("c1", "panics", json!({"text": "boom"})),
            ("c2", "echo", json!({"text": "sibling"})),
        ]),
        Script::reply("recovered"),
    ]));
    let echo = Echo::default();
    let (engine, session) = engine_with(model.clone(), |b| b.tool(Panics).tool(echo.clone())).await;
    let turn = tokio::spawn({
        let engine = engine.clone();
        let id = session.id.clone();
        async move { engine.prompt(&id, "go").await }
    })
    .await
    .expect("a panicking tool must not unwind through Engine::prompt")
    .unwrap();

    assert_eq!(turn.text(), "recovered");
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "panicking tool");
    let states = tool_states(&history);
    assert!(
        error_text(&states[0]).is_some_and(|e| e.contains("boom") || e.contains("panic")),
        "{states:?}"
    );
    assert!(matches!(states[1], ToolState::Completed { .. }));
    assert_no_leaked_task(engine, baseline, "panicking tool").await;
}

/// After a panicking tool the session is not wedged (its busy flag is
/// released), the transcript is consistent and the session can be
/// prompted again, whether the panic reached the caller or not.
#[tokio::test(start_paused = true)]
async fn after_a_panicking_tool_the_session_is_still_usable() {
    let baseline = alive_tasks();
    let model = Arc::new(ScriptedModel::new([Script::calls([(
        "c1",
        "panics",
        json!({"text": "boom"}),
    )])]));
    let (engine, session) = engine_with(model.clone(), |b| b.tool(Panics)).await;
    let outcome = tokio::spawn({
        let engine = engine.clone();
        let id = session.id.clone();
        async move { engine.prompt(&id, "go").await }
    })
    .await;
    if let Ok(turn) = &outcome {
        // The panic is caught: the turn ends normally.
        let turn = turn.as_ref().unwrap();
        assert!(!matches!(turn.stop, StopReason::Cancelled));
    }
    let history = engine.messages(&session.id).await.unwrap();
    assert_consistent(&history, "after a panic");
    model.push(Script::reply("still here"));
    let turn = engine.prompt(&session.id, "again").await.unwrap();
    assert_eq!(turn.text(), "still here");
    assert_consistent(
        &engine.messages(&session.id).await.unwrap(),
        "after a panic",
    );
    assert_no_leaked_task(engine, baseline, "after a panic").await;
}

#[tokio::test(start_paused = true)]
async fn cancellation_at_random_points_always_leaves_a_consistent_transcript() {
    // A turn of three steps with delays in the stream, in tools and in a
    // retry; it lasts 2+4+5+2+2+2+5 = 22 s of virtual time uncancelled.
    let scripts = || {
        [
            Script::rate_limited("2"),
            Script::new()
                .text_chunks(&["Reading", " both."])
                .delay(Duration::from_secs(1))
                .tool_call("c1", "echo", json!({"text": "one"}))
                .delay(Duration::from_secs(3))
                .tool_call("c2", "asks", json!({"text": "ls"}))
                .finish(FinishReason::ToolCalls),
            Script::new()
                .partial_tool_call("c3", "echo", r#"{"text":"#)
                .delay(Duration::from_secs(2))
                .cut(),
            Script::new()
                .delay(Duration::from_secs(2))
                .tool_call("c3", "echo", json!({"text": "three"}))
                .finish(FinishReason::ToolCalls),
            Script::reply("Done."),
        ]
    };
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut outcomes = [0usize; 2];
    for round in 0..60 {
        let at = Duration::from_millis(rng.below(30_000));
        let what = format!("round {round}: cancel at {at:?}");
        let baseline = alive_tasks();
        let permissions = PermissionGate::new();
        // The asker is approved after 1 s by a host loop on the bus.
        let model = Arc::new(ScriptedModel::new(scripts()));
        let echo = Echo {
            delay: Duration::from_secs(5),
            ..Default::default()
        };
        let asks = Asks::default();
        let (engine, session) = engine_with(model.clone(), |b| {
            b.tool(echo.clone())
                .tool(asks.clone())
                .permissions(permissions.clone())
        })
        .await;
        let approver = tokio::spawn({
            let permissions = permissions.clone();
            async move {
                let mut events = permissions.subscribe();
                while let Ok(event) = events.recv().await {
                    if let agentgate_permission::PermissionEvent::Asked(request) = event {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        let _ = permissions.reply(&request.id, Reply::Once);
                    }
                }
            }
        });
        drop(permissions);
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let engine = engine.clone();
            let id = session.id.clone();
            let cancel = cancel.clone();
            async move {
                engine
                    .prompt_with(&id, vec![Part::text("go")], cancel)
                    .await
            }
        });
        tokio::time::sleep(at).await;
        cancel.cancel();
        let turn = task.await.unwrap().unwrap();
        match turn.stop {
            StopReason::Cancelled => outcomes[0] += 1,
            StopReason::Done { .. } => outcomes[1] += 1,
            ref other => panic!("{what}: unexpected stop {other:?}"),
        }
        let history = engine.messages(&session.id).await.unwrap();
        assert_consistent(&history, &what);
        // The session goes on after the cancellation.
        assert_session_goes_on(&engine, &session.id, &what).await;
        engine.permissions().shutdown();
        approver.await.unwrap();
        assert_no_leaked_task(engine, baseline, &what).await;
    }
    assert!(
        outcomes[0] > 0 && outcomes[1] > 0,
        "both cancelled and finished turns were exercised: {outcomes:?}"
    );
}
