//! `agent run` end to end: the binary against local OpenAI-compatible and
//! Anthropic-compatible servers (wiremock on loopback), a rejection's exit
//! status, JSON lines, and the offline demo with and without `--auto`.
//! Every run gets a clean environment (no keys), its own home and data
//! directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A scratch project (with `notes.txt`) plus home and data directories.
pub struct Sandbox {
    pub root: PathBuf,
    pub project: PathBuf,
}

impl Sandbox {
    pub fn new(name: &str) -> Self {
        let root = std::env::temp_dir().join(format!("agent-run-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let project = root.join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::write(project.join("notes.txt"), "the launch code is 1234\n").unwrap();
        std::fs::write(project.join("README.md"), "# Scratch\nA test project.\n").unwrap();
        Sandbox { root, project }
    }

    pub fn config(&self, json: &str) {
        std::fs::write(self.project.join("opencode.json"), json).unwrap();
    }

    /// Runs `agent ARGS` in the project with only `env` set besides PATH,
    /// HOME and the XDG directories.
    pub async fn agent(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            // The demo's answers stream without pauses between words.
            .env("AGENT_DEMO_WORD_DELAY_MS", "0")
            .args(args)
            .current_dir(&self.project)
            .stdin(std::process::Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().await.unwrap();
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn sse(events: &[String]) -> ResponseTemplate {
    let body = events.join("\n\n") + "\n\n";
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_raw(body.into_bytes(), "text/event-stream")
}

/// An OpenAI Chat Completions stream calling `tool` with `args`.
pub fn openai_call(tool: &str, args: &Value) -> ResponseTemplate {
    let call = serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[
        {"index":0,"id":"call_1","type":"function","function":{"name":tool,"arguments":args.to_string()}}]}}]});
    sse(&[
        format!("data: {call}"),
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into(),
        "data: [DONE]".into(),
    ])
}

/// An OpenAI Chat Completions stream answering `answer` in two deltas.
pub fn openai_answer(answer: &str) -> ResponseTemplate {
    let (a, b) = answer.split_at(answer.len() / 2);
    let delta = |t: &str, finish: Option<&str>| serde_json::json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":finish}]});
    sse(&[
        format!("data: {}", delta(a, None)),
        format!("data: {}", delta(b, Some("stop"))),
        "data: [DONE]".into(),
    ])
}

/// A server whose first chat request gets `first` and later ones `then`.
pub async fn openai_server(first: ResponseTemplate, then: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(then)
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

pub fn local_provider(sandbox: &Sandbox, server: &MockServer, extra: &str) {
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}{extra}}}"#,
        server.uri()
    ));
}

pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[tokio::test]
async fn run_completes_a_task_with_a_tool_call_on_an_openai_compatible_server() {
    let sandbox = Sandbox::new("openai");
    let notes = sandbox.project.join("notes.txt");
    let server = openai_server(
        openai_call("read", &serde_json::json!({"filePath": notes})),
        openai_answer("The code is 1234."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "What is the code?"], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "The code is 1234.", "{stderr}");
    assert!(stderr.contains("→ read"), "{stderr}");
    assert!(!stderr.contains("demo model"), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let second = bodies[1]["messages"].to_string();
    assert!(second.contains("the launch code is 1234"), "{second}");
}

#[tokio::test]
async fn run_completes_a_task_with_a_tool_call_on_an_anthropic_compatible_server() {
    let sandbox = Sandbox::new("anthropic");
    let notes = sandbox.project.join("notes.txt");
    let server = MockServer::start().await;
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}");
    let start = event(
        "message_start",
        serde_json::json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",
            "model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
    );
    let call = sse(&[
        start.clone(),
        event(
            "content_block_start",
            serde_json::json!({"type":"content_block_start","index":0,
            "content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,
            "delta":{"type":"input_json_delta","partial_json":serde_json::json!({"filePath": notes}).to_string()}}),
        ),
        event(
            "content_block_stop",
            serde_json::json!({"type":"content_block_stop","index":0}),
        ),
        event(
            "message_delta",
            serde_json::json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}),
        ),
        event("message_stop", serde_json::json!({"type":"message_stop"})),
    ]);
    let answer = sse(&[
        start,
        event(
            "content_block_start",
            serde_json::json!({"type":"content_block_start","index":0,
            "content_block":{"type":"text","text":""}}),
        ),
        event(
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,
            "delta":{"type":"text_delta","text":"It is 1234."}}),
        ),
        event(
            "content_block_stop",
            serde_json::json!({"type":"content_block_stop","index":0}),
        ),
        event(
            "message_delta",
            serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
        ),
        event("message_stop", serde_json::json!({"type":"message_stop"})),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(call)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(answer)
        .with_priority(2)
        .mount(&server)
        .await;
    let env = [
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
        ("ANTHROPIC_BASE_URL", format!("{}/v1", server.uri())),
    ];
    // The key alone picks the provider; --model names the model.
    let out = sandbox
        .agent(
            &[
                "run",
                "--model",
                "anthropic/claude-sonnet-4-5",
                "What is the code?",
            ],
            &env,
        )
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "It is 1234.", "{stderr}");
    assert!(stderr.contains("→ read"), "{stderr}");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].headers.get("x-api-key").unwrap(), "test-key");
}

#[tokio::test]
async fn a_rejected_ask_stops_the_run_with_a_nonzero_status_and_deny_still_denies_with_auto() {
    let sandbox = Sandbox::new("reject");
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": "touch made-by-agent", "description": "make a file"}),
        ),
        openai_answer("Done."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let out = sandbox.agent(&["run", "make a file"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("permission requested: bash (touch made-by-agent); auto-rejecting"),
        "{stderr}"
    );
    assert!(!sandbox.project.join("made-by-agent").exists());
    assert_eq!(
        bodies(&server).await.len(),
        1,
        "the loop stopped at the rejection"
    );

    // --auto answers asks, never a deny rule.
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": "touch made-by-agent", "description": "make a file"}),
        ),
        openai_answer("Could not."),
    )
    .await;
    local_provider(
        &sandbox,
        &server,
        r#", "permission": {"bash": {"*": "ask", "touch *": "deny"}}"#,
    );
    let out = sandbox.agent(&["run", "--auto", "make a file"], &[]).await;
    assert!(
        !sandbox.project.join("made-by-agent").exists(),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("✗ bash"),
        "{}",
        text(&out.stderr)
    );

    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": "touch made-by-agent", "description": "make a file"}),
        ),
        openai_answer("Made."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let out = sandbox
        .agent(
            &["run", "--dangerously-skip-permissions", "make a file"],
            &[],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(sandbox.project.join("made-by-agent").exists());
}

#[tokio::test]
async fn the_configs_mcp_servers_are_started_and_a_failing_one_is_reported_not_fatal() {
    let sandbox = Sandbox::new("mcp");
    let server = openai_server(openai_answer("Fine."), openai_answer("Fine.")).await;
    local_provider(
        &sandbox,
        &server,
        r#", "mcp": {"broken": {"type": "local", "command": ["false"]}}"#,
    );
    // A project's own MCP servers start once it is trusted.
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());
    let out = sandbox.agent(&["run", "hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("MCP server broken failed"), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "Fine.");
}

#[tokio::test]
async fn format_json_prints_one_event_per_line_ending_with_the_result() {
    let sandbox = Sandbox::new("json");
    let notes = sandbox.project.join("notes.txt");
    let server = openai_server(
        openai_call("read", &serde_json::json!({"filePath": notes})),
        openai_answer("The code is 1234."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox
        .agent(&["run", "--format", "json", "What is the code?"], &[])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(types.contains(&"message.part.delta"), "{types:?}");
    assert!(types.contains(&"message.part.updated"), "{types:?}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn.finished");
    assert_eq!(last["stop"], "done");
    assert_eq!(last["text"], "The code is 1234.");
}

#[tokio::test]
async fn the_demo_runs_offline_its_ask_rejected_then_allowed_with_auto_and_continued() {
    let sandbox = Sandbox::new("demo");
    let out = sandbox.agent(&["run", "What is this project?"], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let notices: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("demo model"))
        .collect();
    assert_eq!(notices.len(), 1, "{stderr}");
    assert!(stderr.contains("→ list"), "{stderr}");
    assert!(stderr.contains("→ read"), "{stderr}");
    assert!(
        stderr.contains("permission requested: bash (git status); auto-rejecting"),
        "{stderr}"
    );
    assert!(stdout.contains("offline demo model"), "{stdout}");

    let out = sandbox
        .agent(&["run", "--auto", "What is this project?"], &[])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("auto-rejecting"), "{stderr}");
    assert!(stdout.contains("Here is what I saw."), "{stdout}");
    assert!(stdout.contains("A test project."), "{stdout}");
    assert!(stdout.contains("`git status` ran"), "{stdout}");

    // The session was stored: --continue resumes it (same session id).
    let first = sandbox
        .agent(&["run", "--format", "json", "--auto", "hello"], &[])
        .await;
    let id = |out: &Output| -> String {
        let last: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
        last["session_id"].as_str().unwrap().to_string()
    };
    let again = sandbox
        .agent(
            &["run", "--continue", "--format", "json", "--auto", "again"],
            &[],
        )
        .await;
    assert_eq!(id(&first), id(&again));
    let by_id = sandbox
        .agent(
            &[
                "run",
                "--session",
                &id(&first),
                "--format",
                "json",
                "--auto",
                "more",
            ],
            &[],
        )
        .await;
    assert_eq!(id(&first), id(&by_id));

    // The sessions commands read the same store.
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert_eq!(list.lines().count(), 3, "{list}");
    assert!(list.contains(&id(&first)), "{list}");
    let show = text(
        &sandbox
            .agent(&["sessions", "show", &id(&first)], &[])
            .await
            .stdout,
    );
    assert!(show.contains("[user]\nhello"), "{show}");
    assert!(show.contains("tool bash git status (ok)"), "{show}");
    let export = sandbox
        .agent(&["sessions", "export", &id(&first)], &[])
        .await;
    let export: Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(export["session"]["id"], id(&first));
    assert!(export["messages"].as_array().unwrap().len() >= 6);
}

#[tokio::test]
async fn debug_config_names_the_file_of_each_setting_and_debug_prompt_prints_the_prompt() {
    let sandbox = Sandbox::new("debug");
    sandbox.config(r#"{"model": "ollama/qwen3:8b", "instructions": []}"#);
    std::fs::write(sandbox.project.join("AGENTS.md"), "Indent with tabs.").unwrap();
    let out = text(&sandbox.agent(&["debug", "config"], &[]).await.stdout);
    assert!(out.contains("model = \"ollama/qwen3:8b\""), "{out}");
    assert!(out.contains("opencode.json"), "{out}");
    let out = sandbox.agent(&["debug", "prompt", "build"], &[]).await;
    let prompt = text(&out.stdout);
    assert!(prompt.starts_with("model: ollama/qwen3:8b"), "{prompt}");
    assert!(prompt.contains("Indent with tabs."), "{prompt}");
    assert!(
        prompt.contains(&format!("{}", sandbox.project.display())),
        "{prompt}"
    );
    let out = sandbox.agent(&["debug", "prompt", "nope"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
}

/// The prompt may come on stdin.
#[tokio::test]
async fn the_prompt_may_come_on_stdin() {
    let sandbox = Sandbox::new("stdin");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"));
    let mut child = cmd
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .args(["run", "--auto"])
        .current_dir(&sandbox.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"What is this project?\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Here is what I saw."));
}

/// `agent run --auto` approves the `external_directory` ask for a path the
/// command names, and that never opens the path to the sandbox: the
/// command runs and the kernel refuses the write (only a person's grant
/// widens the sandbox). A `once` approval of a protected name the
/// command creates does not keep it either.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn auto_approvals_never_widen_the_sandbox() {
    let sandbox = Sandbox::new("auto-outside");
    let outside = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("auto-outside-{}", std::process::id()));
    std::fs::create_dir_all(&outside).unwrap();
    let outside = outside.canonicalize().unwrap();
    let temp = std::env::temp_dir().canonicalize().unwrap();
    if outside.starts_with(&temp) || outside.starts_with("/tmp") {
        eprintln!(
            "skipped: the target directory is under the temporary directory, which the sandbox leaves writable"
        );
        return;
    }
    let target = outside.join("stolen.txt");
    let command = format!(
        "echo pwned > {}; mkdir -p .opencode/agent && echo evil > .opencode/agent/x.md",
        target.display()
    );
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": command, "description": "write outside"}),
        ),
        openai_answer("Done."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox
        .agent(&["run", "--auto", "write outside"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(
        !target.exists(),
        "--auto opened {} to the sandbox: {stderr}",
        outside.display()
    );
    assert!(!sandbox.project.join(".opencode").exists(), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2, "{stderr}");
    let result = bodies[1].to_string();
    assert!(
        result.contains("denied")
            || result.contains("Read-only")
            || result.contains("not permitted"),
        "the model is not told the write was refused: {result}"
    );
    assert!(result.contains("does not keep it"), "{result}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[tokio::test]
async fn verbose_shows_a_commands_output_and_an_edits_diff() {
    let sandbox = Sandbox::new("verbose");
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": "echo hello-from-the-command", "description": "say hello"}),
        ),
        openai_answer("Said."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "--verbose", "say hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("│ hello-from-the-command"), "{stderr}");
    // Without --verbose the output stays off the screen.
    let quiet = sandbox.agent(&["run", "say hello"], &[]).await;
    assert!(!text(&quiet.stderr).contains("│ hello-from-the-command"));

    let sandbox = Sandbox::new("verbose-edit");
    let server = openai_server(
        openai_call(
            "edit",
            &serde_json::json!({"filePath": "notes.txt", "oldString": "1234", "newString": "5678"}),
        ),
        openai_answer("Changed."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "-v", "change the code"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("│ -the launch code is 1234"), "{stderr}");
    assert!(stderr.contains("│ +the launch code is 5678"), "{stderr}");
}

/// A prompt argument and piped stdin are sent together, as `opencode run`
/// joins them (`git diff | agent run "review this"`).
#[tokio::test]
async fn a_prompt_argument_and_piped_stdin_are_sent_together() {
    let sandbox = Sandbox::new("stdin-and-arg");
    let server = openai_server(openai_answer("Reviewed."), openai_answer("Reviewed.")).await;
    local_provider(&sandbox, &server, "");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["run", "review this diff"])
        .current_dir(&sandbox.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"-old line\n+new line\n").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = bodies(&server).await[0].to_string();
    assert!(
        sent.contains("review this diff\\n-old line\\n+new line"),
        "{sent}"
    );
}

/// `--agent` naming a sub-agent or a hidden agent warns and runs the
/// default agent, as `opencode run` does; an unknown name lists the
/// choices.
#[tokio::test]
async fn agent_flag_falls_back_from_sub_agents_and_lists_choices_for_unknown_names() {
    let sandbox = Sandbox::new("agent-choice");
    let server = openai_server(openai_answer("Fine."), openai_answer("Fine.")).await;
    local_provider(&sandbox, &server, "");
    for (name, why) in [
        ("general", "is a sub-agent"),
        ("title", "is a hidden agent"),
    ] {
        let out = sandbox.agent(&["run", "--agent", name, "hello"], &[]).await;
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(
            stderr.contains("falling back to the default agent"),
            "{stderr}"
        );
    }
    // The turns ran as the default agent.
    let sessions = sandbox.agent(&["sessions", "list"], &[]).await;
    assert!(
        !text(&sessions.stdout).contains("general"),
        "{}",
        text(&sessions.stdout)
    );
    let out = sandbox
        .agent(&["run", "--agent", "nope", "hello"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no agent \"nope\": choose one of build, plan"),
        "{stderr}"
    );
}

/// A command whose text would redraw the terminal (a carriage return
/// that writes a harmless command over the real one, an escape sequence)
/// is shown with those characters written out, so the line about the ask
/// names the real command.
#[tokio::test]
async fn an_asks_command_cannot_redraw_the_line_that_shows_it() {
    let sandbox = Sandbox::new("ask-redraw");
    let spoof = "touch pwned\r\u{1b}[2Kls -la";
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": spoof, "description": "list"}),
        ),
        openai_answer("Done."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let out = sandbox.agent(&["run", "list the files"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "permission requested: bash (touch pwned\\u{d}\\u{1b}[2Kls -la); auto-rejecting"
        ),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "{stderr:?}"
    );
    assert!(!sandbox.project.join("pwned").exists());
}
