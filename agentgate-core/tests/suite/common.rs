//! Shared helpers for the loop tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentSpec, Engine, Message, Part, Session, ToolContext, ToolError, ToolOutput, TypedTool,
    transcript::history_for_model,
};
use agentgate_core::{ContentPart, ModelRole};
use agentgate_permission::{PermissionGate, PermissionRequest, Reply, Ruleset};
use agentgate_testing::RecordingApprover;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    pub text: String,
}

/// Echoes its input after `delay`, counting calls.
#[derive(Clone, Default)]
pub struct Echo {
    pub delay: Duration,
    pub calls: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    fn id(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its input."
    }
    async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.calls.lock().unwrap().push(args.text.clone());
        tokio::time::sleep(self.delay).await;
        Ok(ToolOutput::text(args.text).with_title("echo"))
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct BashArgs {
    pub command: String,
}

/// Asks `bash` for its command, then "runs" it.
#[derive(Clone, Default)]
pub struct Bash {
    pub ran: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl TypedTool for Bash {
    type Args = BashArgs;
    fn id(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        "Runs a command."
    }
    async fn run(&self, args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.ask(
            "bash",
            [args.command.as_str()],
            [args.command.as_str()],
            serde_json::json!({}),
        )
        .await?;
        self.ran.lock().unwrap().push(args.command.clone());
        Ok(ToolOutput::text(format!("ran {}", args.command)))
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct SlowArgs {}

/// Sleeps for an hour; honours its token only if `cooperative`.
#[derive(Clone, Default)]
pub struct Slow {
    pub cooperative: bool,
    pub started: Arc<Mutex<u32>>,
}

#[async_trait::async_trait]
impl TypedTool for Slow {
    type Args = SlowArgs;
    fn id(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Takes forever."
    }
    async fn run(&self, _args: SlowArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        *self.started.lock().unwrap() += 1;
        ctx.metadata(
            Some("sleeping"),
            serde_json::json!({"output": "partial output"}),
        );
        if self.cooperative {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(3600)) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        } else {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        Ok(ToolOutput::text("done"))
    }
}

/// Installs an approver that answers with `answer` and records every
/// request it saw; returns the requests.
pub fn approver(
    permissions: &PermissionGate,
    answer: fn(&PermissionRequest) -> Reply,
) -> Arc<Mutex<Vec<PermissionRequest>>> {
    RecordingApprover::answering(answer).install(permissions)
}

pub fn rules(json: &str) -> Ruleset {
    serde_json::from_str(json).unwrap()
}

/// An engine around `model` with agent `build` (allow everything except
/// `doom_loop`, which asks) and a session; returns both.
pub async fn setup(
    model: Arc<ScriptedModel>,
    configure: impl FnOnce(agentgate_core::EngineBuilder) -> agentgate_core::EngineBuilder,
) -> (Engine, Session) {
    let agent = AgentSpec::new("build").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"},
            {"permission":"doom_loop","pattern":"*","action":"ask"},
            {"permission":"bash","pattern":"*","action":"ask"}]"#,
    ));
    let engine = configure(Engine::builder(model).agent(agent)).build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    (engine, session)
}

pub fn model(scripts: impl IntoIterator<Item = Script>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(scripts))
}

/// Asserts that every tool call in the transcript has a final state and
/// that the model input built from it answers every call.
pub fn assert_every_call_has_result(history: &[Message]) {
    for message in history {
        for part in &message.parts {
            if let Part::Tool(tool) = part {
                assert!(
                    tool.state.is_finished(),
                    "call {} left {}",
                    tool.call_id,
                    tool.state.status()
                );
            }
        }
    }
    let input = history_for_model(history);
    let mut open: Vec<String> = Vec::new();
    for message in &input {
        for part in &message.content {
            match part {
                ContentPart::ToolCall { id, .. } => {
                    assert_eq!(message.role, ModelRole::Assistant);
                    open.push(id.clone());
                }
                ContentPart::ToolResult { call_id, .. } => {
                    assert_eq!(message.role, ModelRole::Tool);
                    let at = open
                        .iter()
                        .position(|id| id == call_id)
                        .expect("result for unknown call");
                    open.remove(at);
                }
                _ => {}
            }
        }
    }
    assert!(open.is_empty(), "calls without result: {open:?}");
}

/// The tool results of a request, as (call id, output, is_error).
pub fn results(request: &agentgate_core::ModelRequest) -> Vec<(String, String, bool)> {
    request
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|part| match part {
            ContentPart::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => Some((call_id.clone(), output.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// A fresh id `prefix_<process id>_<counter>`, unique across the test run
/// (also across test processes sharing the temp directory).
pub fn fresh_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}_{}_{n:08}", std::process::id())
}

/// An engine for `project` as the facade's `CodingAgent` assembles one
/// from a loaded configuration ([`agentgate_core::EngineBuilder::from_config`]),
/// with `tools`, on `permissions` (default: the engine's non-interactive
/// gate), and a new session in the default agent.
pub async fn configured(
    project: &std::path::Path,
    loader: agentgate_core::ConfigLoader,
    model: Arc<dyn agentgate_core::LanguageModel>,
    tools: agentgate_core::ToolRegistry,
    preset: agentgate_core::PermissionPreset,
    permissions: Option<agentgate_permission::PermissionGate>,
) -> (agentgate_core::Engine, agentgate_core::Session) {
    let config = loader.load().unwrap();
    let worktree = loader.resolved_worktree();
    let (skills, _) = agentgate_core::Skills::discover(&loader, &config);
    let environment =
        agentgate_core::AgentEnvironment::detect("agent-sdk-tests", worktree.to_string_lossy());
    let mut setup = agentgate_core::EngineSetup::new(model, environment)
        .skills(skills)
        .preset(preset);
    if let Some(global) = loader.resolved_global_dir() {
        setup = setup.global_dir(global);
    }
    let mut builder = agentgate_core::EngineBuilder::from_config(&config, setup)
        .unwrap()
        .tools(tools);
    let agent = builder
        .catalog()
        .unwrap()
        .default_agent()
        .unwrap()
        .name
        .clone();
    if let Some(permissions) = permissions {
        builder = builder.permissions(permissions);
    }
    let engine = builder.build();
    let session = engine
        .create_session(agentgate_core::Session::new(agent, project))
        .await
        .unwrap();
    (engine, session)
}
