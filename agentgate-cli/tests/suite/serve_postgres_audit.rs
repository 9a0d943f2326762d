//! The audit log on PostgreSQL (`agent serve --database`): two servers on
//! one database each run a turn whose bash ask is answered through the
//! other server, both turns at once; every decision of both lands in one
//! hash chain, without a gap or a fork, and `GET /audit?verify=true`
//! finds it intact from either server.
//!
//! Runs when `AGENTGATE_TEST_POSTGRES` names a database (`.ci/run` starts
//! a throwaway PostgreSQL server and sets it); says so and passes
//! otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use super::audit_e2e::BashModel;
use super::run_cli::{Sandbox, local_provider};
use super::serve_postgres::{eventually, get, post, serve};

/// Creates a session on `base` and prompts it; its id.
async fn prompted(base: &str) -> String {
    let created = post(format!("{base}/session"), json!({})).await;
    assert!(created.status().is_success(), "{}", created.status());
    let session = created.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let sent = post(
        format!("{base}/session/{session}/prompt_async"),
        json!({"parts": [{"type": "text", "text": "record a run"}]}),
    )
    .await;
    assert!(sent.status().is_success(), "{}", sent.status());
    session
}

/// The id of `session`'s pending ask, as `base` lists it.
async fn ask_of(base: &str, session: &str) -> String {
    eventually("the ask listed", || {
        let url = format!("{base}/permission");
        async move {
            get(url)
                .await
                .as_array()?
                .iter()
                .find(|a| a["sessionID"] == session)
                .and_then(|a| a["id"].as_str().map(str::to_string))
        }
    })
    .await
}

#[tokio::test]
async fn two_servers_on_one_postgres_database_append_to_one_verified_audit_chain() {
    let Ok(database) = std::env::var("AGENTGATE_TEST_POSTGRES") else {
        eprintln!(
            "PostgreSQL audit test skipped: AGENTGATE_TEST_POSTGRES is unset (.ci/run starts a PostgreSQL server and sets it)"
        );
        return;
    };
    let sandbox = Sandbox::new("serve-postgres-audit");
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(BashModel)
        .mount(&model)
        .await;
    local_provider(&sandbox, &model, r#", "permission": {"bash": "ask"}"#);
    let schema = format!("serve_audit_{}", std::process::id());
    let one = serve(&sandbox, &database, &schema).await;
    let two = serve(&sandbox, &database, &schema).await;

    // Both turns run at once, each asks in its own server…
    let (first, second) = tokio::join!(prompted(&one.base), prompted(&two.base));
    // …and each ask is answered through the other server.
    let (first_ask, second_ask) =
        tokio::join!(ask_of(&two.base, &first), ask_of(&one.base, &second));
    let (a, b) = tokio::join!(
        post(
            format!("{}/permission/{first_ask}/reply", two.base),
            json!({"reply": "once"}),
        ),
        post(
            format!("{}/permission/{second_ask}/reply", one.base),
            json!({"reply": "once"}),
        )
    );
    let (sa, sb) = (a.status(), b.status());
    let (ta, tb) = (
        a.text().await.unwrap_or_default(),
        b.text().await.unwrap_or_default(),
    );
    assert!(sa.is_success() && sb.is_success(), "{sa} {ta} / {sb} {tb}");
    let ran = sandbox.project.join("ran.txt");
    eventually("both commands run", || {
        let lines = std::fs::read_to_string(&ran)
            .unwrap_or_default()
            .lines()
            .count();
        async move { (lines == 2).then_some(()) }
    })
    .await;

    // Both asks and both answers are in the one chain.
    let entries = eventually("both answers in the audit log", || {
        let url = format!("{}/audit", one.base);
        async move {
            let entries = get(url).await;
            let answered = entries
                .as_array()?
                .iter()
                .filter(|e| e["kind"] == "answered")
                .count();
            (answered >= 2).then_some(entries)
        }
    })
    .await;
    let entries = entries.as_array().unwrap();
    let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (1..=seqs.len() as i64).collect();
    assert_eq!(seqs, expected, "one chain without gaps");
    for session in [&first, &second] {
        let asked = entries
            .iter()
            .filter(|e| e["kind"] == "asked" && e["session_id"] == session.as_str())
            .count();
        assert_eq!(asked, 1, "{session}: {entries:#?}");
    }
    for served in [&one, &two] {
        let verdict = get(format!("{}/audit?verify=true", served.base)).await;
        assert_eq!(verdict["broken"], Value::Null, "{verdict}");
        assert!(
            verdict["entries"].as_i64().unwrap() >= seqs.len() as i64,
            "{verdict}"
        );
    }
}
