//! Every fault a model server can show ends a turn within a known time,
//! with a message that says what happened and what to change: a scripted
//! loopback server stalls before its headers or mid-stream, hangs up,
//! answers 429 (with and without `retry-after`), 500 or 503, sends a
//! malformed stream, a slow one, an endless one, or restarts (refusing
//! connections for a while). The engine runs with its default retry policy
//! and the client with its default timeouts unless a scenario says
//! otherwise.
//!
//! The clock is tokio's paused one: waits of minutes pass at once, and each
//! scenario asserts an upper bound on the (virtual) time it took. The
//! server's own delays use the same clock, and loopback bytes are in the
//! kernel before the writer's task yields, so the runtime only advances
//! the clock when every side is really waiting. Each scenario also checks
//! that it took little real time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentgate_providers::core::{
    AgentSpec, Engine, Event, LanguageModel, ModelRef, ProviderConfig, Session, StopReason,
};
use agentgate_providers::{
    Anthropic, Gemini, OpenAiCompatible, OpenAiResponses, Timeouts, model_from_config,
};
use indexmap::IndexMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::time::Instant;

/// One text delta of a Chat Completions stream.
fn delta(text: &str) -> String {
    format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n")
}

/// The end of a Chat Completions stream.
const FINISH: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

/// What the server does with one request.
#[derive(Clone)]
enum Reply {
    /// Reads the request and says nothing until the client hangs up.
    Silent,
    /// Reads the request and closes the connection without an answer.
    HangUp,
    /// Answers with this status, headers and body.
    Status(u16, Vec<(&'static str, &'static str)>, &'static str),
    /// A 200 event stream: each piece after its delay, then `then`.
    Stream(Vec<(Duration, String)>, After),
    /// A 200 event stream that sends `piece` every `every`, forever.
    Endless(Duration, String),
}

/// How a [`Reply::Stream`] ends.
#[derive(Clone, Copy)]
enum After {
    /// The body ends.
    End,
    /// The connection stays open and silent.
    Stall,
}

/// A whole answer ("ok"), at once.
fn answer() -> Reply {
    Reply::Stream(
        vec![
            (Duration::ZERO, delta("ok")),
            (Duration::ZERO, FINISH.into()),
        ],
        After::End,
    )
}

/// A scripted server: connection `i` gets `replies[i]` (the last one
/// repeats). With `down`, after serving that many connections the server
/// stops listening (connections are refused) for the given time, then
/// listens again on the same port.
struct Script {
    replies: Vec<Reply>,
    down: Option<(usize, Duration)>,
}

/// A running scripted server.
struct Server {
    base: String,
    requests: Arc<AtomicUsize>,
}

impl Server {
    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn listen(addr: SocketAddr) -> TcpListener {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind(addr).unwrap();
    socket.listen(16).unwrap()
}

async fn serve(script: Script) -> Server {
    let mut listener = listen("127.0.0.1:0".parse().unwrap());
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    tokio::spawn(async move {
        let mut served = 0;
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let reply = script.replies[served.min(script.replies.len() - 1)].clone();
            served += 1;
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut socket = socket;
                let _ = read_request(&mut socket, reply, counter).await;
            });
            if let Some((after, pause)) = script.down
                && served == after
            {
                drop(listener);
                tokio::time::sleep(pause).await;
                listener = listen(addr);
            }
        }
    });
    Server {
        base: format!("http://{addr}/v1"),
        requests,
    }
}

/// Reads one request (head and `content-length` body), counts it, and
/// answers it with `reply`.
async fn read_request(
    socket: &mut TcpStream,
    reply: Reply,
    counter: Arc<AtomicUsize>,
) -> Option<()> {
    let mut request = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let read = socket.read(&mut buf).await.ok()?;
        if read == 0 {
            return None;
        }
        request.extend_from_slice(&buf[..read]);
        let text = String::from_utf8_lossy(&request);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    counter.fetch_add(1, Ordering::SeqCst);
    answer_with(socket, reply).await
}

async fn answer_with(socket: &mut TcpStream, reply: Reply) -> Option<()> {
    const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    let chunk = |piece: &str| format!("{:x}\r\n{piece}\r\n", piece.len());
    match reply {
        Reply::Silent => wait_for_hang_up(socket).await,
        Reply::HangUp => return Some(()),
        Reply::Status(code, headers, body) => {
            let mut head = format!(
                "HTTP/1.1 {code} Status\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await.ok()?;
            socket.write_all(body.as_bytes()).await.ok()?;
        }
        Reply::Stream(pieces, after) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await.ok()?;
            for (delay, piece) in pieces {
                tokio::time::sleep(delay).await;
                socket.write_all(chunk(&piece).as_bytes()).await.ok()?;
            }
            match after {
                After::End => socket.write_all(b"0\r\n\r\n").await.ok()?,
                After::Stall => wait_for_hang_up(socket).await,
            }
        }
        Reply::Endless(every, piece) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await.ok()?;
            loop {
                tokio::time::sleep(every).await;
                socket.write_all(chunk(&piece).as_bytes()).await.ok()?;
            }
        }
    }
    socket.flush().await.ok()
}

async fn wait_for_hang_up(socket: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
}

/// A client of the server with the builder's defaults.
fn client(server: &Server) -> Arc<dyn LanguageModel> {
    Arc::new(
        OpenAiCompatible::new("local", "m", &server.base)
            .with_http_client(agentgate_testing::replay::http_client()),
    )
}

/// A client built from a config entry `provider.local` with these options
/// (the base URL added), as the CLI builds it.
fn configured(server: &Server, options: serde_json::Value) -> Arc<dyn LanguageModel> {
    let mut options = options.as_object().cloned().unwrap_or_default();
    options.insert("baseURL".into(), server.base.clone().into());
    let entry = serde_json::json!({ "options": options });
    let providers: IndexMap<String, ProviderConfig> = IndexMap::from([(
        "local".to_string(),
        ProviderConfig::from_value(&entry, "provider.local").unwrap(),
    )]);
    model_from_config(&ModelRef::parse("local/m").unwrap(), &providers).unwrap()
}

/// How a turn ended.
struct Outcome {
    stop: StopReason,
    text: String,
    /// Virtual time the turn took.
    took: Duration,
    /// The scheduled retries: (retry number, wait in ms, error shown).
    retries: Vec<(u32, u64, String)>,
}

impl Outcome {
    /// The error message the turn ended with; panics when it did not fail.
    fn error(&self) -> &str {
        match &self.stop {
            StopReason::Error { error } => &error.message,
            other => panic!("expected a failed turn, got {other:?} ({})", self.text),
        }
    }

    fn assert_done(&self, text: &str) {
        assert!(
            matches!(self.stop, StopReason::Done { .. }),
            "expected an answer, got {:?}",
            self.stop
        );
        assert_eq!(self.text, text);
    }

    fn assert_took_at_most(&self, bound: Duration) {
        assert!(self.took <= bound, "took {:?}, bound {bound:?}", self.took);
    }
}

/// Runs one turn on `model`, bounding the real time it may take.
async fn turn(model: Arc<dyn LanguageModel>) -> Outcome {
    let engine = Engine::builder(model)
        .agent(AgentSpec::new("build"))
        .build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    let mut events = engine.subscribe();
    let real = std::time::Instant::now();
    let start = Instant::now();
    let result = engine.prompt(&session.id, "go").await.unwrap();
    let took = start.elapsed();
    assert!(
        real.elapsed() < Duration::from_secs(10),
        "the scenario took {:?} of real time",
        real.elapsed()
    );
    let mut retries = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::RetryScheduled {
            attempt,
            delay_ms,
            error,
            message,
            ..
        } = event
        {
            retries.push((attempt, delay_ms, error.unwrap_or(message)));
        }
    }
    Outcome {
        text: result.text(),
        stop: result.stop,
        took,
        retries,
    }
}

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test(start_paused = true)]
async fn a_server_that_never_sends_headers_fails_after_the_header_timeout() {
    let server = serve(Script {
        replies: vec![Reply::Silent],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    let error = outcome.error();
    assert!(
        error.contains("no response headers from local within 300 s (headerTimeout)"),
        "{error}"
    );
    assert!(
        error.contains("provider.local.options.headerTimeout"),
        "{error}"
    );
    // Five minutes is past the retry time limit: not retried.
    assert_eq!(server.requests(), 1);
    assert!(outcome.took >= Duration::from_secs(300));
    outcome.assert_took_at_most(6 * MINUTE);
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_stalls_after_text_fails_after_the_chunk_timeout() {
    let server = serve(Script {
        replies: vec![Reply::Stream(
            vec![(Duration::ZERO, delta("partial"))],
            After::Stall,
        )],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    let error = outcome.error();
    assert!(
        error.contains(
            "no data for 300 s from local (chunkTimeout); raise provider.local.options.chunkTimeout"
        ),
        "{error}"
    );
    // The text reached the caller: never retried.
    assert_eq!(server.requests(), 1);
    assert!(outcome.took >= Duration::from_secs(300));
    outcome.assert_took_at_most(6 * MINUTE);
}

#[tokio::test(start_paused = true)]
async fn a_configured_chunk_timeout_ends_a_stall_within_30_s() {
    let server = serve(Script {
        replies: vec![Reply::Stream(
            vec![(Duration::ZERO, delta("partial"))],
            After::Stall,
        )],
        down: None,
    })
    .await;
    let outcome = turn(configured(
        &server,
        serde_json::json!({"chunkTimeout": 5000}),
    ))
    .await;
    assert!(
        outcome
            .error()
            .contains("no data for 5 s from local (chunkTimeout)"),
        "{}",
        outcome.error()
    );
    assert!(outcome.took >= Duration::from_secs(5));
    outcome.assert_took_at_most(Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn a_stall_before_any_output_is_retried_once() {
    // Headers, then nothing, on every connection.
    let server = serve(Script {
        replies: vec![Reply::Stream(vec![], After::Stall)],
        down: None,
    })
    .await;
    let outcome = turn(configured(
        &server,
        serde_json::json!({"chunkTimeout": 5000}),
    ))
    .await;
    let error = outcome.error();
    assert!(error.contains("(chunkTimeout)"), "{error}");
    assert!(error.contains("timed out twice"), "{error}");
    assert_eq!(server.requests(), 2);
    assert_eq!(outcome.retries.len(), 1);
    outcome.assert_took_at_most(Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn a_header_timeout_from_the_config_applies() {
    let server = serve(Script {
        replies: vec![Reply::Silent, answer()],
        down: None,
    })
    .await;
    let outcome = turn(configured(
        &server,
        serde_json::json!({"headerTimeout": 1000}),
    ))
    .await;
    // One timeout is retried (after the 2 s backoff), and the second
    // connection answers.
    outcome.assert_done("ok");
    assert_eq!(server.requests(), 2);
    assert!(outcome.retries[0].2.contains("(headerTimeout)"));
    outcome.assert_took_at_most(Duration::from_secs(4));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_connection_is_retried() {
    let server = serve(Script {
        replies: vec![Reply::HangUp, answer()],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    outcome.assert_done("ok");
    assert_eq!(server.requests(), 2);
    assert_eq!(outcome.retries.len(), 1);
    outcome.assert_took_at_most(Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_429_with_retry_after_waits_what_the_server_asked() {
    let server = serve(Script {
        replies: vec![
            Reply::Status(429, vec![("retry-after", "7")], "rate limited"),
            answer(),
        ],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    outcome.assert_done("ok");
    assert_eq!(outcome.retries[0].1, 7000);
    assert!(outcome.took >= Duration::from_secs(7));
    outcome.assert_took_at_most(Duration::from_secs(8));
}

#[tokio::test(start_paused = true)]
async fn a_persistent_429_without_retry_after_gives_up_with_capped_waits() {
    let server = serve(Script {
        replies: vec![Reply::Status(429, vec![], "slow down")],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    let error = outcome.error();
    assert!(error.contains("HTTP 429"), "{error}");
    assert!(error.contains("gave up after 9 attempts"), "{error}");
    let waits: Vec<u64> = outcome.retries.iter().map(|r| r.1).collect();
    assert_eq!(
        waits,
        [2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]
    );
    assert_eq!(server.requests(), 9);
    outcome.assert_took_at_most(3 * MINUTE);
}

#[tokio::test(start_paused = true)]
async fn a_persistent_500_ends_within_3_minutes() {
    let server = serve(Script {
        replies: vec![Reply::Status(
            500,
            vec![("content-type", "text/plain")],
            "Internal Server Error",
        )],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    let error = outcome.error();
    assert!(error.contains("HTTP 500"), "{error}");
    assert!(error.contains("gave up after 9 attempts"), "{error}");
    assert!(error.contains("--max-retries"), "{error}");
    // Each retry was announced with the error it retries.
    assert_eq!(outcome.retries.len(), 8);
    assert!(
        outcome.retries[0].2.contains("HTTP 500"),
        "{:?}",
        outcome.retries
    );
    // 2 + 4 + 8 + 16 + 4 × 30 s of waiting.
    assert!(
        outcome.took >= Duration::from_secs(150),
        "{:?}",
        outcome.took
    );
    outcome.assert_took_at_most(3 * MINUTE);
}

#[tokio::test(start_paused = true)]
async fn a_503_is_retried_and_a_retry_after_past_the_time_limit_is_not_waited_for() {
    let server = serve(Script {
        replies: vec![Reply::Status(503, vec![], "unavailable"), answer()],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    outcome.assert_done("ok");
    outcome.assert_took_at_most(Duration::from_secs(3));

    let server = serve(Script {
        replies: vec![Reply::Status(
            503,
            vec![("retry-after", "3600")],
            "maintenance",
        )],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    let error = outcome.error();
    assert!(error.contains("HTTP 503"), "{error}");
    assert!(error.contains("retry time limit"), "{error}");
    assert_eq!(server.requests(), 1);
    outcome.assert_took_at_most(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_malformed_stream_fails_at_once() {
    let server = serve(Script {
        replies: vec![Reply::Stream(
            vec![(Duration::ZERO, "data: {\"choices\": [oops\n\n".into())],
            After::Stall,
        )],
        down: None,
    })
    .await;
    let outcome = turn(client(&server)).await;
    assert!(outcome.error().contains("malformed"), "{}", outcome.error());
    assert_eq!(server.requests(), 1);
    outcome.assert_took_at_most(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_slow_body_within_the_chunk_timeout_completes() {
    let slow = Duration::from_secs(4);
    let server = serve(Script {
        replies: vec![Reply::Stream(
            vec![
                (slow, delta("s")),
                (slow, delta("l")),
                (slow, delta("o")),
                (slow, delta("w")),
                (slow, FINISH.into()),
            ],
            After::End,
        )],
        down: None,
    })
    .await;
    let outcome = turn(configured(
        &server,
        serde_json::json!({"chunkTimeout": 5000}),
    ))
    .await;
    outcome.assert_done("slow");
    assert!(outcome.took >= Duration::from_secs(20));
    outcome.assert_took_at_most(Duration::from_secs(21));
}

#[tokio::test(start_paused = true)]
async fn an_endless_stream_ends_at_the_request_timeout() {
    let server = serve(Script {
        replies: vec![Reply::Endless(Duration::from_secs(1), delta("more"))],
        down: None,
    })
    .await;
    let outcome = turn(configured(&server, serde_json::json!({"timeout": 10000}))).await;
    let error = outcome.error();
    assert!(
        error.contains("the request to local did not finish within 10 s (timeout)"),
        "{error}"
    );
    assert!(error.contains("provider.local.options.timeout"), "{error}");
    assert_eq!(server.requests(), 1);
    outcome.assert_took_at_most(Duration::from_secs(11));
}

#[tokio::test(start_paused = true)]
async fn a_server_restarting_during_a_backoff_is_waited_for() {
    // The first answer is a 500; the server then refuses connections for
    // 5 s (the first retry, at 2 s, is refused) and answers the next one.
    let server = serve(Script {
        replies: vec![Reply::Status(500, vec![], "restarting"), answer()],
        down: Some((1, Duration::from_secs(5))),
    })
    .await;
    let outcome = turn(client(&server)).await;
    outcome.assert_done("ok");
    assert_eq!(outcome.retries.len(), 2, "{:?}", outcome.retries);
    assert!(
        outcome.retries[1].2.contains("could not connect"),
        "{:?}",
        outcome.retries
    );
    outcome.assert_took_at_most(Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn a_refused_first_connection_fails_at_once() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let model = Arc::new(
        OpenAiCompatible::new("local", "m", format!("http://127.0.0.1:{port}/v1"))
            .with_http_client(agentgate_testing::replay::http_client()),
    );
    let outcome = turn(model).await;
    assert!(
        outcome.error().contains("could not connect"),
        "{}",
        outcome.error()
    );
    assert!(outcome.retries.is_empty());
    outcome.assert_took_at_most(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn every_client_bounds_the_wait_for_headers() {
    let server = serve(Script {
        replies: vec![Reply::Silent],
        down: None,
    })
    .await;
    let host = server.base.trim_end_matches("/v1").to_string();
    let timeouts = Timeouts {
        header: Some(Duration::from_secs(20)),
        ..Timeouts::default()
    };
    let http = agentgate_testing::replay::http_client;
    let clients: Vec<(&str, Arc<dyn LanguageModel>)> = vec![
        (
            "anthropic",
            Arc::new(
                Anthropic::new("claude-sonnet-4-5", "k")
                    .with_base_url(&host)
                    .with_http_client(http())
                    .with_timeouts(timeouts),
            ),
        ),
        (
            "openai",
            Arc::new(
                OpenAiResponses::new("gpt-5", "k")
                    .with_base_url(&server.base)
                    .with_http_client(http())
                    .with_timeouts(timeouts),
            ),
        ),
        (
            "google",
            Arc::new(
                Gemini::new("gemini-2.5-flash", "k")
                    .with_base_url(format!("{host}/v1beta"))
                    .with_http_client(http())
                    .with_timeouts(timeouts),
            ),
        ),
        (
            "local",
            Arc::new(
                OpenAiCompatible::new("local", "m", &server.base)
                    .with_http_client(http())
                    .with_timeouts(timeouts),
            ),
        ),
    ];
    for (provider, model) in clients {
        let outcome = turn(model).await;
        let error = outcome.error();
        assert!(
            error.contains(&format!(
                "no response headers from {provider} within 20 s (headerTimeout); raise \
                 provider.{provider}.options.headerTimeout"
            )),
            "{error}"
        );
        // Retried once, then given up: two waits of 20 s and the 2 s backoff.
        assert_eq!(outcome.retries.len(), 1, "{provider}");
        assert!(outcome.took >= Duration::from_secs(42), "{provider}");
        outcome.assert_took_at_most(Duration::from_secs(43));
    }
    assert_eq!(server.requests(), 8);
}
