//! A custom typed tool that asks through its context before acting. The
//! approver answers "always", so the second identical call does not ask.
//!
//! Run: `cargo run -p agentgate-examples --example typed_tool`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentgate::permission::{Action, Approver, PermissionRequest, Reply, Rule, Ruleset};
use agentgate::testing::{Script, ScriptedModel};
use agentgate::{CodingAgent, ToolContext, ToolError, ToolOutput, TypedTool};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DeployArgs {
    /// The environment to deploy to.
    environment: String,
}

struct Deploy;

#[async_trait::async_trait]
impl TypedTool for Deploy {
    type Args = DeployArgs;
    fn id(&self) -> &str {
        "deploy"
    }
    fn description(&self) -> &str {
        "Deploys the current build to an environment."
    }
    async fn run(&self, args: DeployArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Ask before any side effect; "always" approves this environment.
        let env = args.environment.as_str();
        ctx.ask("deploy", [env], [env], json!({ "environment": env }))
            .await?;
        Ok(ToolOutput::text(format!("deployed to {env}")))
    }
}

/// Answers "always", counting the asks.
#[derive(Default)]
struct Always(AtomicUsize);

#[async_trait::async_trait]
impl Approver for Always {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.0.fetch_add(1, Ordering::SeqCst);
        println!(
            "approve {} {:?}: always {:?}",
            request.permission,
            request.patterns,
            request.always_rules()
        );
        Reply::Always
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let call = |id| Script::calls([(id, "deploy", json!({"environment": "staging"}))]);
    let model = Arc::new(ScriptedModel::new([
        call("c1"),
        Script::reply("Deployed."),
        call("c2"),
        Script::reply("Deployed again."),
    ]));
    let approver = Arc::new(Always::default());
    let agent = CodingAgent::builder(env!("CARGO_MANIFEST_DIR"))
        // "Always" answers remembered in memory for this run (by default
        // they are kept in the program's own data directory).
        .permissions(agentgate::permission::PermissionGate::new())
        .model(model)
        .tool(Deploy)
        .approver(approver.clone())
        .session_permission(Ruleset::from(vec![Rule::new("deploy", "*", Action::Ask)]))
        .build()
        .await?;
    assert_eq!(agent.run("deploy to staging").await?.text(), "Deployed.");
    assert_eq!(agent.run("once more").await?.text(), "Deployed again.");
    assert_eq!(
        approver.0.load(Ordering::SeqCst),
        1,
        "the second call was approved by the rule"
    );
    Ok(())
}
