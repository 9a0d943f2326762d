//! The webfetch tool against a local wiremock server (never the internet).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate_core::{Tool, ToolContext, ToolError};
use agentgate_permission::{PermissionError, PermissionGate, PermissionRequest, Reply};
use agentgate_testing::RecordingApprover;
use agentgate_tools::WebFetchTool;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn context(answer: Reply) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let permissions = PermissionGate::new();
    let seen = RecordingApprover::replying(answer).install(&permissions);
    (
        ToolContext::new("ses_1", "msg_1", "call_1", permissions),
        seen,
    )
}

const PAGE: &str = "<html><head><title>T</title><script>evil()</script></head>\
    <body><h1>Hello</h1><p>A <a href=\"/next\">link</a> &amp; <b>more</b>.</p></body></html>";

async fn server_with_page() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(PAGE, "text/html; charset=utf-8"))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn asks_then_fetches_as_markdown() {
    let server = server_with_page().await;
    let (ctx, seen) = context(Reply::Once);
    let url = format!("{}/page", server.uri());
    let out = WebFetchTool::new()
        .unwrap()
        .execute(json!({"url": url}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.output, "# Hello\n\nA [link](/next) & **more**.");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].permission, "webfetch");
    // The URL as given, then (a loopback host) the same URL on `[::1]`.
    let ipv6 = url.replace("127.0.0.1", "[::1]");
    assert_eq!(seen[0].patterns, [url.clone(), ipv6]);
    assert_eq!(seen[0].always, ["*"]);
}

#[tokio::test]
async fn text_and_html_formats() {
    let server = server_with_page().await;
    let (ctx, _) = context(Reply::Once);
    let url = format!("{}/page", server.uri());
    let tool = WebFetchTool::new().unwrap();
    let text = tool
        .execute(json!({"url": url, "format": "text"}), &ctx)
        .await
        .unwrap();
    assert_eq!(text.output, "Hello\n\nA link & more.");
    let html = tool
        .execute(json!({"url": url, "format": "html"}), &ctx)
        .await
        .unwrap();
    assert_eq!(html.output, PAGE);
}

#[tokio::test]
async fn rejected_request_is_never_sent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let (ctx, _) = context(Reply::Reject { feedback: None });
    let result = WebFetchTool::new()
        .unwrap()
        .execute(json!({"url": format!("{}/x", server.uri())}), &ctx)
        .await;
    assert!(matches!(
        result,
        Err(ToolError::Permission(PermissionError::Rejected))
    ));
    server.verify().await;
}

#[tokio::test]
async fn errors_say_what_to_do() {
    let server = MockServer::start().await;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b'a'; 5 * 1024 * 1024 + 1]))
        .mount(&server)
        .await;
    Mock::given(path("/slow"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let (ctx, _) = context(Reply::Once);
    let tool = WebFetchTool::new().unwrap();
    let message = |result: Result<_, ToolError>| match result {
        Err(ToolError::Failed(message)) => message,
        other => panic!("{other:?}"),
    };
    let missing = message(
        tool.execute(json!({"url": format!("{}/missing", server.uri())}), &ctx)
            .await,
    );
    assert!(missing.contains("status code: 404"), "{missing}");
    let big = message(
        tool.execute(json!({"url": format!("{}/big", server.uri())}), &ctx)
            .await,
    );
    assert!(big.contains("exceeds 5MB limit"), "{big}");
    let slow = message(
        tool.execute(
            json!({"url": format!("{}/slow", server.uri()), "timeout": 1}),
            &ctx,
        )
        .await,
    );
    assert!(slow.contains("timed out after 1 s"), "{slow}");
    let scheme = message(
        tool.execute(json!({"url": "file:///etc/passwd"}), &ctx)
            .await,
    );
    assert!(
        scheme.contains("must start with http:// or https://"),
        "{scheme}"
    );
}
