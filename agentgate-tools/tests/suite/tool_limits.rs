//! The tools' limit structs reach the tools: each cap, set lower than its
//! default, cuts the output where the default would not, and the defaults
//! are the documented ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use super::support::{recording_context, temp_dir};
use agentgate_core::Tool;
use agentgate_permission::{Action, Rule, Ruleset};
use agentgate_tools::{
    BashLimits, BashTool, GlobTool, GrepTool, ListTool, ReadLimits, ReadTool, SearchLimits,
    WebFetchLimits, WebFetchTool,
};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[test]
fn defaults_are_opencodes() {
    let read = ReadLimits::default();
    assert_eq!(
        (
            read.default_lines,
            read.max_line_chars,
            read.max_output_bytes
        ),
        (2000, 2000, 50 * 1024)
    );
    assert_eq!(read.max_file_bytes, 64 * 1024 * 1024);
    let search = SearchLimits::default();
    assert_eq!(
        (
            search.max_results,
            search.max_output_bytes,
            search.max_line_chars
        ),
        (100, 50 * 1024, 2000)
    );
    let bash = BashLimits::default();
    assert_eq!(bash.default_timeout, Duration::from_secs(120));
    assert_eq!(bash.max_timeout, Duration::from_secs(600));
    assert_eq!(bash.kill_grace, Duration::from_secs(3));
    let web = WebFetchLimits::default();
    assert_eq!(web.default_timeout, Duration::from_secs(30));
    assert_eq!(web.max_redirects, 10);
    assert_eq!(*ReadTool::default().limits(), read);
    assert_eq!(*GrepTool::default().limits(), search);
    assert_eq!(*BashTool::new().limits(), bash);
}

#[tokio::test]
async fn read_limits_cut_lines_bytes_and_files() {
    let dir = temp_dir("limits", "read");
    let text: String = (1..=50)
        .map(|i| format!("line {i} {}\n", "x".repeat(40)))
        .collect();
    std::fs::write(dir.join("f.txt"), &text).unwrap();
    let (ctx, _) = recording_context(&dir, true);
    let input = json!({"filePath": "f.txt"});

    let full = ReadTool::default()
        .execute(input.clone(), &ctx)
        .await
        .unwrap();
    assert!(full.output.contains("50: line 50"), "{}", full.output);

    let mut limits = ReadLimits::default();
    limits.default_lines = 3;
    let out = ReadTool::default()
        .with_limits(limits)
        .execute(input.clone(), &ctx)
        .await
        .unwrap();
    assert!(
        out.output.contains("3: line 3") && !out.output.contains("4: line 4"),
        "{}",
        out.output
    );

    let mut limits = ReadLimits::default();
    limits.max_line_chars = 6;
    let out = ReadTool::default()
        .with_limits(limits)
        .execute(input.clone(), &ctx)
        .await
        .unwrap();
    assert!(
        out.output
            .contains("1: line 1... (line truncated to 6 chars)"),
        "{}",
        out.output
    );

    let mut limits = ReadLimits::default();
    limits.max_output_bytes = 200;
    let out = ReadTool::default()
        .with_limits(limits)
        .execute(input.clone(), &ctx)
        .await
        .unwrap();
    assert!(
        out.output.contains("4: line 4") && !out.output.contains("5: line 5"),
        "{}",
        out.output
    );

    let mut limits = ReadLimits::default();
    limits.max_file_bytes = 100;
    let error = ReadTool::default()
        .with_limits(limits)
        .execute(input, &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("100"), "{error}");
}

#[tokio::test]
async fn search_limits_cap_results() {
    let dir = temp_dir("limits", "search");
    for i in 0..5 {
        std::fs::write(
            dir.join(format!("f{i}.rs")),
            format!("fn f{i}() {{ TODO }}\n"),
        )
        .unwrap();
    }
    let (ctx, _) = recording_context(&dir, true);
    // The searches show only files the read rules allow.
    let read = Ruleset(vec![Rule::new("read", "*", Action::Allow)]);
    let ctx = ctx.with_ruleset(Arc::new(read));
    let mut limits = SearchLimits::default();
    limits.max_results = 2;

    let all = GlobTool::default()
        .execute(json!({"pattern": "*.rs"}), &ctx)
        .await
        .unwrap();
    assert_eq!(all.output.lines().count(), 5, "{}", all.output);
    let glob = GlobTool::default()
        .with_limits(limits)
        .execute(json!({"pattern": "*.rs"}), &ctx)
        .await
        .unwrap();
    assert!(
        glob.output.contains("showing first 2 of 5 results"),
        "{}",
        glob.output
    );

    let grep = GrepTool::default()
        .with_limits(limits)
        .execute(json!({"pattern": "TODO"}), &ctx)
        .await
        .unwrap();
    assert_eq!(grep.output.matches("Line 1:").count(), 2, "{}", grep.output);

    let list = ListTool::default()
        .with_limits(limits)
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    assert!(
        list.output.contains("Showing the first 2 files"),
        "{}",
        list.output
    );
}

#[tokio::test]
async fn bash_capture_limit_keeps_the_head_and_says_how_much_went() {
    let dir = temp_dir("limits", "bash");
    let (ctx, _) = recording_context(&dir, true);
    let mut limits = BashLimits::default();
    limits.max_capture_bytes = 10;
    let out = BashTool::new()
        .with_limits(limits)
        .execute(
            json!({"command": "printf 0123456789abcdef", "description": "print"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(out.output.starts_with("0123456789"), "{}", out.output);
    assert!(
        out.output
            .contains("[6 more bytes of output were not kept]"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn webfetch_response_limit_is_the_tools() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("x".repeat(4096), "text/plain"))
        .mount(&server)
        .await;
    let dir = temp_dir("limits", "webfetch");
    let (ctx, _) = recording_context(&dir, true);
    let input = json!({"url": format!("{}/big", server.uri()), "format": "text"});
    let out = WebFetchTool::new()
        .unwrap()
        .execute(input.clone(), &ctx)
        .await
        .unwrap();
    assert_eq!(out.output.len(), 4096);
    let mut limits = WebFetchLimits::default();
    limits.max_response_bytes = 1024;
    let error = WebFetchTool::new()
        .unwrap()
        .with_limits(limits)
        .execute(input, &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Response too large"), "{error}");
}
