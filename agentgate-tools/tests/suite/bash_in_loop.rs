//! The bash tool inside agentgate-core's loop: a cancelled turn ends the
//! command's whole process group and keeps its partial output on the call.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{AgentSpec, Engine, Part, Session, StopReason, ToolState};
use agentgate_permission::Ruleset;
use agentgate_tools::BashTool;
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::support::{unique_sleep, wait_for_process_with_arg};

fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn cancelled_turn_kills_the_group_and_keeps_partial_output() {
    let dir = agentgate_testing::scratch_dir("agentgate-tools-bash-loop");
    let marker = unique_sleep(30);
    let model = Arc::new(ScriptedModel::new([
        Script::calls([(
            "c1",
            "bash",
            json!({"command": format!("echo started; sh -c 'exec sleep {marker}' & sleep 30")}),
        )]),
        Script::reply("never reached"),
    ]));
    let rules: Ruleset =
        serde_json::from_str(r#"[{"permission":"*","pattern":"*","action":"allow"}]"#).unwrap();
    let engine = Engine::builder(model)
        .agent(AgentSpec::new("build").with_permission(rules))
        .tool(BashTool::new().with_kill_grace(Duration::from_millis(200)))
        .build();
    let session = engine
        .create_session(Session::new("build", dir.clone()))
        .await
        .unwrap();

    let mut events = engine.subscribe();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancel once the command has said it started and its grandchild runs
    // (found by its unique argument in this process's /proc: the
    // command's own /proc is private to its PID namespace).
    let watched = marker.clone();
    let watcher = tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            let text = serde_json::to_string(&event).unwrap();
            if text.contains("started") {
                let pid = wait_for_process_with_arg(&watched).await;
                trigger.cancel();
                return pid;
            }
        }
        panic!("the command never started");
    });
    let started = Instant::now();
    let result = engine
        .prompt_with(&session.id, vec![Part::text("go")], cancel)
        .await
        .unwrap();
    let pid = tokio::time::timeout(Duration::from_secs(10), watcher)
        .await
        .expect("the command's pid never reached the events")
        .unwrap();
    assert_eq!(result.stop, StopReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(is_gone(pid), "grandchild {pid} survived the cancelled turn");

    let history = engine.messages(&session.id).await.unwrap();
    let call = history[1].tool_parts().next().unwrap();
    match &call.state {
        ToolState::Error { metadata, .. } => {
            let output = metadata["output"].as_str().unwrap();
            assert!(output.contains("started"), "{output}");
        }
        other => panic!("expected an interrupted call, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}
