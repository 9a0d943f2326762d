//! MCP over stdio against the reference server from npm,
//! `@modelcontextprotocol/server-everything` (installed by `.ci/run`, found
//! through `AGENT_MCP_SERVER_EVERYTHING`; skipped with a printed message
//! when that is unset).

use std::sync::Arc;

use agentgate_core::Tool;
use agentgate_core::permission::{Reply, Ruleset};
use agentgate_tools::mcp::{McpConfig, McpManager, McpServerConfig, McpStatus};
use serde_json::json;

use super::mcp_common::{Recorder, context, everything_command, rules, run_loop};

fn everything(extra_env: &[(&str, &str)]) -> Option<McpManager> {
    let command = everything_command()?;
    let mut server = McpServerConfig::local(command);
    for (key, value) in extra_env {
        server = server.with_var(*key, *value);
    }
    let config = McpConfig::new().with_server("everything", server);
    Some(McpManager::new(config, std::env::temp_dir()))
}

fn find<'a>(tools: &'a [Arc<dyn Tool>], id: &str) -> &'a Arc<dyn Tool> {
    tools.iter().find(|t| t.id() == id).unwrap_or_else(|| {
        panic!(
            "no tool {id} among {:?}",
            tools.iter().map(|t| t.id()).collect::<Vec<_>>()
        )
    })
}

#[tokio::test]
async fn the_reference_server_starts_lazily_and_lists_its_tools() {
    let Some(manager) = everything(&[]) else {
        return;
    };
    let ids: Vec<String> = manager
        .tools()
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    for expected in [
        "everything_echo",
        "everything_get-sum",
        "everything_get-tiny-image",
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(
            ids.iter().any(|id| id == expected),
            "{expected} missing from {ids:?}"
        );
    }
    let status = manager.status().await;
    assert_eq!(status[0].status, McpStatus::Connected);
    let instructions = manager.instructions(&Ruleset::default()).await.unwrap();
    assert!(instructions.starts_with("<mcp_instructions>\n  <server name=\"everything\">"));
    assert!(
        manager
            .instructions(&rules(json!({"everything_*": "deny"})))
            .await
            .is_none()
    );
    manager.shutdown();
}

#[tokio::test]
async fn a_call_is_asked_allowed_and_answered() {
    let Some(manager) = everything(&[("AGENT_MCP_TEST_MARKER", "from-config")]) else {
        return;
    };
    let tools = manager.tools().await;
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(recorder.clone(), rules(json!({"everything_*": "ask"})));
    let echo = find(&tools, "everything_echo")
        .execute(json!({"message": "hello mcp"}), &ctx)
        .await
        .unwrap();
    assert!(echo.output.contains("hello mcp"), "{}", echo.output);
    let sum = find(&tools, "everything_get-sum")
        .execute(json!({"a": 2, "b": 40}), &ctx)
        .await
        .unwrap();
    assert!(sum.output.contains("42"), "{}", sum.output);
    assert_eq!(
        recorder.requests(),
        [
            (
                "everything_echo".to_string(),
                vec!["*".to_string()],
                vec!["*".to_string()]
            ),
            (
                "everything_get-sum".to_string(),
                vec!["*".to_string()],
                vec!["*".to_string()]
            ),
        ]
    );
    // `environment` reaches the process.
    let env = find(&tools, "everything_get-env")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    assert!(env.output.contains("from-config"), "{}", env.output);
    manager.shutdown();
}

#[tokio::test]
async fn images_and_resources_map_to_attachments_and_text() {
    let Some(manager) = everything(&[]) else {
        return;
    };
    let tools = manager.tools().await;
    let recorder = Recorder::new(Reply::Once);
    let ctx = context(recorder.clone(), Ruleset::default());
    let image = find(&tools, "everything_get-tiny-image")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    let attachments = image.metadata["attachments"].as_array().unwrap();
    assert_eq!(attachments[0]["mime"], "image/png");
    assert!(
        attachments[0]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );

    let listed = find(&tools, "list_mcp_resources")
        .execute(json!({"server": "everything"}), &ctx)
        .await
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed.output).unwrap();
    let uri = listed["resources"][0]["uri"].as_str().unwrap().to_string();
    assert!(uri.starts_with("demo://"), "{uri}");
    let read = find(&tools, "read_mcp_resource")
        .execute(json!({"server": "everything", "uri": uri}), &ctx)
        .await
        .unwrap();
    assert!(!read.output.is_empty());
    let templates = find(&tools, "list_mcp_resource_templates")
        .execute(json!({}), &ctx)
        .await
        .unwrap();
    assert!(
        templates.output.contains("demo://resource/dynamic"),
        "{}",
        templates.output
    );
    let asked: Vec<_> = recorder
        .requests()
        .into_iter()
        .map(|(p, patterns, _)| (p, patterns))
        .collect();
    assert_eq!(
        asked,
        [
            (
                "everything_get-tiny-image".to_string(),
                vec!["*".to_string()]
            ),
            ("read".to_string(), vec!["mcp:everything:*".to_string()]),
            ("read".to_string(), vec![format!("mcp:everything:{uri}")]),
            ("read".to_string(), vec!["mcp:everything:*".to_string()]),
        ]
    );
    manager.shutdown();
}

#[tokio::test]
async fn the_loop_asks_through_the_gate_and_the_model_sees_the_result() {
    let Some(manager) = everything(&[]) else {
        return;
    };
    let recorder = Recorder::new(Reply::Once);
    let run = run_loop(
        &manager,
        rules(json!({"*": "allow", "everything_*": "ask"})),
        recorder.clone(),
        vec![(
            "c1",
            "everything_echo",
            json!({"message": "through the loop"}),
        )],
    )
    .await;
    assert!(run.done);
    assert!(
        run.results[0].0.contains("through the loop"),
        "{:?}",
        run.results
    );
    assert!(!run.results[0].1);
    assert_eq!(recorder.requests()[0].0, "everything_echo");
    manager.shutdown();
}
