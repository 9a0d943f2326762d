//! Truncated tool output spills into the agent environment's spill
//! directory, and every built-in agent reads it without an ask (§7.1, §9.2).

use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentEnvironment, Agents, ContentPart, Engine, Session, StopReason, ToolContext, ToolError,
    ToolOutput, TypedTool,
};
use agentgate_permission::{PermissionConfig, PermissionGate, Reply};
use agentgate_testing::RecordingApprover;
use agentgate_tools::ReadTool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Prints 3000 numbered lines (more than the 2000 the model may see).
struct Noisy;

#[async_trait::async_trait]
impl TypedTool for Noisy {
    type Args = NoArgs;
    fn id(&self) -> &str {
        "noisy"
    }
    fn description(&self) -> &str {
        "Prints a lot."
    }
    async fn run(&self, _args: NoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text: Vec<String> = (1..=3000).map(|n| format!("line {n}")).collect();
        Ok(ToolOutput::text(text.join("\n")))
    }
}

fn tool_results(model: &ScriptedModel, request: usize) -> Vec<(String, bool)> {
    model.requests()[request]
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|part| match part {
            ContentPart::ToolResult {
                output, is_error, ..
            } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_build_agent_reads_its_spill_file_without_an_ask() {
    let root = agentgate_testing::scratch_dir("agentgate-tools-spill");
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let env = AgentEnvironment::new(
        root.join("data").to_string_lossy(),
        root.join("tmp").to_string_lossy(),
        project.to_string_lossy(),
    );
    let agents = Agents::builtin(&env, &PermissionConfig::default());
    // Rejects every request and remembers it.
    let approver = Arc::new(RecordingApprover::replying(Reply::reject()));
    let permissions = PermissionGate::new();
    permissions.set_approver(approver.clone());
    let model = Arc::new(ScriptedModel::new([
        Script::calls([("c1", "noisy", json!({}))]),
        Script::reply("It printed a lot."),
    ]));
    let engine = Engine::builder(model.clone())
        .agents(agents)
        .permissions(permissions)
        .worktree(project.clone())
        .tool(Noisy)
        .tool(ReadTool::default())
        .build();
    let session = engine
        .create_session(Session::new("build", project.clone()))
        .await
        .unwrap();
    engine.run(&session.id, "make noise").await.unwrap();

    let (seen, _) = tool_results(&model, 1).remove(0);
    let spill = seen
        .split("Full output saved to: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("the model is told where the full output is")
        .to_string();
    assert!(
        spill.starts_with(&env.spill_dir().to_string_lossy().into_owned()),
        "{spill} is in the environment's spill directory"
    );

    model.push(Script::calls([(
        "c2",
        "read",
        json!({"filePath": spill, "offset": 2990, "limit": 5}),
    )]));
    model.push(Script::reply("Read it."));
    let turn = engine.run(&session.id, "show the end").await.unwrap();
    assert!(matches!(turn.stop, StopReason::Done { .. }));
    let (output, is_error) = tool_results(&model, 3).pop().unwrap();
    assert!(!is_error, "{output}");
    assert!(output.contains("line 2990"), "{output}");
    assert!(
        approver.summaries().is_empty(),
        "no ask: {:?}",
        approver.summaries()
    );
    let _ = std::fs::remove_dir_all(&root);
}
