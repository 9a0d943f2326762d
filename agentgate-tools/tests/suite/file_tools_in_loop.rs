//! The file tools driven by the agent loop (agentgate-core's Engine with a
//! ScriptedModel): the agent's rules decide, a denied edit leaves the file
//! untouched and the model sees why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use agentgate_core::permission::Ruleset;
use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{AgentSpec, ContentPart, Engine, Session, StopReason};
use agentgate_tools::{EditTool, ReadTool};
use serde_json::json;

fn temp_dir(name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("agentgate-tools-loop-{name}"))
}

fn rules(json: &str) -> Ruleset {
    serde_json::from_str(json).unwrap()
}

/// Runs one turn where the model edits `a.txt` then reads it; returns the
/// tool results the model saw (output, is_error) and the file afterwards.
async fn run(name: &str, permission: Ruleset) -> (Vec<(String, bool)>, String) {
    let dir = temp_dir(name);
    std::fs::write(dir.join("a.txt"), "hello world\n").unwrap();
    let model = Arc::new(ScriptedModel::new([
        Script::calls([
            (
                "call_1",
                "edit",
                json!({"filePath": "a.txt", "oldString": "world", "newString": "there"}),
            ),
            ("call_2", "read", json!({"filePath": "a.txt"})),
        ]),
        Script::reply("Done."),
    ]));
    let engine = Engine::builder(model.clone())
        .agent(AgentSpec::new("build").with_permission(permission))
        .worktree(dir.clone())
        .tool(EditTool)
        .tool(ReadTool::default())
        .build();
    let session = engine
        .create_session(Session::new("build", dir.clone()))
        .await
        .unwrap();
    let turn = engine
        .prompt(&session.id, "fix the greeting")
        .await
        .unwrap();
    assert!(
        matches!(turn.stop, StopReason::Done { .. }),
        "{:?}",
        turn.stop
    );
    let requests = model.requests();
    let results = requests[1]
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|part| match part {
            ContentPart::ToolResult {
                output, is_error, ..
            } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .collect();
    let after = std::fs::read_to_string(dir.join("a.txt")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (results, after)
}

#[tokio::test]
async fn allowed_edit_runs_in_the_loop() {
    let (results, after) = run(
        "allow",
        rules(r#"[{"permission":"*","pattern":"*","action":"allow"}]"#),
    )
    .await;
    assert_eq!(after, "hello there\n");
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0],
        ("Edit applied successfully.".to_string(), false)
    );
    assert!(!results[1].1);
    assert!(results[1].0.contains("1: hello"), "{}", results[1].0);
}

#[tokio::test]
async fn denied_edit_leaves_the_file_and_the_loop_goes_on() {
    let (results, after) = run(
        "deny",
        rules(
            r#"[{"permission":"*","pattern":"*","action":"allow"},
                {"permission":"edit","pattern":"*.txt","action":"deny"}]"#,
        ),
    )
    .await;
    assert_eq!(after, "hello world\n");
    assert!(results[0].1, "the edit must fail: {results:?}");
    assert!(!results[1].1);
    assert!(results[1].0.contains("1: hello world"));
}
