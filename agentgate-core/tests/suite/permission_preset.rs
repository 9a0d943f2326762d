//! The builder's permission presets, seen from an approver: with opencode's
//! defaults nothing reaches it; with `AskBeforeSideEffects` an edit, a
//! command, a fetch, an MCP tool and a custom tool do, while reading and
//! searching do not.

use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    ConfigLoader, FinishReason, PermissionPreset, ToolContext, ToolError, ToolOutput, TypedTool,
};
use agentgate_permission::{PermissionGate, Reply};
use agentgate_testing::RecordingApprover;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct AskArgs {
    pattern: String,
}

/// A tool called `id` that asks `permission` for its pattern, as the
/// built-in, MCP and custom tools do before their side effect.
struct Asker {
    id: &'static str,
    permission: &'static str,
}

#[async_trait::async_trait]
impl TypedTool for Asker {
    type Args = AskArgs;
    fn id(&self) -> &str {
        self.id
    }
    fn description(&self) -> &str {
        "Asks its permission."
    }
    async fn run(&self, args: AskArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let pattern = args.pattern.as_str();
        ctx.ask(self.permission, [pattern], [pattern], json!({}))
            .await?;
        Ok(ToolOutput::text("done"))
    }
}

const TOOLS: &[(&str, &str, &str)] = &[
    ("edit", "edit", "src/lib.rs"),
    ("bash", "bash", "cargo test"),
    ("webfetch", "webfetch", "https://example.com"),
    ("github_create_issue", "github_create_issue", "*"),
    ("deploy", "deploy", "*"),
    ("read", "read", "src/lib.rs"),
    ("glob", "glob", "**/*.rs"),
    ("grep", "grep", "fn main"),
];

/// The permissions the approver was asked for when the model calls every
/// tool of [`TOOLS`] once under `preset`.
async fn asked(preset: Option<PermissionPreset>) -> Vec<String> {
    let root = agentgate_testing::scratch_dir("agentgate-core-preset");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let calls: Vec<(String, &str, serde_json::Value)> = TOOLS
        .iter()
        .enumerate()
        .map(|(i, (id, _, pattern))| (format!("c{i}"), *id, json!({"pattern": pattern})))
        .collect();
    let model = Arc::new(ScriptedModel::new([
        Script::calls(
            calls
                .iter()
                .map(|(c, id, args)| (c.as_str(), *id, args.clone())),
        ),
        Script::new().text("done").finish(FinishReason::Stop),
    ]));
    let permissions = PermissionGate::new();
    let seen = RecordingApprover::replying(Reply::Once).install(&permissions);
    let mut tools = agentgate_core::ToolRegistry::new();
    for (id, permission, _) in TOOLS {
        tools.register(Asker { id, permission });
    }
    let (engine, session) = super::common::configured(
        &root,
        ConfigLoader::new(&root)
            .home(root.join("home"))
            .env(|_| None),
        model.clone(),
        tools,
        preset.unwrap_or_default(),
        Some(permissions),
    )
    .await;
    engine.run(&session.id, "go").await.unwrap();
    // Every call ran: the second request carries all eight results.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let results = super::common::results(&requests[1]);
    assert_eq!(results.len(), TOOLS.len());
    assert!(
        results
            .iter()
            .all(|(_, output, error)| output == "done" && !error),
        "{results:?}"
    );
    let mut asked: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.permission.clone())
        .collect();
    asked.sort();
    let _ = std::fs::remove_dir_all(&root);
    asked
}

#[tokio::test]
async fn opencode_defaults_never_call_the_approver() {
    assert!(asked(None).await.is_empty());
    assert!(
        asked(Some(PermissionPreset::OpencodeDefaults))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn ask_before_side_effects_asks_for_changes_commands_network_mcp_and_custom_tools() {
    assert_eq!(
        asked(Some(PermissionPreset::AskBeforeSideEffects)).await,
        ["bash", "deploy", "edit", "github_create_issue", "webfetch"]
    );
}
