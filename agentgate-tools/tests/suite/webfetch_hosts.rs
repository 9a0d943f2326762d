//! webfetch judges the host as the network stack reaches it: every
//! spelling of 127.0.0.1 — IPv4-mapped and IPv4-compatible
//! IPv6, `0.0.0.0` and `0`, shorthand, decimal, octal and hex numbers,
//! percent-encoding, a trailing dot, user info, upper case, `localhost` —
//! is denied by one rule for `http://127.0.0.1*`, directly and through a
//! redirect, and the fetch connects to the address that was judged. The
//! servers are wiremock on loopback; the approver allows everything, so
//! only the rule can stop a request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{
    PermissionConfig, PermissionGate, PermissionRequest, Reply, Ruleset, from_config_with_home,
};
use agentgate_testing::RecordingApprover;
use agentgate_tools::WebFetchTool;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "s3cr3t-value-4711";

fn context(config: &Value) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let config = PermissionConfig::from_value(config, "permission").unwrap();
    let rules: Ruleset = from_config_with_home(&config, "/home/u");
    let permissions = PermissionGate::new();
    // Allows every request it is asked, and records it.
    let seen = RecordingApprover::replying(Reply::Once).install(&permissions);
    let ctx =
        ToolContext::new("ses_1", "msg_1", "call_1", permissions).with_ruleset(Arc::new(rules));
    (ctx, seen)
}

/// A server whose `/secret` must never be requested.
async fn secret_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/secret"))
        .respond_with(ResponseTemplate::new(200).set_body_string(SECRET))
        .expect(0)
        .mount(&server)
        .await;
    server
}

/// Hosts (with `port`) that all reach 127.0.0.1.
fn spellings(port: u16) -> Vec<String> {
    [
        "127.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:FFFF:7F00:0001]",
        "[::127.0.0.1]",
        "0.0.0.0",
        "0",
        "127.1",
        "2130706433",
        "0x7f.1",
        "0X7F000001",
        "017700000001",
        "0177.0.0.01",
        "%31%32%37.0.0.1",
        "127.0.0.1.",
        "evil@127.0.0.1",
        "evil:pw@0.0.0.0",
        "localhost",
        "LocalHost.",
    ]
    .iter()
    .map(|host| format!("{host}:{port}"))
    .collect()
}

#[tokio::test]
async fn every_spelling_of_a_denied_address_is_denied_and_never_requested() {
    let server = secret_server().await;
    let port = server.address().port();
    let (ctx, seen) = context(&json!({"webfetch": {"*": "allow", "http://127.0.0.1*": "deny"}}));
    let tool = WebFetchTool::new().unwrap();
    for host in spellings(port) {
        let url = format!("http://{host}/secret");
        let result = tool.execute(json!({"url": url}), &ctx).await;
        let error = result.expect_err(&url).to_string();
        assert!(!error.contains(SECRET), "{url}: {error}");
    }
    // Other loopback addresses stand for 127.0.0.1 too (a service on
    // every address answers there).
    for url in [
        format!("http://127.0.0.2:{port}/secret"),
        format!("http://[::1]:{port}/secret"),
        format!("http://[::]:{port}/secret"),
        format!("http://x.localhost:{port}/secret"),
    ] {
        let result = tool.execute(json!({"url": url}), &ctx).await;
        assert!(result.is_err(), "{url}");
    }
    // Denied by the rule, not asked and not left to fail on connecting.
    assert!(seen.lock().unwrap().is_empty());
    server.verify().await;
}

#[tokio::test]
async fn the_fetch_connects_to_the_address_judged() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(ResponseTemplate::new(200).set_body_string("hello"))
        .mount(&server)
        .await;
    let port = server.address().port();
    let (ctx, _) = context(&json!({"webfetch": "allow"}));
    let tool = WebFetchTool::new().unwrap();
    // `localhost` may resolve to ::1 first, where wiremock does not listen:
    // it is judged as both addresses, but connects by name.
    for host in spellings(port)
        .into_iter()
        .filter(|h| !h.to_lowercase().starts_with("localhost"))
    {
        let url = format!("http://{host}/page");
        let out = tool.execute(json!({"url": url}), &ctx).await.expect(&url);
        assert_eq!(out.output, "hello", "{url}");
        // `[::127.0.0.1]` has no route of its own: it reached the server
        // because the fetch used the canonical address.
        assert_eq!(
            out.metadata["finalUrl"],
            format!("http://127.0.0.1:{port}/page"),
            "{url}"
        );
    }
}

#[tokio::test]
async fn every_redirect_hop_is_judged_in_canonical_form() {
    let secret = secret_server().await;
    let secret_port = secret.address().port();
    let start = MockServer::start().await;
    let mut locations: Vec<String> = spellings(secret_port)
        .iter()
        .map(|host| format!("http://{host}/secret"))
        .collect();
    locations.push(format!("//[::ffff:7f00:1]:{secret_port}/secret"));
    locations.push(format!("HTTP://0:{secret_port}/secret#x"));
    for (n, location) in locations.iter().enumerate() {
        Mock::given(method("GET"))
            .and(path(format!("/start/{n}")))
            .respond_with(ResponseTemplate::new(302).insert_header("location", location.as_str()))
            .expect(1)
            .mount(&start)
            .await;
    }
    let rule = format!("http://127.0.0.1:{secret_port}*");
    let (ctx, seen) = context(&json!({"webfetch": {"*": "allow", rule: "deny"}}));
    let tool = WebFetchTool::new().unwrap();
    for (n, location) in locations.iter().enumerate() {
        let url = format!("http://127.0.0.1:{}/start/{n}", start.address().port());
        let result = tool.execute(json!({"url": url}), &ctx).await;
        let error = result.expect_err(location).to_string();
        assert!(!error.contains(SECRET), "{location}: {error}");
    }
    assert!(seen.lock().unwrap().is_empty());
    start.verify().await;
    secret.verify().await;
}

#[tokio::test]
async fn zone_ids_and_bad_hosts_are_refused_before_any_request() {
    let (ctx, seen) = context(&json!({"webfetch": "ask"}));
    let tool = WebFetchTool::new().unwrap();
    for url in [
        "http://[fe80::1%25lo]:1/",
        "http://[::1%lo]/",
        "http://256.0.0.1/",
        "http://%5B::1%5D/",
    ] {
        let error = tool
            .execute(json!({"url": url}), &ctx)
            .await
            .expect_err(url)
            .to_string();
        assert!(error.contains("is not a valid URL"), "{url}: {error}");
    }
    // Refused before anyone is asked, and before any connection.
    assert_eq!(seen.lock().unwrap().len(), 0);
}
