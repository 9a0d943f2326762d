//! The audit log end to end (issue 46): one bash ask answered in each way
//! the CLI offers — at the terminal of `agent chat`, by `agent run --auto`,
//! by the editor of an `agent acp` connection, over HTTP to `agent serve`
//! — each run in its own home and config directories but all on one data
//! directory, so they append to one hash chain in one SQLite file.
//! `agent audit --verify` passes and the log names who answered each ask;
//! after one row's entry is edited in the database, `agent audit --verify`
//! and the server's `GET /audit?verify=true` both name that row.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::acp_cli::next_message;
use super::run_cli::{Sandbox, openai_answer, openai_call, text};

/// A model that runs `echo ran >> ran.txt` for every user message, then
/// answers "done" once the command's result is back; a request offering
/// no tools (a title) gets a title.
pub(super) struct BashModel;

impl Respond for BashModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return openai_answer("A title");
        }
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
            .unwrap_or_default();
        if last["role"] == "tool" {
            return openai_answer("done");
        }
        openai_call(
            "bash",
            &json!({"command": "echo ran >> ran.txt", "description": "Record a run"}),
        )
    }
}

/// `agent ARGS` in the project: its own home and config directories
/// (named after `run`), the data directory every run shares.
fn agent(sandbox: &Sandbox, run: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join(format!("home-{run}")))
        .env(
            "XDG_CONFIG_HOME",
            sandbox.root.join(format!("config-{run}")),
        )
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .args(args)
        .current_dir(&sandbox.project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

async fn output(mut cmd: tokio::process::Command) -> Output {
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("agent did not finish within 120 s")
        .unwrap();
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    out
}

/// `agent chat`, the ask answered `o` (once) on piped stdin.
async fn answered_in_chat(sandbox: &Sandbox) {
    let mut cmd = agent(sandbox, "chat", &["chat"]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"record a run\no\n/exit\n").await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("agent chat did not finish within 120 s")
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[o] once"), "the ask was shown: {stderr}");
    assert!(text(&out.stdout).contains("done"), "{}", text(&out.stdout));
}

/// `agent run --auto`: the ask answered by `--auto`.
async fn answered_by_auto(sandbox: &Sandbox) {
    let out = output(agent(sandbox, "auto", &["run", "--auto", "record a run"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "done", "{}", text(&out.stderr));
}

/// Sends a JSON-RPC request to `agent acp` and waits for its answer,
/// answering every permission request "Allow once"; how many were asked.
async fn acp_call(
    stdin: &mut tokio::process::ChildStdin,
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: u64,
    method: &str,
    params: Value,
) -> (Value, usize) {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    stdin
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut asked = 0;
    loop {
        let message = next_message(lines).await;
        if message["method"] == "session/request_permission" {
            asked += 1;
            let options = message["params"]["options"].as_array().unwrap();
            let once = options
                .iter()
                .find(|o| o["name"] == "Allow once")
                .unwrap_or_else(|| panic!("no Allow once: {options:?}"));
            let answer = json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": once["optionId"]}}});
            stdin
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
        } else if message["id"] == id && message.get("method").is_none() {
            return (message, asked);
        }
    }
}

/// `agent acp`: the editor (this test) answers the ask "Allow once".
async fn answered_over_acp(sandbox: &Sandbox) {
    let mut cmd = agent(sandbox, "acp", &["acp"]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"protocolVersion": 1, "clientCapabilities": {},
        "clientInfo": {"name": "audit-e2e", "version": "1.0.0"}});
    acp_call(&mut stdin, &mut lines, 1, "initialize", init).await;
    let new = json!({"cwd": sandbox.project, "mcpServers": []});
    let (session, _) = acp_call(&mut stdin, &mut lines, 2, "session/new", new).await;
    let prompt = json!({"sessionId": session["result"]["sessionId"],
        "prompt": [{"type": "text", "text": "record a run"}]});
    let (done, asked) = acp_call(&mut stdin, &mut lines, 3, "session/prompt", prompt).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(asked, 1, "one ask over ACP");
    drop(stdin);
    let _ = child.kill().await;
}

/// A running `agent serve` and its base URL.
struct Served {
    _child: tokio::process::Child,
    base: String,
}

async fn serve(sandbox: &Sandbox) -> Served {
    let mut cmd = agent(sandbox, "http", &["serve", "--port", "0"]);
    cmd.stderr(Stdio::inherit());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("agent serve printed no URL within 60 s")
        .unwrap()
        .expect("agent serve exited before listening");
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    Served {
        _child: child,
        base,
    }
}

/// Polls `GET url` every 100 ms for up to 30 s until `found` picks a value.
async fn eventually(url: &str, found: impl Fn(&Value) -> Option<Value>) -> Value {
    for _ in 0..300 {
        let got: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
        if let Some(value) = found(&got) {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("GET {url}: not as expected within 30 s");
}

/// `agent serve`: the ask answered by `POST /permission/{id}/reply`; the
/// server is left running.
async fn answered_over_http(sandbox: &Sandbox) -> Served {
    let served = serve(sandbox).await;
    let http = reqwest::Client::new();
    let base = &served.base;
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap();
    let sent = http
        .post(format!("{base}/session/{id}/prompt_async"))
        .json(&json!({"parts": [{"type": "text", "text": "record a run"}]}))
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success(), "{}", sent.status());
    let ask = eventually(&format!("{base}/permission"), |list| {
        list.as_array()?.first().cloned()
    })
    .await;
    let ask_id = ask["id"].as_str().unwrap();
    let replied = http
        .post(format!("{base}/permission/{ask_id}/reply"))
        .json(&json!({"reply": "once"}))
        .send()
        .await
        .unwrap();
    assert!(replied.status().is_success(), "{}", replied.status());
    eventually(&format!("{base}/session/{id}/message"), |messages| {
        let done = messages.as_array()?.iter().any(|m| {
            m["parts"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p["text"] == "done"))
        });
        done.then_some(Value::Null)
    })
    .await;
    served
}

/// `agent audit ARGS` on the shared data directory.
async fn audit(sandbox: &Sandbox, args: &[&str]) -> Output {
    let mut all = vec!["audit"];
    all.extend_from_slice(args);
    output(agent(sandbox, "audit", &all)).await
}

fn database(sandbox: &Sandbox) -> PathBuf {
    sandbox.root.join("data/agent-sdk/agentgate.db")
}

/// The `answered` entries of `agent audit --json`: (seq, who answered).
async fn answers(sandbox: &Sandbox) -> Vec<(i64, Value)> {
    let out = audit(sandbox, &["--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["kind"] == "answered")
        .map(|record| {
            let seq = record["seq"].as_i64().unwrap();
            (seq, record["entry"]["answered_by"].clone())
        })
        .collect()
}

#[tokio::test]
async fn verify_passes_on_asks_answered_four_ways_and_names_an_edited_row() {
    let sandbox = Sandbox::new("audit-e2e");
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(BashModel)
        .mount(&model)
        .await;
    super::run_cli::local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);

    answered_in_chat(&sandbox).await;
    answered_by_auto(&sandbox).await;
    answered_over_acp(&sandbox).await;
    let served = answered_over_http(&sandbox).await;
    let ran = std::fs::read_to_string(sandbox.project.join("ran.txt")).unwrap();
    assert_eq!(ran.lines().count(), 4, "each approved command ran: {ran}");

    // One chain: every answer is in it, each naming who gave it.
    let answered = answers(&sandbox).await;
    let by: Vec<&str> = answered
        .iter()
        .map(|(_, by)| by["by"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["terminal", "auto", "acp", "http"], "{answered:?}");
    let remote = answered[3].1["remote"].as_str().unwrap_or_default();
    assert!(remote.starts_with("127.0.0.1:"), "{answered:?}");
    let listed = text(&audit(&sandbox, &[]).await.stdout);
    for who in ["by terminal", "by auto", "by acp", "by http 127.0.0.1:"] {
        assert!(listed.contains(who), "no {who:?} in:\n{listed}");
    }
    let asked = listed.lines().filter(|l| l.contains(" asked ")).count();
    assert_eq!(asked, 4, "four asks:\n{listed}");

    let out = audit(&sandbox, &["--verify"]).await;
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}{}", text(&out.stderr));
    assert!(shown.starts_with("audit log intact: "), "{shown}");
    let verdict = eventually(&format!("{}/audit?verify=true", served.base), |v| {
        Some(v.clone())
    })
    .await;
    assert_eq!(verdict["broken"], Value::Null, "{verdict}");
    assert!(verdict["entries"].as_i64().unwrap() >= 8, "{verdict}");

    // One row edited in the database: the ACP answer becomes "always".
    let seq = answered[2].0;
    let db = rusqlite::Connection::open(database(&sandbox)).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    let changed = db
        .execute(
            "UPDATE audit SET entry = replace(entry, '\"once\"', '\"always\"') WHERE seq = ?1",
            [seq],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);

    let out = audit(&sandbox, &["--verify"]).await;
    let shown = text(&out.stdout);
    assert!(!out.status.success(), "an edited row fails: {shown}");
    assert!(
        shown.contains(&format!("audit entry {seq} was altered")),
        "the edited entry is named: {shown}"
    );
    let verdict: Value = reqwest::get(format!("{}/audit?verify=true", served.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        verdict["broken"],
        json!({"problem": "altered", "seq": seq}),
        "{verdict}"
    );
}
