//! Feature `otel`: a scripted turn exported over OTLP/HTTP to a loopback
//! receiver, whose decoded spans must form the GenAI span tree with the
//! conventions' attributes: a two-step turn whose first step calls a tool
//! that asks (answered by an approver) and starts a sub-agent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use agentgate::telemetry::{ENDPOINT, OtlpConfig, PROTOCOL, SERVICE_NAME, layer, tracer_provider};
use agentgate::{Tool, ToolContext, ToolError, ToolOutput};
use agentgate_core::permission::{AllowAll, Approver, PermissionConfig, RejectAll};
use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentEnvironment, Agents, Engine, FinishReason, ModelError, ModelInfo, Session, TaskSettings,
    Usage,
};
use agentgate_testing::otlp::{OtlpReceiver, ReceivedSpan, span};
use serde_json::{Value, json};

/// Asks `edit` for its path, then "writes" it.
struct Touch;

#[agentgate::async_trait]
impl Tool for Touch {
    fn id(&self) -> &str {
        "touch"
    }
    fn description(&self) -> &str {
        "Touches a file."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}})
    }
    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = input["path"].as_str().unwrap_or("x").to_string();
        ctx.ask("edit", [path.as_str()], [path.as_str()], json!({}))
            .await?;
        Ok(ToolOutput::text(format!("touched {path}")))
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input,
        output,
        ..Usage::default()
    }
}

/// The parent calls `touch` and `task` (to `explore`), the child answers,
/// then the parent answers: three model calls with distinct usage.
fn model() -> Arc<ScriptedModel> {
    let task = json!({"description": "look", "prompt": "look around", "subagent_type": "explore"});
    let scripts = [
        Script::new()
            .tool_call("c1", "touch", json!({"path": "a.txt"}))
            .tool_call("t1", "task", task)
            .finish_with(FinishReason::ToolCalls, usage(100, 20)),
        Script::new()
            .text("nothing here")
            .finish_with(FinishReason::Stop, usage(30, 4)),
        Script::new()
            .text("done")
            .finish_with(FinishReason::Stop, usage(150, 7)),
    ];
    let info = ModelInfo::new("anthropic", "claude-test");
    Arc::new(ScriptedModel::new(scripts).with_info(info))
}

async fn engine(model: Arc<ScriptedModel>, approver: Arc<dyn Approver>) -> (Engine, Session) {
    let env = AgentEnvironment::new("/data/app", "/tmp/app", "/work/proj");
    let user: PermissionConfig = serde_json::from_str(r#"{"edit": "ask"}"#).unwrap();
    let engine = Engine::builder(model)
        .agents(Agents::builtin(&env, &user))
        .task_tool(TaskSettings::default())
        .tool(Touch)
        .build();
    engine.permissions().set_approver(approver);
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    (engine, session)
}

/// Runs `prompts` on `model` with `approver` answering, exporting to
/// `receiver`; the spans received (once `count` arrived) and the session.
async fn exported(
    receiver: &OtlpReceiver,
    model: Arc<ScriptedModel>,
    approver: Arc<dyn Approver>,
    prompts: &[&str],
    count: usize,
) -> (Vec<ReceivedSpan>, String) {
    let endpoint = receiver.endpoint();
    let protocol = if receiver.is_grpc() {
        "grpc"
    } else {
        "http/protobuf"
    };
    let config = OtlpConfig::from_lookup("agentgate-test", |var| match var {
        ENDPOINT => Some(endpoint.clone()),
        PROTOCOL => Some(protocol.into()),
        SERVICE_NAME => Some("telemetry-test".into()),
        _ => None,
    })
    .unwrap()
    .unwrap();
    let provider = tracer_provider(&config).unwrap();
    let subscriber = tracing_subscriber::layer::SubscriberExt::with(
        tracing_subscriber::registry(),
        layer(&provider),
    );
    let (engine, session) = engine(model, approver).await;
    {
        // This test's runtime has one thread: the child's task runs on it
        // and sees the same default subscriber.
        let _default = tracing::subscriber::set_default(subscriber);
        for prompt in prompts {
            engine.prompt(&session.id, *prompt).await.unwrap();
        }
    }
    tokio::task::spawn_blocking(move || provider.shutdown())
        .await
        .unwrap()
        .unwrap();
    let spans = receiver.wait_for(Duration::from_secs(10), |spans| spans.len() >= count);
    (spans, session.id)
}

#[tokio::test(flavor = "current_thread")]
async fn a_turn_exports_the_genai_span_tree() {
    let receiver = OtlpReceiver::start();
    let approver = Arc::new(AllowAll);
    let (spans, session_id) = exported(&receiver, model(), approver, &["touch a.txt"], 7).await;

    let turn = span(&spans, "invoke_agent build");
    let tool = span(&spans, "execute_tool touch");
    let task = span(&spans, "execute_tool task");
    let ask = span(&spans, "permission edit");
    let child = span(&spans, "invoke_agent explore");
    let chats: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.name == "chat claude-test")
        .collect();
    assert_eq!(chats.len(), 3, "{spans:#?}");

    // The tree: turn > chat, tool calls; tool > ask; task > child > chat.
    assert!(turn.parent_span_id.is_empty());
    assert!(tool.is_child_of(turn) && task.is_child_of(turn));
    assert!(ask.is_child_of(tool));
    assert!(child.is_child_of(task));
    assert_eq!(chats.iter().filter(|c| c.is_child_of(turn)).count(), 2);
    assert_eq!(chats.iter().filter(|c| c.is_child_of(child)).count(), 1);

    // The conventions' attributes.
    assert_eq!(turn.str("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(turn.str("gen_ai.agent.name"), Some("build"));
    assert_eq!(
        turn.str("gen_ai.conversation.id"),
        Some(session_id.as_str())
    );
    assert_eq!(turn.service_name.as_deref(), Some("telemetry-test"));
    assert_eq!(child.str("gen_ai.agent.name"), Some("explore"));
    assert_ne!(
        child.str("gen_ai.conversation.id"),
        Some(session_id.as_str())
    );
    let first = chats.iter().find(|c| c.is_child_of(turn)).unwrap();
    assert_eq!(first.kind, 3, "chat spans are CLIENT spans");
    assert_eq!(first.str("gen_ai.operation.name"), Some("chat"));
    assert_eq!(first.str("gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(first.str("gen_ai.request.model"), Some("claude-test"));
    assert_eq!(first.str("gen_ai.response.model"), Some("claude-test"));
    assert_eq!(tool.str("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(tool.str("gen_ai.tool.name"), Some("touch"));
    assert_eq!(tool.str("gen_ai.tool.call.id"), Some("c1"));

    // Token counts are the model's usage: per call, and summed per turn.
    let tokens = |s: &ReceivedSpan| {
        (
            s.int("gen_ai.usage.input_tokens").unwrap(),
            s.int("gen_ai.usage.output_tokens").unwrap(),
        )
    };
    let mut per_call: Vec<(i64, i64)> = chats.iter().map(|c| tokens(c)).collect();
    per_call.sort();
    assert_eq!(per_call, [(30, 4), (100, 20), (150, 7)]);
    assert_eq!(tokens(turn), (250, 27));
    assert_eq!(tokens(child), (30, 4));

    // The ask: what was asked, how it was answered, by whom.
    assert_eq!(ask.str("agentgate.permission.name"), Some("edit"));
    assert_eq!(
        ask.str("agentgate.permission.patterns"),
        Some(r#"["a.txt"]"#)
    );
    assert_eq!(ask.str("agentgate.permission.decision"), Some("once"));
    assert_eq!(ask.str("agentgate.permission.answered_by"), Some("auto"));
    assert_eq!(ask.str("gen_ai.tool.call.id"), Some("c1"));
    assert!(ask.int("agentgate.permission.wait_ms").is_some());

    // Contents are not recorded without the opt-in.
    for s in &spans {
        for key in ["gen_ai.input.messages", "gen_ai.output.messages"] {
            assert!(!s.attributes.contains_key(key), "{} has {key}", s.name);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_rejected_call_and_a_failed_model_call_are_errors() {
    let receiver = OtlpReceiver::start();
    let scripts = [
        Script::calls([("c1", "touch", json!({"path": "a.txt"}))]),
        Script::fail(ModelError::other("the model broke")),
    ];
    let model = Arc::new(ScriptedModel::new(scripts));
    let approver = Arc::new(RejectAll::new(std::io::sink()));
    let prompts = ["touch a.txt", "again"];
    let (spans, _) = exported(&receiver, model, approver, &prompts, 6).await;

    let tool = span(&spans, "execute_tool touch");
    assert_eq!(tool.str("error.type"), Some("rejected"));
    assert_eq!(tool.status_code, 2, "an ERROR status");
    let ask = span(&spans, "permission edit");
    assert_eq!(ask.str("agentgate.permission.decision"), Some("reject"));
    assert_eq!(
        ask.str("agentgate.permission.answered_by"),
        Some("non_interactive")
    );
    let failed: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.name == "chat scripted" && s.str("error.type").is_some())
        .collect();
    assert_eq!(failed.len(), 1, "{spans:#?}");
    assert_eq!(failed[0].str("error.type"), Some("_OTHER"));
    assert_eq!(failed[0].status_code, 2);
    let turns: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent build")
        .collect();
    assert_eq!(turns.len(), 2);
    assert!(
        turns
            .iter()
            .any(|t| t.str("error.type").is_some() && t.status_code == 2)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_same_spans_go_over_grpc() {
    let receiver = OtlpReceiver::start_grpc();
    let model = Arc::new(ScriptedModel::new([Script::reply("hello")]));
    let approver = Arc::new(AllowAll);
    let (spans, session_id) = exported(&receiver, model, approver, &["hi"], 2).await;
    let turn = span(&spans, "invoke_agent build");
    let chat = span(&spans, "chat scripted");
    assert!(chat.is_child_of(turn));
    assert_eq!(
        turn.str("gen_ai.conversation.id"),
        Some(session_id.as_str())
    );
    assert_eq!(turn.service_name.as_deref(), Some("telemetry-test"));
}
