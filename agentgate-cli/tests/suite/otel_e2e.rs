//! OpenTelemetry export end to end (issue 46): `agent run --auto` against a
//! local OpenAI-compatible model that calls `bash` (an ask, answered by
//! `--auto`) and then answers, with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a
//! loopback OTLP receiver: the process exports the turn's spans before it
//! exits, with the model's token counts. Unset, nothing reaches the
//! receiver; a setting that cannot be used is named and the run goes on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agentgate_testing::otlp::{Attr, OtlpReceiver, ReceivedSpan, span};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::run_cli::{Sandbox, local_provider, openai_answer, sse, text};

/// Calls `bash` (usage 11 in, 5 out), then answers "done" once the result
/// is back (usage 23 in, 2 out); a request offering no tools gets a title.
struct CountingModel;

/// An OpenAI stream of `chunk`, a finish, and a usage chunk.
fn with_usage(chunk: Value, finish: &str, prompt: u64, completion: u64) -> ResponseTemplate {
    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    let usage = json!({"choices": [], "usage": {"prompt_tokens": prompt,
        "completion_tokens": completion, "total_tokens": prompt + completion}});
    sse(&[
        format!("data: {chunk}"),
        format!("data: {end}"),
        format!("data: {usage}"),
        "data: [DONE]".into(),
    ])
}

impl Respond for CountingModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return openai_answer("A title");
        }
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
            .unwrap_or_default();
        if last["role"] == "tool" {
            let text = json!({"choices": [{"index": 0, "delta": {"content": "done"}}]});
            return with_usage(text, "stop", 23, 2);
        }
        let args = json!({"command": "echo ran >> ran.txt", "description": "Record a run"});
        let call = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "bash", "arguments": args.to_string()}}]}}]});
        with_usage(call, "tool_calls", 11, 5)
    }
}

async fn model(sandbox: &Sandbox) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(CountingModel)
        .mount(&server)
        .await;
    local_provider(sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    server
}

/// `agent run --auto "record a run"` with `env`; its stdout.
async fn run(sandbox: &Sandbox, env: &[(&str, String)]) -> (String, String) {
    let out = sandbox.agent(&["run", "--auto", "record a run"], env).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "done", "{stderr}");
    (stdout, stderr)
}

#[tokio::test]
async fn agent_run_exports_its_turn_to_the_otlp_endpoint() {
    let sandbox = Sandbox::new("otel-export");
    let _model = model(&sandbox).await;
    let receiver = OtlpReceiver::start();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_SERVICE_NAME", "agent-e2e".to_string()),
    ];
    run(&sandbox, &env).await;

    // Flushed before the process exited: everything is there already.
    let spans = receiver.wait_for(Duration::from_secs(5), |s| s.len() >= 5);
    let turn = span(&spans, "invoke_agent build");
    let call = span(&spans, "execute_tool bash");
    let ask = span(&spans, "permission bash");
    let chats: Vec<&ReceivedSpan> = spans.iter().filter(|s| s.name == "chat qwen3").collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    assert!(chats.iter().all(|c| c.is_child_of(turn)));
    assert!(call.is_child_of(turn) && ask.is_child_of(call));
    assert_eq!(turn.service_name.as_deref(), Some("agent-e2e"));
    assert_eq!(turn.str("gen_ai.provider.name"), Some("local"));
    assert_eq!(call.str("gen_ai.tool.call.id"), Some("call_1"));
    assert_eq!(ask.str("agentgate.permission.answered_by"), Some("auto"));
    assert_eq!(ask.str("agentgate.permission.decision"), Some("once"));
    let tokens = |s: &ReceivedSpan| {
        (
            s.int("gen_ai.usage.input_tokens"),
            s.int("gen_ai.usage.output_tokens"),
        )
    };
    let mut per_call: Vec<_> = chats.iter().map(|c| tokens(c)).collect();
    per_call.sort();
    assert_eq!(per_call, [(Some(11), Some(5)), (Some(23), Some(2))]);
    assert_eq!(tokens(turn), (Some(34), Some(7)));
    // A string array, as the conventions type it.
    let reasons: Vec<_> = chats
        .iter()
        .map(|c| c.attributes.get("gen_ai.response.finish_reasons"))
        .collect();
    let tool_call = Attr::Array(vec![Attr::Str("tool_call".into())]);
    assert!(reasons.contains(&Some(&tool_call)), "{reasons:?}");
    // No contents without the opt-in: neither the prompt nor the model's
    // call arguments are in any span (the ask's patterns, the command as
    // the approver saw it, are on the permission span only, as in the
    // audit log).
    let all = format!("{spans:?}");
    assert!(!all.contains("record a run"), "{all}");
    let others = format!(
        "{:?}",
        spans
            .iter()
            .filter(|s| s.name != ask.name)
            .collect::<Vec<_>>()
    );
    assert!(!others.contains("echo ran"), "{others}");
}

#[tokio::test]
async fn contents_are_exported_only_when_opted_in() {
    let sandbox = Sandbox::new("otel-contents");
    let _model = model(&sandbox).await;
    let receiver = OtlpReceiver::start();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        (
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            "true".to_string(),
        ),
    ];
    run(&sandbox, &env).await;
    let spans = receiver.wait_for(Duration::from_secs(5), |s| s.len() >= 5);
    let chats: Vec<&ReceivedSpan> = spans.iter().filter(|s| s.name == "chat qwen3").collect();
    let input = chats
        .iter()
        .find_map(|c| c.str("gen_ai.input.messages"))
        .expect("the input messages are recorded");
    assert!(input.contains("record a run"), "{input}");
    let output = chats
        .iter()
        .filter_map(|c| c.str("gen_ai.output.messages"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(output.contains("echo ran"), "{output}");
}

#[tokio::test]
async fn nothing_is_sent_when_no_endpoint_is_set() {
    let sandbox = Sandbox::new("otel-unset");
    let _model = model(&sandbox).await;
    let receiver = OtlpReceiver::start();
    // Variables that do not name an endpoint set nothing up.
    let env = [
        ("OTEL_SERVICE_NAME", "agent-e2e".to_string()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
    ];
    let (_, stderr) = run(&sandbox, &env).await;
    assert!(!stderr.contains("traces"), "{stderr}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(receiver.requests(), 0);
}

#[tokio::test]
async fn an_unusable_setting_is_named_and_the_run_goes_on() {
    let sandbox = Sandbox::new("otel-bad");
    let _model = model(&sandbox).await;
    let receiver = OtlpReceiver::start();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_string()),
    ];
    let (_, stderr) = run(&sandbox, &env).await;
    assert!(
        stderr.contains("traces are not exported")
            && stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL"),
        "{stderr}"
    );
    assert_eq!(receiver.requests(), 0);
}

#[tokio::test]
async fn agent_run_exports_over_grpc() {
    let sandbox = Sandbox::new("otel-grpc");
    let _model = model(&sandbox).await;
    let receiver = OtlpReceiver::start_grpc();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
    ];
    run(&sandbox, &env).await;
    let spans = receiver.wait_for(Duration::from_secs(5), |s| s.len() >= 5);
    let turn = span(&spans, "invoke_agent build");
    assert!(span(&spans, "execute_tool bash").is_child_of(turn));
    assert_eq!(turn.service_name.as_deref(), Some("agentgate"));
}
