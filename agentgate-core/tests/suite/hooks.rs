//! Hooks (`src/hooks/`): what they may change in the loop, and what they
//! may not. Shell hooks run real `sh` processes, so these tests run on the
//! real clock (a paused clock would fire a hook's timeout at once).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::common::*;
use agentgate_core::testing::Script;
use agentgate_core::{
    ConfigLoader, Event, FinishReason, Hook, HookError, HookEvent, HookEventName, HookOutcome,
    PromptError, ShellHook, StopReason, ToolMatcher,
};
use agentgate_permission::Reply;
use serde_json::json;

/// Refuses every call of one tool; counts what it saw.
struct Refuse {
    tool: &'static str,
    seen: std::sync::Mutex<Vec<HookEventName>>,
}

#[async_trait::async_trait]
impl Hook for Refuse {
    fn name(&self) -> &str {
        "refuse"
    }
    async fn run(&self, event: &HookEvent) -> Result<HookOutcome, HookError> {
        self.seen.lock().unwrap().push(event.hook_event_name);
        if event.tool_name.as_deref() == Some(self.tool) {
            return Ok(HookOutcome::deny(format!(
                "{} is switched off today",
                self.tool
            )));
        }
        Ok(HookOutcome::proceed())
    }
}

fn shell(event: HookEventName, matcher: &str, script: &str) -> Arc<dyn Hook> {
    Arc::new(ShellHook::new(event, script).matcher(ToolMatcher::new(matcher)))
}

fn done() -> StopReason {
    StopReason::Done {
        finish: FinishReason::Stop,
    }
}

#[tokio::test]
async fn a_hook_that_denies_a_call_stops_it_before_any_side_effect() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "hi"}))]),
        Script::reply("ok"),
    ]);
    let echo = Echo::default();
    let refuse = Arc::new(Refuse {
        tool: "echo",
        seen: Default::default(),
    });
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(echo.clone()).hook(refuse.clone() as Arc<dyn Hook>)
    })
    .await;

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(
        result.stop,
        done(),
        "the model reads the refusal and goes on"
    );
    assert!(echo.calls.lock().unwrap().is_empty(), "the tool never ran");
    let (_, output, is_error) = &results(&model.requests()[1])[0];
    assert!(is_error);
    assert!(output.contains("echo is switched off today"), "{output}");
    assert_eq!(
        *refuse.seen.lock().unwrap(),
        [
            HookEventName::UserPromptSubmit,
            HookEventName::PreToolUse,
            HookEventName::Stop
        ],
        "no PostToolUse for a call that did not run"
    );
}

#[tokio::test]
async fn a_hook_saying_allow_for_an_asked_call_is_still_asked() {
    let model = model([
        Script::calls([("c1", "bash", json!({"command": "make deploy"}))]),
        Script::reply("unreachable"),
    ]);
    let bash = Bash::default();
    let allow = r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"trust me"}}'"#;
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(bash.clone())
            .hook(shell(HookEventName::PreToolUse, "Bash", allow))
    })
    .await;
    let seen = approver(engine.permissions(), |_| Reply::reject());

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, StopReason::Rejected);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "the rule's ask still reached the user");
    assert_eq!(seen[0].permission, "bash");
    assert!(bash.ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_hook_saying_ask_turns_an_allowed_call_into_an_ask() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "hi"}))]),
        Script::reply("unreachable"),
    ]);
    let echo = Echo::default();
    let ask = r#"echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"echo talks to production"}}'"#;
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(echo.clone())
            .hook(shell(HookEventName::PreToolUse, "echo", ask))
    })
    .await;
    let seen = approver(engine.permissions(), |_| Reply::reject());

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, StopReason::Rejected);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].permission, "hook");
    assert_eq!(seen[0].patterns, ["echo"]);
    assert_eq!(seen[0].metadata["reason"], "echo talks to production");
    assert!(echo.calls.lock().unwrap().is_empty());
}

/// Runs one `echo` call under `hook` (a PreToolUse shell hook); returns
/// what the model read back, whether echo ran, and the hook.failed events.
async fn echo_under(hook: ShellHook) -> (String, bool, Vec<Event>) {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "hi"}))]),
        Script::reply("ok"),
    ]);
    let echo = Echo::default();
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(echo.clone()).hook(Arc::new(hook) as Arc<dyn Hook>)
    })
    .await;
    let mut events = engine.subscribe();
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(result.stop, done());
    let mut failed = Vec::new();
    while let Ok(event) = events.try_recv() {
        if matches!(event, Event::HookFailed { .. }) {
            failed.push(event);
        }
    }
    let (_, output, is_error) = results(&model.requests()[1]).remove(0);
    assert!(is_error || !echo.calls.lock().unwrap().is_empty());
    let ran = !echo.calls.lock().unwrap().is_empty();
    (output, ran, failed)
}

#[tokio::test]
async fn a_crashing_pre_hook_denies_the_call_and_is_reported() {
    let (output, ran, failed) = echo_under(ShellHook::new(
        HookEventName::PreToolUse,
        "echo 'jq: command not found' >&2; exit 127",
    ))
    .await;
    assert!(!ran, "fails closed");
    assert!(output.contains("failed"), "{output}");
    assert!(output.contains("127"), "{output}");
    assert!(output.contains("jq: command not found"), "{output}");
    assert_eq!(failed.len(), 1);
    let Event::HookFailed { event, error, .. } = &failed[0] else {
        unreachable!()
    };
    assert_eq!(event, "PreToolUse");
    assert!(error.contains("127"), "{error}");
}

#[tokio::test]
async fn a_pre_hook_that_times_out_or_prints_garbage_denies_the_call() {
    let slow =
        ShellHook::new(HookEventName::PreToolUse, "sleep 30").timeout(Duration::from_millis(300));
    let (output, ran, failed) = echo_under(slow).await;
    assert!(!ran);
    assert!(output.contains("did not finish within 0.3 s"), "{output}");
    assert_eq!(failed.len(), 1);

    let garbage = ShellHook::new(HookEventName::PreToolUse, "echo 'sure, go ahead'");
    let (output, ran, failed) = echo_under(garbage).await;
    assert!(!ran);
    assert!(output.contains("not valid"), "{output}");
    assert_eq!(failed.len(), 1);

    let exit2 = ShellHook::new(
        HookEventName::PreToolUse,
        "echo 'not on Fridays' >&2; exit 2",
    );
    let (output, ran, failed) = echo_under(exit2).await;
    assert!(!ran);
    assert!(output.contains("not on Fridays"), "{output}");
    assert!(failed.is_empty(), "exit 2 is an answer, not a failure");

    let other_tool =
        ShellHook::new(HookEventName::PreToolUse, "exit 1").matcher(ToolMatcher::new("bash"));
    let (_, ran, failed) = echo_under(other_tool).await;
    assert!(
        ran,
        "a hook whose matcher does not name the tool does not run"
    );
    assert!(failed.is_empty());
}

#[tokio::test]
async fn post_hook_context_reaches_the_next_request() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "hi"}))]),
        Script::reply("ok"),
    ]);
    // The hook reads the call from stdin and says something about it.
    let post = r#"input=$(cat); case "$input" in *'"tool_response"'*'"output":"hi"'*) echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint: 2 warnings in src/lib.rs"}}';; *) exit 1;; esac"#;
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(Echo::default())
            .hook(shell(HookEventName::PostToolUse, "echo", post))
    })
    .await;

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, done());
    let (_, output, is_error) = &results(&model.requests()[1])[0];
    assert!(!is_error);
    assert!(output.starts_with("hi"), "{output}");
    assert!(
        output.contains("<hook_context>\nlint: 2 warnings in src/lib.rs\n</hook_context>"),
        "{output}"
    );
}

#[tokio::test]
async fn prompt_hooks_refuse_or_add_context() {
    let model = model([Script::reply("ok")]);
    let refuse = r#"grep -q password && { echo '{"decision":"block","reason":"the prompt holds a password"}'; exit 0; } || echo 'The team uses tabs.'"#;
    let (engine, session) = setup(model.clone(), |b| {
        b.hook(shell(HookEventName::UserPromptSubmit, "", refuse))
    })
    .await;

    let refused = engine
        .prompt(&session.id, "my password is hunter2")
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, PromptError::HookRefused(reason) if reason.contains("holds a password")),
        "{refused:?}"
    );
    assert!(
        engine.messages(&session.id).await.unwrap().is_empty(),
        "not stored"
    );

    engine.prompt(&session.id, "format the code").await.unwrap();
    let request = &model.requests()[0];
    let user = format!("{:?}", request.messages.last().unwrap());
    assert!(user.contains("format the code"), "{user}");
    assert!(user.contains("The team uses tabs."), "{user}");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_projects_hooks_run_only_when_the_user_config_trusts_them() {
    let root = agentgate_testing::scratch_dir("agentgate-core-hooks-config");
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let entry = |command: &str| {
        json!({"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": command, "timeout": 5}]}]}})
            .to_string()
    };
    write(
        &home.join(".config/opencode/opencode.json"),
        &entry("user-guard"),
    );
    write(&project.join("opencode.json"), &entry("project-guard"));
    // A project vouching for itself counts for nothing.
    write(
        &project.join(".opencode/opencode.json"),
        r#"{"hooks": {"trust_project": true, "Stop": [{"hooks": [{"command": "notify"}]}]}}"#,
    );
    let load = || {
        ConfigLoader::new(&project)
            .home(&home)
            .env(|_| None)
            .load()
            .unwrap_or_else(|e| panic!("{e}"))
    };

    let config = load();
    let commands: Vec<&str> = config.hooks.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(commands, ["user-guard"]);
    assert_eq!(config.hooks[0].event, HookEventName::PreToolUse);
    assert_eq!(config.hooks[0].timeout, Some(Duration::from_secs(5)));
    let ignored: Vec<&str> = config
        .warnings
        .iter()
        .filter(|w| w.path == "hooks")
        .map(|w| w.file.as_str())
        .collect();
    assert_eq!(ignored.len(), 2, "{:?}", config.warnings);
    assert!(
        config
            .warnings
            .iter()
            .all(|w| w.path != "hooks" || w.message.contains("trust_project"))
    );

    write(
        &home.join(".config/opencode/opencode.json"),
        &json!({"hooks": {"trust_project": true}}).to_string(),
    );
    let config = load();
    let commands: Vec<&str> = config.hooks.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(commands, ["project-guard", "notify"]);

    // A wrong event name is an error naming the key path.
    write(
        &project.join("opencode.json"),
        r#"{"hooks": {"PreToolCall": []}}"#,
    );
    let error = ConfigLoader::new(&project)
        .home(&home)
        .env(|_| None)
        .load()
        .unwrap_err()
        .to_string();
    assert!(error.contains("hooks.PreToolCall"), "{error}");
    assert!(error.contains("PreToolUse"), "{error}");
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn hooks_see_and_refuse_sub_agents_calls() {
    use agentgate_core::permission::PermissionConfig;
    use agentgate_core::{AgentEnvironment, Agents, Engine, Session, TaskSettings};

    let model = model([
        Script::calls([(
            "t1",
            "task",
            json!({"description": "look around", "prompt": "list files", "subagent_type": "general"}),
        )]),
        // The child calls bash; the hook refuses it.
        Script::calls([("b1", "bash", json!({"command": "ls"}))]),
        Script::reply("the hook said no"),
        Script::reply("done"),
    ]);
    let env = AgentEnvironment::new("/data/app", "/tmp/app", "/work/proj");
    let user: PermissionConfig = serde_json::from_str(r#"{"*": "allow"}"#).unwrap();
    let bash = Bash::default();
    let refuse = Arc::new(Refuse {
        tool: "bash",
        seen: Default::default(),
    });
    let engine = Engine::builder(model.clone())
        .agents(Agents::builtin(&env, &user))
        .task_tool(TaskSettings::default())
        .tool(bash.clone())
        .hook(refuse.clone() as Arc<dyn Hook>)
        .build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, done());
    assert!(
        bash.ran.lock().unwrap().is_empty(),
        "the child's bash never ran"
    );
    let (_, output, is_error) = &results(&model.requests()[2])[0];
    assert!(is_error);
    assert!(output.contains("bash is switched off today"), "{output}");
    let seen = refuse.seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .filter(|e| **e == HookEventName::PreToolUse)
            .count(),
        2,
        "the parent's task call and the child's bash call: {seen:?}"
    );
}
