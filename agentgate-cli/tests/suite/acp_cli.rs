//! `agent acp` end to end: the official TypeScript ACP client
//! (`@agentclientprotocol/sdk`, driven by tests/acp/acp_client.mjs) against
//! the binary and a mock model the script serves on loopback — asks
//! answered allow once then reject, streamed chunks, tool calls with a
//! diff, cancel mid-turn, the session loaded in a new process — and the
//! JSON-RPC error of a malformed line, after which the connection is
//! still up.
//!
//! The client test runs when `AGENT_ACP_SDK` names the SDK's package
//! folder (`.ci/run` installs it with npm and sets it) and node is on
//! PATH; it says so and passes otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::run_cli::{Sandbox, text};

pub(super) fn agent_acp(sandbox: &Sandbox) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("AGENT_DEMO_WORD_DELAY_MS", "0")
        .arg("acp")
        .current_dir(&sandbox.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

pub(super) async fn next_message(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("no message within 30 s")
        .unwrap()
        .expect("stdout closed");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
}

#[tokio::test]
async fn a_malformed_message_gets_a_json_rpc_error_and_the_connection_stays_up() {
    let sandbox = Sandbox::new("acp-malformed");
    let mut child = agent_acp(&sandbox);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    stdin.write_all(b"this is not json\n").await.unwrap();
    let error = next_message(&mut lines).await;
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let init = next_message(&mut lines).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);

    // A request without its required params, an unknown method and an
    // unknown session: each answered with an error, in turn.
    let bad = [
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/teleport", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
            "params": {"sessionId": "ses_unknown", "prompt": [{"type": "text", "text": "hi"}]}}),
    ];
    for request in &bad {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut codes = Vec::new();
    for _ in &bad {
        let answer = next_message(&mut lines).await;
        codes.push((answer["id"].clone(), answer["error"]["code"].clone()));
    }
    codes.sort_by_key(|(id, _)| id.as_i64());
    assert_eq!(
        codes,
        [
            (json!(2), json!(-32602)),
            (json!(3), json!(-32601)),
            (json!(4), json!(-32002)),
        ]
    );

    // Closing stdin ends the server, with status 0 and nothing else on stdout.
    drop(stdin);
    let rest = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, None);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn the_official_typescript_client_drives_agent_acp_through_asks_cancel_and_load() {
    let Ok(sdk) = std::env::var("AGENT_ACP_SDK") else {
        eprintln!(
            "acp client test skipped: AGENT_ACP_SDK is unset (.ci/run installs @agentclientprotocol/sdk and sets it)"
        );
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp/acp_client.mjs");
    let sandbox = Sandbox::new("acp-client");
    let out = tokio::process::Command::new("node")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("ACP_SDK", &sdk)
        .arg(script)
        .arg("--project")
        .arg(&sandbox.project)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agent"))
        .arg("acp")
        .current_dir(&sandbox.project)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), out)
        .await
        .expect("the ACP client did not finish within 240 s")
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}\n{stderr}", text(&out.stdout)));
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] != true)
        .collect();
    assert!(failed.is_empty(), "failed checks: {failed:#?}\n{stderr}");
    assert!(out.status.success(), "{report:#}\n{stderr}");
    // Every stage ran: the script records a check per stage, so a check
    // list that stopped early would be short.
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for stage in [
        "commands: review listed after session/new",
        "commands: the model receives the expanded template",
        "edit: a diff",
        "edit: the ask names the call",
        "command: status failed",
        "cancel: stopReason cancelled",
        "cancel during an ask: stopReason cancelled",
        "edit: nothing after the answer",
        "cancel: nothing after the answer",
        "load: the edit's diff replayed",
        "stdout: JSON-RPC only",
    ] {
        assert!(names.contains(&stage), "{stage} missing: {names:?}");
    }
    let kinds = &report["metrics"]["updates_by_kind"];
    for kind in [
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
    ] {
        assert!(kinds[kind].as_u64().unwrap_or(0) >= 1, "no {kind}: {kinds}");
    }
    // The demo notice or other logs went to stderr, never to stdout: the
    // report parsed, and the script saw only JSON-RPC on the agent's stdout.
    eprintln!("acp client report: {}", report["metrics"]);
}

/// A model that runs `rm -f src/a.txt` for a prompt saying "first" and
/// `rm -rf src` for one saying "second", then answers "done".
struct RmModel;

impl wiremock::Respond for RmModel {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return super::run_cli::openai_answer("A title");
        }
        let last = messages.last().cloned().unwrap_or_default();
        if last["role"] == "tool" {
            return super::run_cli::openai_answer("done");
        }
        let command = if last["content"].to_string().contains("first") {
            "rm -f src/a.txt"
        } else {
            "rm -rf src"
        };
        super::run_cli::openai_call(
            "bash",
            &json!({"command": command, "description": "remove"}),
        )
    }
}

/// One JSON-RPC session with `agent acp`: sends requests, answers each
/// `session/request_permission` with `choose(options)` and records it.
struct AcpDriver {
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
    asks: Vec<Value>,
    /// The `session/update` notifications seen, their `update`s in order.
    updates: Vec<Value>,
}

impl AcpDriver {
    /// Sends `method` and waits for its answer, answering asks meanwhile.
    async fn call(
        &mut self,
        method: &str,
        params: Value,
        choose: &dyn Fn(&[Value]) -> String,
    ) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request).await;
        loop {
            let message = next_message(&mut self.lines).await;
            if message["method"] == "session/request_permission" {
                let options = message["params"]["options"].as_array().unwrap().clone();
                let option = choose(&options);
                self.asks.push(message["params"].clone());
                let answer = json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": option}}});
                self.send(&answer).await;
            } else if message["method"] == "session/update" {
                self.updates.push(message["params"]["update"].clone());
            } else if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    async fn send(&mut self, message: &Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
}

/// The option whose name is `name`.
fn named(options: &[Value], name: &str) -> String {
    options
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no option named {name}: {options:?}"))["optionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Runs "first" (answered with the option named `first_choice`) then
/// "second" (rejected if asked); the asks of each prompt.
async fn rm_then_rm_rf(name: &str, first_choice: &'static str) -> (Vec<Value>, Vec<Value>) {
    let sandbox = Sandbox::new(name);
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(sandbox.project.join("src/a.txt"), "a\n").unwrap();
    std::fs::write(sandbox.project.join("src/b.txt"), "b\n").unwrap();
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(RmModel)
        .mount(&server)
        .await;
    super::run_cli::local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let mut child = agent_acp(&sandbox);
    let mut driver = AcpDriver {
        stdin: child.stdin.take().unwrap(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        next_id: 0,
        asks: Vec::new(),
        updates: Vec::new(),
    };
    let reject = |options: &[Value]| named(options, "Reject");
    driver
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            &reject,
        )
        .await;
    let session = driver
        .call(
            "session/new",
            json!({"cwd": sandbox.project, "mcpServers": []}),
            &reject,
        )
        .await;
    let session_id = session["result"]["sessionId"].clone();
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    let first = driver
        .call("session/prompt", prompt("first"), &|options| {
            named(options, first_choice)
        })
        .await;
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert!(!sandbox.project.join("src/a.txt").exists());
    let first_asks = std::mem::take(&mut driver.asks);
    driver
        .call("session/prompt", prompt("second"), &reject)
        .await;
    let second_asks = std::mem::take(&mut driver.asks);
    drop(driver);
    let _ = child.kill().await;
    (first_asks, second_asks)
}

/// The option names of an ask.
fn option_names(ask: &Value) -> Vec<String> {
    ask["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn always_exactly_on_rm_f_asks_again_for_rm_rf_and_always_rm_star_does_not() {
    let (first, second) = rm_then_rm_rf(
        "acp-always-exact",
        r#"Always allow bash exactly "rm -f src/a.txt""#,
    )
    .await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(
        option_names(&first[0]),
        [
            "Allow once",
            r#"Always allow bash "rm *""#,
            r#"Always allow bash exactly "rm -f src/a.txt""#,
            "Reject"
        ]
    );
    assert_eq!(second.len(), 1, "rm -rf src must ask again: {second:?}");
    assert!(
        second[0]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("rm -rf src"),
        "{second:?}"
    );

    // Only the option that names `rm *` lets `rm -rf src` run unasked.
    let (first, second) = rm_then_rm_rf("acp-always-star", r#"Always allow bash "rm *""#).await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(second.is_empty(), "{second:?}");
}

/// Opens a session on a project whose own rule allows `rm *` (set aside
/// while the project is untrusted), answering the trust question with
/// `trust_answer`, then runs "first" (`rm -f src/a.txt`), rejecting any
/// ask: the asks of `session/new` and of the prompt, and whether the
/// file is gone.
async fn trust_then_rm(name: &str, trust_answer: &'static str) -> (Vec<Value>, Vec<Value>, bool) {
    let sandbox = Sandbox::new(name);
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(sandbox.project.join("src/a.txt"), "a\n").unwrap();
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(RmModel)
        .mount(&server)
        .await;
    super::run_cli::local_provider(
        &sandbox,
        &server,
        r#", "permission": {"bash": {"*": "ask", "rm *": "allow"}}"#,
    );
    let mut child = agent_acp(&sandbox);
    let mut driver = AcpDriver {
        stdin: child.stdin.take().unwrap(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        next_id: 0,
        asks: Vec::new(),
        updates: Vec::new(),
    };
    let answer = move |options: &[Value]| {
        let ids: Vec<&str> = options
            .iter()
            .filter_map(|o| o["optionId"].as_str())
            .collect();
        if ids.contains(&"trust") {
            trust_answer.to_string()
        } else {
            named(options, "Reject")
        }
    };
    driver
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            &answer,
        )
        .await;
    let session = driver
        .call(
            "session/new",
            json!({"cwd": sandbox.project, "mcpServers": []}),
            &answer,
        )
        .await;
    let new_asks = std::mem::take(&mut driver.asks);
    let session_id = session["result"]["sessionId"].clone();
    assert!(session_id.is_string(), "{session}");
    let prompt = json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "first"}]});
    driver.call("session/prompt", prompt, &answer).await;
    let prompt_asks = std::mem::take(&mut driver.asks);
    drop(driver);
    let _ = child.kill().await;
    let gone = !sandbox.project.join("src/a.txt").exists();
    (new_asks, prompt_asks, gone)
}

#[tokio::test]
async fn the_editor_is_asked_to_trust_the_project_and_its_answer_decides_its_rules() {
    // Kept untrusted: the project's `rm *` allow is set aside, rm asks.
    let (new_asks, prompt_asks, gone) = trust_then_rm("acp-untrusted", "untrusted").await;
    assert_eq!(new_asks.len(), 1, "{new_asks:?}");
    let title = new_asks[0]["toolCall"]["title"].as_str().unwrap();
    assert!(title.starts_with("Trust the project"), "{title}");
    assert!(
        title.contains("rm *"),
        "the question names the looser rule: {title}"
    );
    assert_eq!(prompt_asks.len(), 1, "rm is asked: {prompt_asks:?}");
    assert!(!gone, "the rejected rm did not run");

    // Trusted: recorded, the session runs on the project's own rules.
    let (new_asks, prompt_asks, gone) = trust_then_rm("acp-trusted", "trust").await;
    assert_eq!(new_asks.len(), 1, "{new_asks:?}");
    assert!(prompt_asks.is_empty(), "rm * is allowed: {prompt_asks:?}");
    assert!(gone, "rm ran");
}

/// The user text of the model requests `server` received (title requests,
/// which offer no tools, left out), last first.
async fn user_texts(server: &wiremock::MockServer) -> Vec<String> {
    let mut texts = Vec::new();
    for request in server.received_requests().await.unwrap_or_default() {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            continue;
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") {
            texts.push(user["content"].to_string());
        }
    }
    texts.reverse();
    texts
}

#[tokio::test]
async fn project_commands_are_listed_and_a_slash_prompt_expands_through_the_editor() {
    let sandbox = Sandbox::new("acp-commands");
    let commands = sandbox.project.join(".opencode/command");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS now. Status: !`echo shell-said-hi`\n",
    )
    .unwrap();
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(super::run_cli::openai_answer("Reviewed."))
        .mount(&server)
        .await;
    super::run_cli::local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let mut child = agent_acp(&sandbox);
    let mut driver = AcpDriver {
        stdin: child.stdin.take().unwrap(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        next_id: 0,
        asks: Vec::new(),
        updates: Vec::new(),
    };
    let allow = |options: &[Value]| named(options, "Allow once");
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    driver.call("initialize", init, &allow).await;
    let new = json!({"cwd": sandbox.project, "mcpServers": []});
    let session = driver.call("session/new", new, &allow).await;
    let session_id = session["result"]["sessionId"].clone();
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});

    let reviewed = driver
        .call("session/prompt", prompt("/review calc.py"), &allow)
        .await;
    assert_eq!(reviewed["result"]["stopReason"], "end_turn", "{reviewed}");
    let listed = driver
        .updates
        .iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .expect("the commands are listed after session/new");
    let offers_compact = listed["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "compact");
    let review = listed["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "review")
        .expect("review is listed");
    assert_eq!(review["description"], "Review a file");
    assert_eq!(review["input"]["hint"], "$ARGUMENTS");
    // The shell line asked the editor, and its output is in the prompt.
    assert_eq!(driver.asks.len(), 1, "{:?}", driver.asks);
    let title = driver.asks[0]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("echo shell-said-hi"), "{title}");
    let sent = user_texts(&server).await;
    assert!(
        sent[0].contains("Review calc.py now. Status: shell-said-hi")
            && !sent[0].contains("/review"),
        "{sent:?}"
    );

    // A /NAME the project does not define is sent as typed.
    let plain = driver
        .call("session/prompt", prompt("/nosuch thing"), &allow)
        .await;
    assert_eq!(plain["result"]["stopReason"], "end_turn", "{plain}");
    let sent = user_texts(&server).await;
    assert!(sent[0].contains("/nosuch thing"), "{sent:?}");

    // The built-in /compact is listed and summarises the older turns.
    assert!(offers_compact, "compact is listed");
    let third = driver.call("session/prompt", prompt("hello"), &allow).await;
    assert_eq!(third["result"]["stopReason"], "end_turn", "{third}");
    let compacted = driver
        .call("session/prompt", prompt("/compact"), &allow)
        .await;
    assert_eq!(compacted["result"]["stopReason"], "end_turn", "{compacted}");
    let sent = user_texts(&server).await;
    assert!(
        sent[0].contains("Write a summary of the conversation"),
        "{sent:?}"
    );
    drop(driver);
    let _ = child.kill().await;
}
