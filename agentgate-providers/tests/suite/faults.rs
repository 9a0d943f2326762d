//! Fault injection over HTTP: the engine drives each
//! provider client against a local server that cuts the recorded tool-call
//! stream at every SSE event boundary, answers with 429 storms carrying
//! `retry-after`, bursts of 5xx, or goes silent mid-stream (idle timeout).
//!
//! Every scenario ends with a consistent transcript (each tool call has a
//! final state and exactly one result in the next request; a call runs
//! only if its stream finished, and then exactly once) and with tokio's
//! `num_alive_tasks` back to its value before the client was built.
//!
//! These talk to real loopback sockets, so they use the real clock; every
//! wait is a few milliseconds (`retry-after: 0.02`) except the idle-timeout
//! case (the loop's 2 s backoff for an interrupted stream).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgate_providers::core::permission::Ruleset;
use agentgate_providers::core::{
    AgentSpec, ContentPart, Engine, LanguageModel, Message, ModelRole, Part, Session, StopReason,
    Tool, ToolContext, ToolError, ToolOutput, transcript::to_model_messages,
};
use agentgate_providers::{Anthropic, Gemini, OpenAiCompatible, Timeouts};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::common::{serve, sse};

// ---------------------------------------------------------------- fixtures

const OPENAI_TOOLS: &str = include_str!("../fixtures/openai_chat_tool_calls.sse");
const ANTHROPIC_TOOLS: &str = include_str!("../fixtures/anthropic_messages_thinking_tool_use.sse");
const GEMINI_TOOLS: &str = include_str!("../fixtures/gemini_stream_function_call.sse");

const OPENAI_ANSWER: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"All read.\"},\"finish_reason\":null}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

const ANTHROPIC_ANSWER: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,\"output_tokens\":1}}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"All read.\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

const GEMINI_ANSWER: &str = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"All read.\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}]}\n\n";

/// What the stub tools return; a request containing it is a second step.
const TOOL_OUTPUT: &str = "STUB-TOOL-OUTPUT";

#[derive(Clone, Copy, Debug)]
enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Provider {
    const ALL: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini];

    fn tool_stream(self) -> &'static str {
        match self {
            Provider::OpenAi => OPENAI_TOOLS,
            Provider::Anthropic => ANTHROPIC_TOOLS,
            Provider::Gemini => GEMINI_TOOLS,
        }
    }

    fn answer(self) -> &'static str {
        match self {
            Provider::OpenAi => OPENAI_ANSWER,
            Provider::Anthropic => ANTHROPIC_ANSWER,
            Provider::Gemini => GEMINI_ANSWER,
        }
    }

    /// The tools the recorded stream calls, and how many calls it makes.
    fn calls(self) -> &'static [&'static str] {
        match self {
            Provider::OpenAi => &["read_file", "grep"],
            Provider::Anthropic | Provider::Gemini => &["read_file"],
        }
    }

    fn client(self, base: &str) -> Arc<dyn LanguageModel> {
        self.client_with(base, Timeouts::default())
    }

    fn client_with(self, base: &str, timeouts: Timeouts) -> Arc<dyn LanguageModel> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        match self {
            Provider::OpenAi => Arc::new(
                OpenAiCompatible::new("openai", "gpt-4.1", format!("{base}/v1"))
                    .with_http_client(http)
                    .with_timeouts(timeouts),
            ),
            Provider::Anthropic => Arc::new(
                Anthropic::new("claude-sonnet-4-5", "k")
                    .with_base_url(format!("{base}/v1"))
                    .with_http_client(http)
                    .with_timeouts(timeouts),
            ),
            Provider::Gemini => Arc::new(
                Gemini::new("gemini-2.5-flash", "k")
                    .with_base_url(format!("{base}/v1beta"))
                    .with_http_client(http)
                    .with_timeouts(timeouts),
            ),
        }
    }
}

/// Byte offsets just after each blank line (the end of each SSE event),
/// LF or CRLF.
fn event_boundaries(body: &str) -> Vec<usize> {
    let bytes = body.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"\r\n\r\n") {
            ends.push(i + 4);
            i += 4;
        } else if bytes[i..].starts_with(b"\n\n") {
            ends.push(i + 2);
            i += 2;
        } else {
            i += 1;
        }
    }
    ends
}

/// Answers the first-step calls with `first` in order (the last one
/// repeats), and every request that carries a tool result with `answer`.
struct Scripted {
    first: Vec<ResponseTemplate>,
    answer: ResponseTemplate,
    served: AtomicUsize,
}

impl Respond for Scripted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if String::from_utf8_lossy(&request.body).contains(TOOL_OUTPUT) {
            return self.answer.clone();
        }
        let n = self.served.fetch_add(1, Ordering::SeqCst);
        self.first[n.min(self.first.len() - 1)].clone()
    }
}

async fn server(provider: Provider, first: Vec<ResponseTemplate>) -> MockServer {
    let scripted = Scripted {
        first,
        answer: sse(provider.answer()),
        served: AtomicUsize::new(0),
    };
    serve(Mock::given(wiremock::matchers::method("POST")), scripted).await
}

/// Any tool: accepts any object, counts runs per name.
#[derive(Clone)]
struct Stub {
    name: &'static str,
    runs: Arc<Mutex<HashMap<String, usize>>>,
}

#[async_trait::async_trait]
impl Tool for Stub {
    fn id(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A stub."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        *self
            .runs
            .lock()
            .unwrap()
            .entry(self.name.to_string())
            .or_default() += 1;
        Ok(ToolOutput::text(TOOL_OUTPUT))
    }
}

struct Run {
    engine: Engine,
    session: Session,
    runs: Arc<Mutex<HashMap<String, usize>>>,
}

async fn engine(model: Arc<dyn LanguageModel>, provider: Provider) -> Run {
    let rules: Ruleset =
        serde_json::from_str(r#"[{"permission":"*","pattern":"*","action":"allow"}]"#).unwrap();
    let runs = Arc::new(Mutex::new(HashMap::new()));
    let mut builder = Engine::builder(model).agent(AgentSpec::new("build").with_permission(rules));
    for name in provider.calls() {
        builder = builder.tool(Stub {
            name,
            runs: Arc::clone(&runs),
        });
    }
    let engine = builder.build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    Run {
        engine,
        session,
        runs,
    }
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits (real time, up to 5 s) for the task count to come back to
/// `baseline`; fails if it does not.
async fn assert_no_leaked_task(baseline: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive_tasks() > baseline && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(alive_tasks(), baseline, "{what}: tasks left alive");
}

/// Every call has a final state and one result, right after its message.
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

/// A finished turn ran each call of the recorded stream exactly once and
/// answered; a failed one ran nothing.
fn assert_outcome(provider: Provider, run: &Run, stop: &StopReason, text: &str, what: &str) {
    let runs = run.runs.lock().unwrap().clone();
    match stop {
        StopReason::Done { .. } => {
            assert_eq!(text, "All read.", "{what}");
            for name in provider.calls() {
                assert_eq!(runs.get(*name), Some(&1), "{what}: {name} ran once");
            }
        }
        StopReason::Error { .. } => assert!(runs.is_empty(), "{what}: {runs:?}"),
        other => panic!("{what}: unexpected stop {other:?}"),
    }
}

// ------------------------------------------------------------------ tests

/// Runs under tokio's paused clock: the loop's 2 s backoff after an
/// interrupted stream is skipped. The clients' timeouts are off: the mock
/// server answers from another thread, so while the client waits for it
/// the runtime looks idle and the paused clock would jump to them.
#[tokio::test(start_paused = true)]
async fn each_provider_stream_cut_at_every_event_boundary_retries_or_fails_cleanly() {
    for provider in Provider::ALL {
        let body = provider.tool_stream();
        let boundaries = event_boundaries(body);
        assert!(boundaries.len() >= 2, "{provider:?}: fixture has events");
        let mut retried = 0;
        // Every proper prefix ending on an event boundary (and the empty one).
        for cut in std::iter::once(0).chain(boundaries[..boundaries.len() - 1].iter().copied()) {
            let what = format!("{provider:?} cut at byte {cut}");
            let baseline = alive_tasks();
            {
                let server = server(provider, vec![sse(&body[..cut]), sse(body)]).await;
                let model = provider.client_with(&server.uri(), Timeouts::none());
                let run = engine(model, provider).await;
                let turn = run.engine.prompt(&run.session.id, "go").await.unwrap();
                let history = run.engine.messages(&run.session.id).await.unwrap();
                assert_consistent(&history, &what);
                assert_outcome(provider, &run, &turn.stop, &turn.text(), &what);
                if matches!(turn.stop, StopReason::Done { .. }) {
                    retried += 1;
                }
            }
            assert_no_leaked_task(baseline, &what).await;
        }
        assert!(retried > 0, "{provider:?}: some cuts are retried");
    }
}

#[tokio::test]
async fn a_429_storm_with_retry_after_is_waited_out_for_each_provider() {
    for provider in Provider::ALL {
        let what = format!("{provider:?} 429 storm");
        let baseline = alive_tasks();
        {
            let storm = 6;
            let mut first: Vec<ResponseTemplate> = (0..storm)
                .map(|_| {
                    ResponseTemplate::new(429)
                        .insert_header("retry-after", "0.02")
                        .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}))
                })
                .collect();
            first.push(sse(provider.tool_stream()));
            let server = server(provider, first).await;
            let run = engine(provider.client(&server.uri()), provider).await;
            let start = Instant::now();
            let turn = run.engine.prompt(&run.session.id, "go").await.unwrap();
            assert!(
                start.elapsed() >= Duration::from_millis(20 * storm),
                "{what}: waited {:?}",
                start.elapsed()
            );
            assert!(
                matches!(turn.stop, StopReason::Done { .. }),
                "{what}: {:?}",
                turn.stop
            );
            let history = run.engine.messages(&run.session.id).await.unwrap();
            assert_consistent(&history, &what);
            assert_outcome(provider, &run, &turn.stop, &turn.text(), &what);
            let requests = server.received_requests().await.unwrap();
            assert_eq!(requests.len(), storm as usize + 2, "{what}");
        }
        assert_no_leaked_task(baseline, &what).await;
    }
}

#[tokio::test]
async fn a_5xx_burst_is_retried_and_one_past_the_limit_fails_cleanly() {
    for provider in Provider::ALL {
        for (burst, succeeds) in [(5, true), (9, false)] {
            let what = format!("{provider:?} burst of {burst} 5xx");
            let baseline = alive_tasks();
            {
                let mut first: Vec<ResponseTemplate> = (0..burst)
                    .map(|i| {
                        ResponseTemplate::new([500, 502, 503, 504][i % 4])
                            .insert_header("retry-after-ms", "5")
                            .set_body_string("upstream failed")
                    })
                    .collect();
                first.push(sse(provider.tool_stream()));
                let server = server(provider, first).await;
                let run = engine(provider.client(&server.uri()), provider).await;
                let turn = run.engine.prompt(&run.session.id, "go").await.unwrap();
                let history = run.engine.messages(&run.session.id).await.unwrap();
                assert_consistent(&history, &what);
                assert_outcome(provider, &run, &turn.stop, &turn.text(), &what);
                // The default policy retries 8 times (9 attempts).
                assert_eq!(
                    matches!(turn.stop, StopReason::Done { .. }),
                    succeeds,
                    "{what}: {:?}",
                    turn.stop
                );
            }
            assert_no_leaked_task(baseline, &what).await;
        }
    }
}

/// Serves one canned HTTP response per connection: the first sends the
/// headers and `stall_after` bytes of the tool-call stream, then goes
/// silent; the next ones serve the whole stream, then the answer.
async fn stalling_server(provider: Provider, stall_after: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut served = 0;
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            served += 1;
            let n = served;
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = vec![0u8; 65536];
                // Read until the whole body (Content-Length) arrived.
                loop {
                    let Ok(read) = socket.read(&mut buf).await else {
                        return;
                    };
                    if read == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..read]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some(head_end) = text.find("\r\n\r\n") {
                        let length = text[..head_end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if request.len() >= head_end + 4 + length {
                            break;
                        }
                    }
                }
                let is_second_step = String::from_utf8_lossy(&request).contains(TOOL_OUTPUT);
                let body = if is_second_step {
                    provider.answer()
                } else {
                    provider.tool_stream()
                };
                let stall = n == 1 && !is_second_step;
                let sent = if stall { &body[..stall_after] } else { body };
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(sent.as_bytes()).await;
                let _ = socket.flush().await;
                if stall {
                    // Silent until the client hangs up.
                    let _ = socket.read(&mut buf).await;
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_provider_that_goes_silent_mid_stream_is_cut_by_the_idle_timeout_and_retried() {
    // Silent after the headers (nothing committed: retried), or after the
    // first event (retried unless that event was text: Gemini). A retry
    // without a server hint waits 2 s, so the scenarios run concurrently;
    // the task count is checked once, after all of them.
    let mut scenarios = Vec::new();
    for provider in Provider::ALL {
        for stall_after in [0, event_boundaries(provider.tool_stream())[0]] {
            let base = stalling_server(provider, stall_after).await;
            scenarios.push((provider, stall_after, base));
        }
    }
    let baseline = alive_tasks();
    let runs = scenarios
        .into_iter()
        .map(|(provider, stall_after, base)| async move {
            let what = format!("{provider:?} silent after {stall_after} bytes");
            let timeouts = Timeouts {
                chunk: Some(Duration::from_millis(100)),
                ..Timeouts::default()
            };
            let model = provider.client_with(&base, timeouts);
            let run = engine(model, provider).await;
            let turn = tokio::time::timeout(
                Duration::from_secs(20),
                run.engine.prompt(&run.session.id, "go"),
            )
            .await
            .expect("the idle timeout ends the silent stream")
            .unwrap();
            let history = run.engine.messages(&run.session.id).await.unwrap();
            assert_consistent(&history, &what);
            assert_outcome(provider, &run, &turn.stop, &turn.text(), &what);
            if stall_after == 0 {
                assert!(
                    matches!(turn.stop, StopReason::Done { .. }),
                    "{what}: {:?}",
                    turn.stop
                );
            }
        });
    futures::future::join_all(runs).await;
    assert_no_leaked_task(baseline, "silent providers").await;
}
