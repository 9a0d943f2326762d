//! MCP over streamable HTTP against a local rmcp server that logs the
//! calls it receives: tools listed and named `<server>_<tool>`, calls asked
//! and allowed, denied or rejected calls never reaching the server, results
//! mapped, resource tools, instructions, `tools/list_changed`, timeouts.

use std::time::Duration;

use agentgate_core::permission::{AllowAll, Reply, Ruleset};
use agentgate_core::{Tool, ToolError};
use agentgate_tools::mcp::{McpConfig, McpManager, McpServerConfig, McpStatus, McpTimeouts};
use serde_json::json;

use super::mcp_common::{LoggingServer, Recorder, context, rules, run_loop, serve_http};

async fn manager_for(url: &str) -> McpManager {
    let config = McpConfig::new().with_server("local", McpServerConfig::remote(url));
    McpManager::new(config, std::env::temp_dir())
}

fn tool<'a>(tools: &'a [std::sync::Arc<dyn Tool>], id: &str) -> &'a std::sync::Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.id() == id)
        .unwrap_or_else(|| panic!("no tool {id}"))
}

#[tokio::test]
async fn tools_are_listed_with_opencode_names_and_schemas() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let manager = manager_for(&url).await;
    let ids: Vec<String> = manager
        .tools()
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert_eq!(
        ids,
        [
            "local_echo",
            "local_delete_everything",
            "local_hang",
            "local_picture",
            "local_fail",
            "local_grow",
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource"
        ]
    );
    let tools = manager.tools().await;
    assert_eq!(
        tool(&tools, "local_echo").parameters(),
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false})
    );
    let status = manager.status().await;
    assert_eq!(status[0].status, McpStatus::Connected);
    assert_eq!(status[0].tools.len(), 6);
}

#[tokio::test]
async fn a_call_is_asked_allowed_and_reaches_the_server() {
    let server = LoggingServer::default();
    let (url, _stop) = serve_http(server.clone()).await;
    let manager = manager_for(&url).await;
    let tools = manager.tools().await;
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(recorder.clone(), Ruleset::default());
    let output = tool(&tools, "local_echo")
        .execute(json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(output.output, "echo: hi");
    assert_eq!(output.metadata["server"], "local");
    assert_eq!(
        recorder.requests(),
        [(
            "local_echo".to_string(),
            vec!["*".to_string()],
            vec!["*".to_string()]
        )]
    );
    assert_eq!(*server.calls.lock().unwrap(), ["echo"]);
}

#[tokio::test]
async fn denied_or_rejected_calls_never_reach_the_server() {
    let server = LoggingServer::default();
    let (url, _stop) = serve_http(server.clone()).await;
    let manager = manager_for(&url).await;
    let tools = manager.tools().await;

    // A deny rule: the gate refuses without asking anyone.
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(
        recorder.clone(),
        rules(json!({"local_delete_everything": "deny"})),
    );
    let error = tool(&tools, "local_delete_everything")
        .execute(json!({}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Permission(_)), "{error:?}");
    assert!(recorder.requests().is_empty());

    // "local_*": "ask", and the user says no.
    let rejecter = Recorder::new(Reply::Reject { feedback: None });
    let ctx = context(rejecter.clone(), rules(json!({"local_*": "ask"})));
    let error = tool(&tools, "local_echo")
        .execute(json!({"text": "x"}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Permission(_)), "{error:?}");
    assert_eq!(rejecter.requests().len(), 1);

    assert!(
        server.calls.lock().unwrap().is_empty(),
        "the server saw {:?}",
        server.calls.lock().unwrap()
    );
}

#[tokio::test]
async fn rules_users_already_write_hide_and_gate_mcp_tools_in_the_loop() {
    let server = LoggingServer::default();
    let (url, _stop) = serve_http(server.clone()).await;
    let manager = manager_for(&url).await;
    let permission = rules(json!({"*": "allow", "local_delete*": "deny"}));
    let run = run_loop(
        &manager,
        permission,
        std::sync::Arc::new(AllowAll),
        vec![
            ("c1", "local_echo", json!({"text": "loop"})),
            ("c2", "local_delete_everything", json!({})),
        ],
    )
    .await;
    assert!(run.done);
    assert_eq!(run.results[0], ("echo: loop".to_string(), false));
    // The denied tool is disabled (§5): the model is told it does not exist.
    assert!(run.results[1].1, "{:?}", run.results[1]);
    assert_eq!(*server.calls.lock().unwrap(), ["echo"]);
}

#[tokio::test]
async fn images_go_to_attachments_and_is_error_fails_the_call() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let manager = manager_for(&url).await;
    let tools = manager.tools().await;
    let ctx = context(std::sync::Arc::new(AllowAll), Ruleset::default());
    let picture = tool(&tools, "local_picture")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(picture.output, "a dot\n\n[image attachment: image/png]");
    assert_eq!(
        picture.metadata["attachments"],
        json!([{"type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBORw0KGgo="}])
    );
    let error = tool(&tools, "local_fail")
        .execute(json!({}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error, ToolError::failed("the database is down"));
}

#[tokio::test]
async fn resource_tools_ask_read_with_opencode_patterns() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let manager = manager_for(&url).await;
    let tools = manager.tools().await;
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(recorder.clone(), Ruleset::default());
    let listed = tool(&tools, "list_mcp_resources")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed.output).unwrap();
    assert_eq!(listed["resources"][0]["server"], "local");
    assert_eq!(listed["resources"][0]["uri"], "memo://notes");
    let read = tool(&tools, "read_mcp_resource")
        .execute(json!({"server": "local", "uri": "memo://notes"}), &ctx)
        .await
        .unwrap();
    assert_eq!(read.output, "contents of memo://notes");
    assert_eq!(
        recorder.requests(),
        [
            (
                "read".to_string(),
                vec!["mcp:local:*".to_string()],
                vec!["mcp:local:*".to_string()]
            ),
            (
                "read".to_string(),
                vec!["mcp:local:memo://notes".to_string()],
                vec!["mcp:local:*".to_string()]
            ),
        ]
    );
    // A `read` deny hides nothing but refuses the read.
    let denied = context(
        recorder.clone(),
        rules(json!({"read": {"mcp:local:*": "deny"}})),
    );
    assert!(
        tool(&tools, "read_mcp_resource")
            .execute(json!({"server": "local", "uri": "memo://notes"}), &denied)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn instructions_are_formatted_and_dropped_when_every_tool_is_disabled() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let manager = manager_for(&url).await;
    assert_eq!(
        manager.instructions(&Ruleset::default()).await.unwrap(),
        "<mcp_instructions>\n  <server name=\"local\">\n    Call echo before anything else.\n    Never call hang.\n  </server>\n</mcp_instructions>"
    );
    assert_eq!(
        manager
            .instructions(&rules(json!({"local_*": "deny"})))
            .await,
        None
    );
}

#[tokio::test]
async fn tool_list_changes_refresh_the_tools() {
    let (url, _stop) = serve_http(LoggingServer::default()).await;
    let manager = manager_for(&url).await;
    let tools = manager.tools().await;
    assert!(!tools.iter().any(|t| t.id() == "local_extra"));
    let mut changes = manager.changes();
    let ctx = context(std::sync::Arc::new(AllowAll), Ruleset::default());
    tool(&tools, "local_grow")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("no change announced")
        .unwrap();
    let tools = manager.tools().await;
    assert!(tools.iter().any(|t| t.id() == "local_extra"));
}

#[tokio::test]
async fn a_hung_call_times_out_and_a_cancelled_one_stops() {
    let server = LoggingServer::default();
    let (url, _stop) = serve_http(server.clone()).await;
    let config = McpConfig::new().with_server(
        "local",
        McpServerConfig::remote(&url).with_timeouts(McpTimeouts {
            startup: Duration::from_secs(30),
            request: Duration::from_secs(5),
        }),
    );
    let manager = McpManager::new(config, std::env::temp_dir());
    let tools = manager.tools().await;
    let ctx = context(std::sync::Arc::new(AllowAll), Ruleset::default());

    // Cancellation: the call stops as soon as its token fires.
    let cancelled = context(std::sync::Arc::new(AllowAll), Ruleset::default());
    let token = cancelled.cancel.clone();
    let hang = tool(&tools, "local_hang").clone();
    let call = tokio::spawn(async move { hang.execute(json!({}), &cancelled).await });
    while !server.calls.lock().unwrap().contains(&"hang".to_string()) {
        tokio::task::yield_now().await;
    }
    token.cancel();
    assert_eq!(call.await.unwrap().unwrap_err(), ToolError::Cancelled);

    // Timeout: with the clock paused, the 5 s limit passes as soon as the
    // runtime has nothing else to do.
    tokio::time::pause();
    let error = tool(&tools, "local_hang")
        .execute(json!({}), &ctx)
        .await
        .unwrap_err();
    tokio::time::resume();
    assert!(
        error
            .to_string()
            .contains("\"local\" timed out after 5000 ms while calling tool \"hang\""),
        "{error}"
    );

    // The session goes on: the server still answers.
    let echo = tool(&tools, "local_echo")
        .execute(json!({"text": "still here"}), &ctx)
        .await
        .unwrap();
    assert_eq!(echo.output, "echo: still here");
}

#[tokio::test]
async fn a_stopped_http_server_fails_its_calls_and_others_go_on() {
    let (url, stop) = serve_http(LoggingServer::default()).await;
    let (other_url, _other_stop) = serve_http(LoggingServer::default()).await;
    let config = McpConfig::new()
        .with_server("gone", McpServerConfig::remote(&url))
        .with_server("other", McpServerConfig::remote(&other_url));
    let manager = McpManager::new(config, std::env::temp_dir());
    let tools = manager.tools().await;
    stop.cancel();
    let ctx = context(std::sync::Arc::new(AllowAll), Ruleset::default());
    let error = tool(&tools, "gone_echo")
        .execute(json!({"text": "x"}), &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("\"gone\""), "{error}");
    let ok = tool(&tools, "other_echo")
        .execute(json!({"text": "y"}), &ctx)
        .await
        .unwrap();
    assert_eq!(ok.output, "echo: y");
}

#[tokio::test]
async fn configured_headers_with_env_placeholders_reach_the_server() {
    let server = LoggingServer::default();
    let (url, _stop) = serve_http(server.clone()).await;
    let config = McpConfig::from_value(&json!({
        "local": {
            "type": "remote",
            "url": url,
            "headers": {"Authorization": "Bearer {env:AGENT_MCP_TEST_TOKEN}"}
        }
    }))
    .substitute_env(&|name| (name == "AGENT_MCP_TEST_TOKEN").then(|| "t0ken".to_string()));
    let manager = McpManager::new(config, std::env::temp_dir());
    let tools = manager.tools().await;
    let ctx = context(std::sync::Arc::new(AllowAll), Ruleset::default());
    tool(&tools, "local_echo")
        .execute(json!({"text": "auth"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        *server.authorizations.lock().unwrap(),
        [Some("Bearer t0ken".to_string())]
    );
}

#[tokio::test]
async fn servers_start_on_first_use_and_once() {
    let first = LoggingServer::default();
    let second = LoggingServer::default();
    let (url_a, _stop_a) = serve_http(first.clone()).await;
    let (url_b, _stop_b) = serve_http(second.clone()).await;
    let config = McpConfig::new()
        .with_server("a", McpServerConfig::remote(&url_a))
        .with_server("b", McpServerConfig::remote(&url_b));
    let manager = McpManager::new(config, std::env::temp_dir());
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        (*first.lists.lock().unwrap(), *second.lists.lock().unwrap()),
        (0, 0)
    );
    let (tools, status) = tokio::join!(manager.tools(), manager.status());
    assert_eq!(
        tools.iter().filter(|t| t.id().ends_with("_echo")).count(),
        2
    );
    assert!(status.iter().all(|s| s.status == McpStatus::Connected));
    manager.start().await;
    assert_eq!(
        (*first.lists.lock().unwrap(), *second.lists.lock().unwrap()),
        (1, 1)
    );
}
