//! `agent run` with hooks from the configuration and with structured
//! output (`--output-schema`, `-o`), against a loopback model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wiremock::MockServer;

use super::run_cli::{Sandbox, openai_answer, openai_call, openai_server, text};

/// The user's config (`$XDG_CONFIG_HOME/opencode/opencode.json`).
fn user_config(sandbox: &Sandbox, json: &Value) {
    let dir = sandbox.root.join("config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opencode.json"), json.to_string()).unwrap();
}

/// The project's config: the local model, plus `extra` keys.
fn project_config(sandbox: &Sandbox, server: &MockServer, extra: Value) {
    let mut config = json!({
        "model": "local/qwen3",
        "provider": {"local": {"options": {"baseURL": format!("{}/v1", server.uri())}}}
    });
    if let (Value::Object(config), Value::Object(extra)) = (&mut config, extra) {
        config.extend(extra);
    }
    sandbox.config(&config.to_string());
}

fn pre_tool_hook(command: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command, "timeout": 10}]}]}})
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

fn touch() -> wiremock::ResponseTemplate {
    openai_call(
        "bash",
        &json!({"command": "touch made-by-agent", "description": "make a file"}),
    )
}

#[tokio::test]
async fn a_user_hook_denies_a_call_even_with_auto_and_the_model_reads_why() {
    let sandbox = Sandbox::new("hook-deny");
    let server = openai_server(touch(), openai_answer("I could not.")).await;
    project_config(&sandbox, &server, json!({}));
    user_config(
        &sandbox,
        &pre_tool_hook(
            r#"grep -q '"command":"touch' && { echo 'no new files today' >&2; exit 2; }; exit 0"#,
        ),
    );
    let out = sandbox.agent(&["run", "--auto", "make a file"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!sandbox.project.join("made-by-agent").exists(), "{stderr}");
    assert!(stderr.contains("✗ bash"), "{stderr}");
    let second = bodies(&server).await[1]["messages"].to_string();
    assert!(second.contains("no new files today"), "{second}");
}

#[tokio::test]
async fn a_hook_saying_allow_does_not_answer_the_rules_ask() {
    let sandbox = Sandbox::new("hook-allow");
    let server = openai_server(touch(), openai_answer("Done.")).await;
    project_config(&sandbox, &server, json!({"permission": {"bash": "ask"}}));
    user_config(
        &sandbox,
        &pre_tool_hook(
            r#"touch hook-ran; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#,
        ),
    );
    let out = sandbox.agent(&["run", "make a file"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(
        sandbox.project.join("hook-ran").exists(),
        "the hook ran first: {stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("permission requested: bash (touch made-by-agent); auto-rejecting"),
        "{stderr}"
    );
    assert!(!sandbox.project.join("made-by-agent").exists());
}

#[tokio::test]
async fn a_crashing_hook_denies_and_is_reported_and_project_hooks_need_trust() {
    let sandbox = Sandbox::new("hook-crash");
    let server = openai_server(touch(), openai_answer("Blocked.")).await;
    // The project's hook would leave a mark if it ran.
    let mut project_hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"command": "touch project-hook-ran"}]}]}});
    project_config(&sandbox, &server, project_hooks.take());
    user_config(&sandbox, &pre_tool_hook("no-such-guard-script"));
    let out = sandbox.agent(&["run", "--auto", "make a file"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!sandbox.project.join("made-by-agent").exists(), "{stderr}");
    assert!(
        stderr.contains(
            "agent: PreToolUse hook `no-such-guard-script` failed: it exited with status 127"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("trust_project"),
        "the ignored project hook is named: {stderr}"
    );
    assert!(!sandbox.project.join("project-hook-ran").exists());
}

fn schema_file(sandbox: &Sandbox) -> String {
    let path = sandbox.root.join("schema.json");
    let schema = json!({
        "type": "object",
        "properties": {"code": {"type": "integer"}},
        "required": ["code"],
        "additionalProperties": false
    });
    std::fs::write(&path, schema.to_string()).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn output_schema_prints_the_validated_json_and_o_writes_the_last_message() {
    let sandbox = Sandbox::new("schema-ok");
    let server = openai_server(openai_answer("{\"code\": 1234}"), openai_answer("unused")).await;
    project_config(&sandbox, &server, json!({}));
    let schema = schema_file(&sandbox);
    let last = sandbox.root.join("last.txt");
    let last_arg = last.display().to_string();
    let out = sandbox
        .agent(
            &[
                "run",
                "--output-schema",
                &schema,
                "-o",
                &last_arg,
                "What is the code?",
            ],
            &[],
        )
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        text(&out.stdout),
        "{\"code\":1234}\n",
        "only the JSON on stdout"
    );
    assert_eq!(std::fs::read_to_string(&last).unwrap(), "{\"code\": 1234}");
    let first = bodies(&server).await[0]["messages"].to_string();
    assert!(
        first.contains("additionalProperties"),
        "the schema went with the prompt"
    );
}

#[tokio::test]
async fn output_schema_retries_once_then_validates() {
    let sandbox = Sandbox::new("schema-retry");
    let server = openai_server(
        openai_answer("The code is 1234."),
        openai_answer("{\"code\": 1234}"),
    )
    .await;
    project_config(&sandbox, &server, json!({}));
    let schema = schema_file(&sandbox);
    let out = sandbox
        .agent(
            &["run", "--output-schema", &schema, "What is the code?"],
            &[],
        )
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "{\"code\":1234}\n");
    assert!(
        stderr.contains("does not match the output schema (the answer is not valid JSON"),
        "{stderr}"
    );
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1]["messages"].to_string().contains("Answer again"));
}

#[tokio::test]
async fn output_schema_that_never_validates_exits_1_with_the_reason() {
    let sandbox = Sandbox::new("schema-never");
    let server = openai_server(
        openai_answer("{\"code\": \"1234\"}"),
        openai_answer("{\"code\": \"1234\"}"),
    )
    .await;
    project_config(&sandbox, &server, json!({}));
    let schema = schema_file(&sandbox);
    let last = sandbox.root.join("last.txt");
    let last_arg = last.display().to_string();
    let out = sandbox
        .agent(
            &[
                "run",
                "--output-schema",
                &schema,
                "--output-last-message",
                &last_arg,
                "code?",
            ],
            &[],
        )
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        text(&out.stdout).is_empty(),
        "nothing unvalidated on stdout"
    );
    assert!(
        stderr.contains(
            "agent: the answer did not match the output schema after 2 retries: /code: expected an integer, found a string"
        ),
        "{stderr}"
    );
    assert_eq!(bodies(&server).await.len(), 3);
    assert_eq!(
        std::fs::read_to_string(&last).unwrap(),
        "{\"code\": \"1234\"}"
    );

    // A schema this SDK cannot check is refused before anything runs.
    std::fs::write(&schema, r#"{"type": "array", "uniqueItems": true}"#).unwrap();
    let out = sandbox
        .agent(&["run", "--output-schema", &schema, "code?"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains("does not check (: uniqueItems)"),
        "{stderr}"
    );
}
