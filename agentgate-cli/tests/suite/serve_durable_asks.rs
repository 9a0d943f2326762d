//! Asks that outlive the process (issue 45), on SQLite: `agent serve`
//! reaches a bash ask, is killed with SIGKILL, and is started again on the
//! same database; `GET /permission` still lists the ask, and answering it
//! `once` resumes the turn in the new process: the command runs exactly
//! once, the turn ends with the model's answer, and the transcript holds
//! one assistant message with the call and its output, then the answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use super::run_cli::{Sandbox, openai_answer, openai_call};

async fn serve(sandbox: &Sandbox) -> (tokio::process::Child, String) {
    serve_with(sandbox, &[]).await
}

async fn serve_with(sandbox: &Sandbox, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0"])
        .args(extra)
        .current_dir(&sandbox.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
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
    (child, base)
}

async fn get(url: String) -> Value {
    let response = reqwest::get(&url).await.unwrap();
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

/// Polls `probe` every 100 ms for up to 30 s.
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(found) = probe().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within 30 s");
}

#[tokio::test]
async fn a_bash_ask_survives_kill_9_and_its_answer_runs_the_command_once_in_the_new_process() {
    let sandbox = Sandbox::new("durable-ask");
    let model = MockServer::start().await;
    let command = json!({"command": "echo ran >> counter.txt", "description": "count"});
    for (priority, response) in [openai_call("bash", &command), openai_answer("finished")]
        .into_iter()
        .enumerate()
    {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&model)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        model.uri()
    ));
    let http = reqwest::Client::new();
    let (mut first, base) = serve(&sandbox).await;
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();
    let sent = http
        .post(format!("{base}/session/{id}/prompt_async"))
        .json(&json!({"parts": [{"type": "text", "text": "count once"}]}))
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success(), "{}", sent.status());
    let asked = eventually("the bash ask", || {
        let url = format!("{base}/permission");
        async move {
            let list = get(url).await;
            list.as_array().unwrap().first().cloned()
        }
    })
    .await;
    let ask_id = asked["id"].as_str().unwrap().to_string();
    assert_eq!(asked["permission"], "bash", "{asked:#}");

    // SIGKILL: nothing of the process gets to clean up.
    first.kill().await.unwrap();
    let counter = sandbox.project.join("counter.txt");
    assert!(!counter.exists(), "nothing ran before the answer");

    let (_second, base) = serve(&sandbox).await;
    let listed = get(format!("{base}/permission")).await;
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [ask_id.as_str()],
        "the ask is listed after the restart: {listed:#}"
    );
    let out = sandbox.agent(&["approvals", "pending"], &[]).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && shown.contains(&ask_id) && shown.contains("bash"),
        "{shown}"
    );

    let replied = http
        .post(format!("{base}/permission/{ask_id}/reply"))
        .json(&json!({"reply": "once"}))
        .send()
        .await
        .unwrap();
    assert!(replied.status().is_success(), "{}", replied.status());
    let again = http
        .post(format!("{base}/permission/{ask_id}/reply"))
        .json(&json!({"reply": "once"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.status(),
        404,
        "a second answer finds nothing to resume"
    );

    let messages = eventually("the resumed turn's answer", || {
        let url = format!("{base}/session/{id}/message");
        async move {
            let messages = get(url).await;
            let done = messages.as_array().unwrap().iter().any(|m| {
                m["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["type"] == "text" && p["text"] == "finished")
            });
            done.then_some(messages)
        }
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap(),
        "ran\n",
        "the approved command ran exactly once"
    );
    let assistants: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["info"]["role"] == "assistant")
        .collect();
    assert_eq!(
        assistants.len(),
        2,
        "the call's message, then the answer: {messages:#}"
    );
    let call = assistants[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(call["tool"], "bash");
    assert_eq!(call["state"]["status"], "completed", "{call:#}");
    assert!(
        get(format!("{base}/permission"))
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// A crash while an approved command runs: after the restart nothing is
/// listed (the ask was answered before the command started), the call is
/// marked interrupted when the session is prompted again, the new turn
/// runs, and the command never ran twice.
#[tokio::test]
async fn a_crash_while_an_approved_command_runs_leaves_it_interrupted_and_never_run_twice() {
    let sandbox = Sandbox::new("durable-crash");
    let model = MockServer::start().await;
    let command = json!({"command": "sleep 2 && echo ran >> counter.txt", "description": "slow"});
    for (priority, response) in [
        openai_call("bash", &command),
        openai_answer("after the crash"),
    ]
    .into_iter()
    .enumerate()
    {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&model)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        model.uri()
    ));
    let http = reqwest::Client::new();
    let (mut first, base) = serve(&sandbox).await;
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();
    http.post(format!("{base}/session/{id}/prompt_async"))
        .json(&json!({"parts": [{"type": "text", "text": "run it"}]}))
        .send()
        .await
        .unwrap();
    let asked = eventually("the bash ask", || {
        let url = format!("{base}/permission");
        async move { get(url).await.as_array().unwrap().first().cloned() }
    })
    .await;
    let ask_id = asked["id"].as_str().unwrap().to_string();
    let replied = http
        .post(format!("{base}/permission/{ask_id}/reply"))
        .json(&json!({"reply": "once"}))
        .send()
        .await
        .unwrap();
    assert!(replied.status().is_success());
    // The command is sleeping: kill the server under it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    first.kill().await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let counter = sandbox.project.join("counter.txt");
    let runs_before = std::fs::read_to_string(&counter)
        .unwrap_or_default()
        .lines()
        .count();

    let (_second, base) = serve(&sandbox).await;
    let listed = get(format!("{base}/permission")).await;
    assert!(
        listed.as_array().unwrap().is_empty(),
        "an answered ask is not listed again: {listed:#}"
    );
    let answer: Value = http
        .post(format!("{base}/session/{id}/message"))
        .json(&json!({"parts": [{"type": "text", "text": "go on"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["parts"][1]["text"], "after the crash", "{answer:#}");
    let messages = get(format!("{base}/session/{id}/message")).await;
    let call = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(call["state"]["status"], "error", "{call:#}");
    assert_eq!(call["state"]["metadata"]["interrupted"], true, "{call:#}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let runs = std::fs::read_to_string(&counter)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(
        runs <= 1 && runs == runs_before,
        "the command ran {runs} times"
    );
}

/// `--ask-deadline`: an ask nobody answers is rejected after it, saying
/// why, and the turn ends; nothing runs and nothing stays listed.
#[tokio::test]
async fn an_unanswered_ask_past_its_deadline_ends_the_turn_saying_why() {
    let sandbox = Sandbox::new("ask-deadline");
    let model = MockServer::start().await;
    let command = json!({"command": "echo ran >> counter.txt", "description": "count"});
    for (priority, response) in [openai_call("bash", &command), openai_answer("never")]
        .into_iter()
        .enumerate()
    {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&model)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        model.uri()
    ));
    let (_server, base) = serve_with(&sandbox, &["--ask-deadline", "1"]).await;
    let http = reqwest::Client::new();
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();
    let answer = tokio::time::timeout(
        Duration::from_secs(30),
        http.post(format!("{base}/session/{id}/message"))
            .json(&json!({"parts": [{"type": "text", "text": "count"}]}))
            .send(),
    )
    .await
    .expect("the turn did not end after the deadline")
    .unwrap();
    let status = answer.status();
    let messages = get(format!("{base}/session/{id}/message")).await;
    let call = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .find(|p| p["type"] == "tool")
        .unwrap_or_else(|| panic!("no call ({status}): {messages:#}"));
    assert_eq!(call["state"]["status"], "error", "{call:#}");
    assert!(
        call["state"]["error"]
            .as_str()
            .unwrap()
            .contains("nobody answered within 1 s"),
        "{call:#}"
    );
    assert!(!sandbox.project.join("counter.txt").exists());
    assert!(
        get(format!("{base}/permission"))
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    let text = messages.to_string();
    assert!(
        !text.contains("never"),
        "the turn ended at the expired ask: {text}"
    );
}

/// `agent approvals answer`: an ask of a running server is refused (answer
/// it there); once that server is killed, the CLI claims the ask, resumes
/// the turn in its own process and the command runs once.
#[tokio::test]
async fn the_cli_answers_the_saved_ask_of_a_stopped_server_and_refuses_a_running_ones() {
    let sandbox = Sandbox::new("durable-cli");
    let model = MockServer::start().await;
    let command = json!({"command": "echo ran >> counter.txt", "description": "count"});
    for (priority, response) in [
        openai_call("bash", &command),
        openai_answer("answered here"),
    ]
    .into_iter()
    .enumerate()
    {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&model)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        model.uri()
    ));
    let http = reqwest::Client::new();
    let (mut server, base) = serve(&sandbox).await;
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();
    http.post(format!("{base}/session/{id}/prompt_async"))
        .json(&json!({"parts": [{"type": "text", "text": "count"}]}))
        .send()
        .await
        .unwrap();
    let asked = eventually("the bash ask", || {
        let url = format!("{base}/permission");
        async move { get(url).await.as_array().unwrap().first().cloned() }
    })
    .await;
    let ask_id = asked["id"].as_str().unwrap().to_string();
    let out = sandbox
        .agent(&["approvals", "answer", &ask_id, "once"], &[])
        .await;
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() && said.contains("running `agent serve`"),
        "{said}"
    );

    server.kill().await.unwrap();
    let out = sandbox
        .agent(&["approvals", "answer", &ask_id, "once"], &[])
        .await;
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && shown.contains("answered here"),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("counter.txt")).unwrap(),
        "ran\n"
    );
    let again = sandbox
        .agent(&["approvals", "answer", &ask_id, "once"], &[])
        .await;
    assert!(!again.status.success(), "a second answer finds nothing");
}

/// A turn waiting at an ask is dropped from memory (`--park-asks-after
/// 0`): the client waiting on `POST …/message` is answered the message as
/// stored (its call waiting), and the ask's answer, in the same process,
/// resumes the turn from the store, on the model the prompt chose: the
/// command runs once and the turn ends with the model's answer.
#[tokio::test]
async fn a_turn_parked_at_its_ask_answers_the_waiting_client_and_resumes_when_answered() {
    let sandbox = Sandbox::new("durable-park");
    let model = MockServer::start().await;
    let command = json!({"command": "echo ran >> counter.txt", "description": "count"});
    for (priority, response) in [openai_call("bash", &command), openai_answer("finished")]
        .into_iter()
        .enumerate()
    {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&model)
            .await;
    }
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        model.uri()
    ));
    let http = reqwest::Client::new();
    let (_server, base) = serve_with(&sandbox, &["--park-asks-after", "0"]).await;
    let session: Value = http
        .post(format!("{base}/session"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();

    // The synchronous prompt returns while the ask is still unanswered.
    let answered = tokio::time::timeout(
        Duration::from_secs(30),
        http.post(format!("{base}/session/{id}/message"))
            .json(&json!({
                "parts": [{"type": "text", "text": "count once"}],
                "model": {"providerID": "local", "modelID": "other"},
            }))
            .send(),
    )
    .await
    .expect("the parked turn's request was answered")
    .unwrap();
    assert!(answered.status().is_success(), "{}", answered.status());
    let message: Value = answered.json().await.unwrap();
    let call = message["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool")
        .cloned()
        .unwrap_or_else(|| panic!("the stored message shows the waiting call: {message:#}"));
    assert_eq!(call["tool"], "bash");
    assert_ne!(call["state"]["status"], "completed", "{call:#}");
    let counter = sandbox.project.join("counter.txt");
    assert!(!counter.exists(), "nothing ran before the answer");

    let listed = get(format!("{base}/permission")).await;
    let ask_id = listed[0]["id"].as_str().unwrap().to_string();
    let replied = http
        .post(format!("{base}/permission/{ask_id}/reply"))
        .json(&json!({"reply": "once"}))
        .send()
        .await
        .unwrap();
    assert!(replied.status().is_success(), "{}", replied.status());
    let messages = eventually("the resumed turn's answer", || {
        let url = format!("{base}/session/{id}/message");
        async move {
            let messages = get(url).await;
            let done = messages.as_array().unwrap().iter().any(|m| {
                (m["parts"].as_array().unwrap().iter())
                    .any(|p| p["type"] == "text" && p["text"] == "finished")
            });
            done.then_some(messages)
        }
    })
    .await;
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "ran\n");
    let assistants: Vec<&Value> = (messages.as_array().unwrap().iter())
        .filter(|m| m["info"]["role"] == "assistant")
        .collect();
    assert_eq!(assistants.len(), 2, "{messages:#}");
    let call = (assistants[0]["parts"].as_array().unwrap().iter())
        .find(|p| p["type"] == "tool")
        .unwrap();
    assert_eq!(call["state"]["status"], "completed", "{call:#}");
    // The resumed turn runs on the model its prompt chose, not the session's.
    let requests = model.received_requests().await.unwrap();
    let models: Vec<String> = (requests.iter())
        .filter(|r| r.url.path() == "/v1/chat/completions")
        .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["model"].to_string())
        .collect();
    assert_eq!(models, ["\"other\"", "\"other\""], "{models:?}");
}
