//! Two `agent serve` processes on one PostgreSQL database
//! (`--database`): a session created through one is prompted through the
//! other, the ask its turn raises in that process is listed by the first
//! and answered there, and the answer reaches the waiting turn (through
//! the database's LISTEN/NOTIFY relay); nothing runs before the answer.
//!
//! Runs when `AGENTGATE_TEST_POSTGRES` names a database (`.ci/run` starts
//! a throwaway PostgreSQL server and sets it); says so and passes
//! otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::run_cli::{Sandbox, local_provider, openai_answer, openai_call, openai_server};

/// A running `agent serve` and its base URL.
pub(super) struct Served {
    _child: tokio::process::Child,
    pub(super) base: String,
}

pub(super) async fn serve(sandbox: &Sandbox, database: &str, schema: &str) -> Served {
    serve_with(sandbox, database, schema, &[]).await
}

async fn serve_with(sandbox: &Sandbox, database: &str, schema: &str, extra: &[&str]) -> Served {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0", "--database", database])
        .args(["--database-schema", schema])
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
    Served {
        _child: child,
        base,
    }
}

pub(super) async fn get(url: String) -> Value {
    let response = reqwest::get(&url).await.unwrap();
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

pub(super) async fn post(url: String, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(&url)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Creates a session through `base`; its id.
async fn create_session(base: &str) -> String {
    let created = post(format!("{base}/session"), json!({})).await;
    assert!(created.status().is_success(), "{}", created.status());
    created.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Prompts `session` through `base` with `text`, without waiting for the turn.
async fn prompt_async(base: &str, session: &str, text: &str) {
    let prompted = post(
        format!("{base}/session/{session}/prompt_async"),
        json!({"parts": [{"type": "text", "text": text}]}),
    )
    .await;
    assert!(prompted.status().is_success(), "{}", prompted.status());
}

/// Polls `probe` every 100 ms for up to 30 s.
pub(super) async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
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
async fn a_session_and_its_ask_cross_two_servers_on_one_postgres_database() {
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!(
            "two-server PostgreSQL test skipped: AGENTGATE_TEST_POSTGRES is unset (.ci/run starts a PostgreSQL server and sets it)"
        );
        return;
    };
    let sandbox = Sandbox::new("serve-postgres");
    let marker = sandbox.project.join("marker.txt");
    let model = openai_server(
        openai_call(
            "bash",
            &json!({"command": format!("touch {}", marker.display()), "description": "Create a marker"}),
        ),
        openai_answer("The marker is there."),
    )
    .await;
    local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);
    let schema = format!("serve_two_{}", std::process::id());
    let one = serve(&sandbox, &database, &schema).await;
    let two = serve(&sandbox, &database, &schema).await;

    // Created through the first server…
    let session = create_session(&one.base).await;
    // …prompted through the second, whose agent is built from the shared
    // store.
    prompt_async(&two.base, &session, "make the marker").await;

    // The ask raised by the second server's turn is listed by the first.
    let ask = eventually("the ask listed by the other server", || {
        let url = format!("{}/permission", one.base);
        let session = session.clone();
        async move {
            get(url)
                .await
                .as_array()?
                .iter()
                .find(|a| a["sessionID"] == session.as_str())
                .cloned()
        }
    })
    .await;
    assert_eq!(ask["permission"], "bash");
    assert!(
        !marker.exists(),
        "the command ran before its ask was answered"
    );

    // Answered through the first server, it reaches the second's turn.
    let id = ask["id"].as_str().unwrap();
    let replied = post(
        format!("{}/permission/{id}/reply", one.base),
        json!({"reply": "once"}),
    )
    .await;
    assert!(replied.status().is_success(), "{}", replied.status());
    eventually("the command run after the answer", || {
        let exists = marker.exists();
        async move { exists.then_some(()) }
    })
    .await;

    // The transcript is one: both servers read the same messages.
    let answer = eventually("the answer stored", || {
        let url = format!("{}/session/{session}/message", one.base);
        async move {
            let messages = get(url).await;
            let text: String = messages
                .as_array()?
                .iter()
                .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str().map(str::to_string))
                .collect();
            text.contains("The marker is there.").then_some(text)
        }
    })
    .await;
    assert!(answer.contains("make the marker"), "{answer}");
    let from_two = get(format!("{}/session/{session}/message", two.base)).await;
    let from_one = get(format!("{}/session/{session}/message", one.base)).await;
    assert_eq!(
        from_one.as_array().unwrap().len(),
        from_two.as_array().unwrap().len()
    );
    // Nothing is left pending anywhere.
    for base in [&one.base, &two.base] {
        let pending = get(format!("{base}/permission")).await;
        assert!(pending.as_array().unwrap().is_empty(), "{pending}");
    }
}

/// Issue 45 on PostgreSQL: the first server is killed while its ask
/// pends; once it has gone quiet, the answer sent to the second server
/// resumes the turn there and the command runs exactly once.
#[tokio::test]
async fn an_ask_of_a_killed_server_is_answered_through_another_and_runs_once() {
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!("orphaned-ask PostgreSQL test skipped: AGENTGATE_TEST_POSTGRES is unset");
        return;
    };
    let sandbox = Sandbox::new("serve-postgres-orphan");
    let counter = sandbox.project.join("counter.txt");
    let model = openai_server(
        openai_call(
            "bash",
            &json!({"command": format!("echo ran >> {}", counter.display()), "description": "Count"}),
        ),
        openai_answer("Counted."),
    )
    .await;
    local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);
    let schema = format!("serve_orphan_{}", std::process::id());
    let mut one = serve(&sandbox, &database, &schema).await;
    let two = serve(&sandbox, &database, &schema).await;
    let session = create_session(&one.base).await;
    prompt_async(&one.base, &session, "count").await;
    let ask = eventually("the ask listed by the second server", || {
        let url = format!("{}/permission", two.base);
        async move { get(url).await.as_array()?.first().cloned() }
    })
    .await;
    let id = ask["id"].as_str().unwrap().to_string();
    one._child.kill().await.unwrap();
    // Past the time a relay may stay quiet, the first server is gone.
    tokio::time::sleep(agentgate::store::OWNER_GONE_AFTER + Duration::from_secs(1)).await;
    let replied = post(
        format!("{}/permission/{id}/reply", two.base),
        json!({"reply": "once"}),
    )
    .await;
    assert!(replied.status().is_success(), "{}", replied.status());
    let again = post(
        format!("{}/permission/{id}/reply", two.base),
        json!({"reply": "once"}),
    )
    .await;
    assert_eq!(
        again.status(),
        404,
        "a second answer finds nothing to resume"
    );
    eventually("the resumed turn's answer", || {
        let url = format!("{}/session/{session}/message", two.base);
        async move {
            let text = get(url).await.to_string();
            text.contains("Counted.").then_some(())
        }
    })
    .await;
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "ran\n");
}

/// A turn parked at its ask by a live server (`--park-asks-after 0`) is
/// resumed by the server the answer reaches, at once (the parked ask names
/// no owner), and its command runs once.
#[tokio::test]
async fn an_ask_parked_by_a_live_server_is_resumed_by_the_server_that_gets_its_answer() {
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!("parked-ask PostgreSQL test skipped: AGENTGATE_TEST_POSTGRES is unset");
        return;
    };
    let sandbox = Sandbox::new("serve-postgres-park");
    let counter = sandbox.project.join("counter.txt");
    let model = openai_server(
        openai_call(
            "bash",
            &json!({"command": format!("echo ran >> {}", counter.display()), "description": "Count"}),
        ),
        openai_answer("Counted."),
    )
    .await;
    local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);
    let schema = format!("serve_park_{}", std::process::id());
    let one = serve_with(&sandbox, &database, &schema, &["--park-asks-after", "0"]).await;
    let two = serve(&sandbox, &database, &schema).await;
    let session = create_session(&one.base).await;
    // Answered once the turn is parked, its ask unanswered.
    let parked = tokio::time::timeout(
        Duration::from_secs(30),
        post(
            format!("{}/session/{session}/message", one.base),
            json!({"parts": [{"type": "text", "text": "count"}]}),
        ),
    )
    .await
    .expect("the parked turn's request was answered");
    assert!(parked.status().is_success(), "{}", parked.status());
    let ask = get(format!("{}/permission", two.base)).await;
    let id = ask[0]["id"].as_str().unwrap().to_string();
    let replied = post(
        format!("{}/permission/{id}/reply", two.base),
        json!({"reply": "once"}),
    )
    .await;
    assert!(replied.status().is_success(), "{}", replied.status());
    eventually("the resumed turn's answer", || {
        let url = format!("{}/session/{session}/message", one.base);
        async move {
            let text = get(url).await.to_string();
            text.contains("Counted.").then_some(())
        }
    })
    .await;
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "ran\n");
    assert!(get(format!("{}/permission", one.base)).await[0].is_null());
}

/// Claims race: of two relays claiming the same ask at once, exactly one
/// gets it, in every one of 100 rounds.
#[tokio::test]
async fn two_relays_claiming_one_ask_at_once_never_both_win() {
    use agentgate::store::{AskRelay, PostgresOptions, PostgresRelay};
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!("claim race PostgreSQL test skipped: AGENTGATE_TEST_POSTGRES is unset");
        return;
    };
    let schema = format!("claim_race_{}", std::process::id());
    let options = PostgresOptions::new(database).schema(schema);
    // The store migrates the schema; the relays share it.
    let _store = agentgate::store::PostgresStore::connect(options.clone())
        .await
        .unwrap();
    let owner = PostgresRelay::connect(options.clone()).await.unwrap();
    let (a, b) = (
        PostgresRelay::connect(options.clone()).await.unwrap(),
        PostgresRelay::connect(options).await.unwrap(),
    );
    for round in 0..100 {
        let request: agentgate::permission::PermissionRequest = serde_json::from_value(json!({
            "id": format!("per_race_{round}"), "session_id": "ses_race", "permission": "bash",
            "patterns": ["echo"], "always": [], "metadata": {},
        }))
        .unwrap();
        owner.publish(&request).await.unwrap();
        let (x, y) = tokio::join!(a.claim(&request.id), b.claim(&request.id));
        let won = [x.unwrap(), y.unwrap()]
            .iter()
            .filter(|c| c.is_some())
            .count();
        assert_eq!(won, 1, "round {round}");
    }
}

/// A model that calls bash `rounds` times, each a different command that
/// appends its round's number to `counter`, then answers "Counted.".
struct CountingModel {
    rounds: usize,
    counter: std::path::PathBuf,
    served: std::sync::atomic::AtomicUsize,
}

impl wiremock::Respond for CountingModel {
    fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
        let n = self
            .served
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n >= self.rounds {
            return super::run_cli::openai_answer("Counted.");
        }
        let args = json!({
            "command": format!("echo {n} >> {}", self.counter.display()),
            "description": format!("Count {n}"),
        });
        let call = json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[
            {"index":0,"id":format!("call_{n}"),"type":"function","function":{"name":"bash","arguments":args.to_string()}}]}}]});
        super::run_cli::sse(&[
            format!("data: {call}"),
            r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into(),
            "data: [DONE]".into(),
        ])
    }
}

/// Issue 45's race, between real servers: two `agent serve` processes on
/// one database both park every ask at once (`--park-asks-after 0`), and
/// each of 100 asks of one turn is answered through both servers at the
/// same moment, whether the ask is still held in memory, being parked, or
/// parked. Every answer is taken by one server (none is lost), every
/// command runs exactly once, in order, the turn ends with its answer, and
/// no ask is ever listed that nobody can answer (a resumed call's own ask).
#[tokio::test]
async fn an_ask_answered_through_two_servers_at_once_runs_once_in_100_rounds() {
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!("two-server race PostgreSQL test skipped: AGENTGATE_TEST_POSTGRES is unset");
        return;
    };
    const ROUNDS: usize = 100;
    let sandbox = Sandbox::new("serve-postgres-race");
    let counter = sandbox.project.join("counter.txt");
    let model = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(CountingModel {
            rounds: ROUNDS,
            counter: counter.clone(),
            served: Default::default(),
        })
        .mount(&model)
        .await;
    local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);
    let schema = format!("serve_race_{}", std::process::id());
    let park = ["--park-asks-after", "0"];
    let one = serve_with(&sandbox, &database, &schema, &park).await;
    let two = serve_with(&sandbox, &database, &schema, &park).await;
    let session = create_session(&one.base).await;
    prompt_async(&one.base, &session, "count").await;

    let mut answered = std::collections::HashSet::new();
    for round in 0..ROUNDS {
        let id = eventually(&format!("round {round}'s ask"), || {
            let url = format!("{}/permission", one.base);
            let answered = answered.clone();
            async move {
                get(url)
                    .await
                    .as_array()?
                    .iter()
                    .filter_map(|a| a["id"].as_str().map(str::to_string))
                    .find(|id| !answered.contains(id))
            }
        })
        .await;
        answered.insert(id.clone());
        let reply = json!({"reply": "once"});
        let (a, b) = tokio::join!(
            post(format!("{}/permission/{id}/reply", one.base), reply.clone()),
            post(format!("{}/permission/{id}/reply", two.base), reply),
        );
        assert!(
            a.status().is_success() || b.status().is_success(),
            "round {round}: neither server took the answer ({}, {})",
            a.status(),
            b.status()
        );
    }
    eventually("the turn's answer", || {
        let url = format!("{}/session/{session}/message", two.base);
        async move {
            let text = get(url).await.to_string();
            text.contains("Counted.").then_some(())
        }
    })
    .await;
    let expected: String = (0..ROUNDS).map(|n| format!("{n}\n")).collect();
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap(),
        expected,
        "every approved command ran exactly once, in order"
    );
    for base in [&one.base, &two.base] {
        let pending = get(format!("{base}/permission")).await;
        assert!(pending.as_array().unwrap().is_empty(), "{pending}");
    }
}
