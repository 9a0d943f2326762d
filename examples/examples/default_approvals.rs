//! The README's coding agent and its safe defaults, end to end, as a
//! program that depends on `agentgate` alone.
//!
//! In a project whose `opencode.json` says `"edit": "ask", "bash": "ask"`
//! and names a local OpenAI-compatible server (a loopback one here, which
//! asks for `bash` once and then answers):
//!
//! 1. `CodingAgent::builder(dir).build()` with no approver ends its turn
//!    within a second of the ask, rejected, the command not run;
//! 2. with an approver, the approver is asked — even though an "always"
//!    for `bash *` is remembered for the directory in the `agent` CLI's
//!    store, which the program does not share by default;
//! 3. with `.share_cli_store()` that "always" counts and the approver is
//!    not asked.
//!
//! `cargo test` runs it (no arguments): it runs itself again with `HOME`
//! and `XDG_DATA_HOME` in a scratch folder, so nothing of the real user's
//! data directory is read or written.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agentgate::permission::{Action, ApprovalStore, Approver, PermissionRequest, Reply, Rule};
use agentgate::{CLI_APP, CodingAgent, Event, StopReason, StreamExt, TurnEvent, Workspace};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    if std::env::args().nth(1).as_deref() == Some("--child") {
        let runtime = tokio::runtime::Runtime::new()?;
        return runtime.block_on(child());
    }
    let scratch = std::env::temp_dir().join(format!("default-approvals-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .arg("--child")
        .env("HOME", &scratch)
        .env("XDG_DATA_HOME", scratch.join("data"))
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env_remove("OPENCODE_CONFIG")
        .env_remove("OPENCODE_CONFIG_CONTENT")
        .env_remove("OPENCODE_PERMISSION")
        .status()?;
    let _ = std::fs::remove_dir_all(&scratch);
    if !status.success() {
        return Err(format!("the scenarios failed ({status})").into());
    }
    println!("default_approvals: all three scenarios hold");
    Ok(())
}

async fn child() -> Result<(), Error> {
    let home = PathBuf::from(std::env::var("HOME")?);
    let base_url = serve_model()?;
    let project = home.join("project");
    std::fs::create_dir_all(project.join(".git"))?;
    std::fs::write(
        project.join("opencode.json"),
        format!(
            r#"{{"model": "mock/mock",
                "provider": {{"mock": {{"npm": "@ai-sdk/openai-compatible",
                    "options": {{"baseURL": "{base_url}", "apiKey": "x"}}, "models": {{"mock": {{}}}}}}}},
                "permission": {{"edit": "ask", "bash": "ask"}}}}"#
        ),
    )?;

    // 1. No approver: rejected at once, never a wait.
    let agent = CodingAgent::builder(&project).without_mcp().build().await?;
    let (stop, asked_to_end) = run(&agent).await?;
    assert_eq!(stop, StopReason::Rejected, "the ask is rejected");
    let waited = asked_to_end.ok_or("the bash call was never asked")?;
    assert!(
        waited < Duration::from_secs(1),
        "the turn ended {waited:?} after the ask"
    );
    assert!(!project.join("ran.txt").exists(), "the command did not run");
    println!("1. no approver: rejected {waited:?} after the ask, nothing ran");

    // The `agent` CLI's "always" for every command in this directory.
    let cli_store = agentgate::store::SqliteStore::open(Workspace::database_path(CLI_APP))?;
    cli_store.append(
        &project.display().to_string(),
        &[Rule::new("bash", "*", Action::Allow)],
    )?;

    // 2. An approver of the program's own: asked, the CLI's "always" unseen.
    let approver = Arc::new(Counting::default());
    let agent = CodingAgent::builder(&project)
        .without_mcp()
        .approver(approver.clone())
        .build()
        .await?;
    let (stop, _) = run(&agent).await?;
    assert_eq!(stop, StopReason::Rejected);
    assert_eq!(
        approver.asked.load(Ordering::SeqCst),
        1,
        "the approver was asked"
    );
    println!("2. own data directory: the approver was asked");

    // 3. Opted into the CLI's store: its "always" answers, the approver is not asked.
    let approver = Arc::new(Counting::default());
    let agent = CodingAgent::builder(&project)
        .without_mcp()
        .approver(approver.clone())
        .share_cli_store()
        .build()
        .await?;
    let (stop, _) = run(&agent).await?;
    assert!(matches!(stop, StopReason::Done { .. }), "{stop:?}");
    assert_eq!(
        approver.asked.load(Ordering::SeqCst),
        0,
        "the CLI's always answered"
    );
    assert!(project.join("ran.txt").exists(), "the command ran");
    println!("3. share_cli_store: the CLI's \"always\" answered, the command ran");
    Ok(())
}

/// Streams one turn: how it stopped, and how long after the first ask.
async fn run(agent: &CodingAgent) -> Result<(StopReason, Option<Duration>), Error> {
    let mut turn = Box::pin(agent.stream("Create ran.txt."));
    let mut asked = None;
    while let Some(item) = turn.next().await {
        match item {
            TurnEvent::Event(Event::PermissionAsked { .. }) => {
                asked.get_or_insert_with(Instant::now);
            }
            TurnEvent::Finished(result) => {
                let stop = result?.stop;
                return Ok((stop, asked.map(|at| at.elapsed())));
            }
            _ => {}
        }
    }
    Err("the stream ended without a result".into())
}

/// Rejects every ask, counting them.
#[derive(Default)]
struct Counting {
    asked: AtomicUsize,
}

#[agentgate::async_trait]
impl Approver for Counting {
    async fn approve(&self, _request: &PermissionRequest) -> Reply {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Reply::reject()
    }
}

/// A loopback OpenAI-compatible server: a request without a tool result is
/// answered with a `bash` call, one with a result with a short text. Its
/// base URL.
fn serve_model() -> Result<String, Error> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = answer(stream);
            });
        }
    });
    Ok(url)
}

fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let body = String::from_utf8_lossy(&body);
        let events: &[&str] = if body.contains(r#""role":"tool""#) {
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}"#,
            ]
        } else {
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"echo hi > ran.txt\",\"description\":\"Create ran.txt\"}"}}]},"finish_reason":"tool_calls"}]}"#,
            ]
        };
        let mut sse = String::new();
        for event in events {
            sse.push_str(&format!("data: {event}\n\n"));
        }
        sse.push_str("data: [DONE]\n\n");
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}",
            sse.len()
        );
        stream.write_all(response.as_bytes())?;
    }
}
