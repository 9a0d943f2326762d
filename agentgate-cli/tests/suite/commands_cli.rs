//! Custom commands and skills through the binary, against a local
//! OpenAI-compatible server: `agent commands`, `agent run --command` (the
//! template's arguments, a `!` shell line asked, rejected or denied before
//! anything is sent, an `@file` the read rules refuse left out), `/help`
//! and `/NAME` in `agent chat`, and skills (listed in the system prompt,
//! loaded by the `skill` tool, refused by the `skill` permission).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::run_cli::{
    Sandbox, bodies, local_provider, openai_answer, openai_call, openai_server, text,
};

fn write(sandbox: &Sandbox, relative: &str, content: &str) {
    let path = sandbox.project.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// The text of the last user message of a chat-completions request.
fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn system(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn commands_are_listed_from_files_config_and_skills() {
    let sandbox = Sandbox::new("cmd-list");
    write(
        &sandbox,
        ".opencode/commands/team/review.md",
        "---\ndescription: Review a file\nagent: plan\n---\nReview $1.\n",
    );
    write(
        &sandbox,
        ".opencode/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\n---\nRun make deploy.\n",
    );
    sandbox.config(
        r#"{"command": {"hello": {"template": "Say hello to $ARGUMENTS", "subtask": true}}}"#,
    );
    let out = sandbox.agent(&["commands"], &[]).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("/deploy") && lines[0].contains("skill"),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("/hello") && lines[1].contains("sub-agent"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("/team/review") && lines[2].contains("agent plan"),
        "{stdout}"
    );

    let out = sandbox.agent(&["commands", "--json"], &[]).await;
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let review = &listed.as_array().unwrap()[2];
    assert_eq!(review["name"], "team/review");
    assert_eq!(review["source"], "file");
    assert_eq!(review["arguments"], json!(["$1"]));
    assert_eq!(listed[1]["source"], "config");
    assert_eq!(listed[1]["subtask"], true);
}

#[tokio::test]
async fn run_command_sends_the_expanded_template() {
    let sandbox = Sandbox::new("cmd-args");
    let server = openai_server(openai_answer("Reviewed."), openai_answer("Reviewed.")).await;
    local_provider(&sandbox, &server, "");
    write(
        &sandbox,
        ".opencode/command/review.md",
        "---\ndescription: Review\n---\n\nCompare $1 with $2; all: $ARGUMENTS\n\n",
    );
    let out = sandbox
        .agent(&["run", "--command", "review", "a.rs", "\"b c\"", "d"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "Reviewed.");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    assert_eq!(
        last_user(&bodies[0]),
        json!("Compare a.rs with b c d; all: a.rs \"b c\" d").to_string()
    );

    // An unknown command names the known ones; nothing is sent.
    let out = sandbox.agent(&["run", "--command", "nope"], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("/review"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_shell_expansion_goes_through_the_bash_rules() {
    let sandbox = Sandbox::new("cmd-shell");
    let server = openai_server(openai_answer("Done."), openai_answer("Done.")).await;
    write(
        &sandbox,
        ".opencode/commands/mark.md",
        "Output: !`touch marker && echo shell-said-hi`\n",
    );

    // Asked, and `agent run` cannot ask: rejected, nothing ran or was sent.
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let out = sandbox.agent(&["run", "--command", "mark"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not run"), "{stderr}");
    assert!(stderr.contains("--auto"), "{stderr}");
    assert!(
        !sandbox.project.join("marker").exists(),
        "the shell line ran"
    );
    assert!(server.received_requests().await.unwrap().is_empty());

    // Denied by a rule: not even --auto runs it.
    local_provider(
        &sandbox,
        &server,
        r#", "permission": {"bash": {"touch *": "deny"}}"#,
    );
    let out = sandbox
        .agent(&["run", "--auto", "--command", "mark"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("prevents you"), "{stderr}");
    assert!(
        !sandbox.project.join("marker").exists(),
        "the shell line ran"
    );
    assert!(server.received_requests().await.unwrap().is_empty());

    // Allowed once with --auto: it runs and its output is sent.
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let out = sandbox
        .agent(&["run", "--auto", "--command", "mark"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(sandbox.project.join("marker").exists(), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    let user = last_user(&bodies[0]);
    assert!(user.contains("Output: shell-said-hi"), "{user}");
    assert!(!user.contains("!`"), "{user}");
}

#[tokio::test]
async fn a_file_reference_the_read_rules_deny_is_left_out() {
    let sandbox = Sandbox::new("cmd-file");
    let server = openai_server(openai_answer("Checked."), openai_answer("Checked.")).await;
    local_provider(
        &sandbox,
        &server,
        r#", "permission": {"read": {"*.env": "deny"}}"#,
    );
    write(&sandbox, ".env", "API_KEY=hunter2-secret\n");
    write(
        &sandbox,
        ".opencode/commands/check.md",
        "Check @.env and @notes.txt, then @missing.txt.\n",
    );
    let out = sandbox.agent(&["run", "--command", "check"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("@.env was not included"), "{stderr}");
    let bodies = bodies(&server).await;
    let sent = bodies[0]["messages"].to_string();
    assert!(!sent.contains("hunter2"), "{sent}");
    assert!(sent.contains("the launch code is 1234"), "{sent}");
}

#[tokio::test]
async fn a_skill_is_listed_and_loaded_by_the_skill_tool() {
    let sandbox = Sandbox::new("skill-load");
    write(
        &sandbox,
        ".opencode/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\n---\nRun make deploy-now, never by hand.\n",
    );
    write(
        &sandbox,
        ".opencode/skills/deploy/scripts/check.sh",
        "#!/bin/sh\n",
    );
    let server = openai_server(
        openai_call("skill", &json!({"name": "deploy"})),
        openai_answer("Deploying."),
    )
    .await;
    local_provider(&sandbox, &server, "");
    let out = sandbox.agent(&["run", "deploy it"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let first = system(&bodies[0]);
    assert!(first.contains("<name>deploy</name>"), "{first}");
    assert!(first.contains("Deploy the app"), "{first}");
    assert!(tool_names(&bodies[0]).contains(&"skill".to_string()));
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("Run make deploy-now"), "{result}");
    assert!(result.contains("scripts/check.sh"), "{result}");
}

#[tokio::test]
async fn the_skill_permission_refuses_and_hides_skills() {
    let sandbox = Sandbox::new("skill-deny");
    write(
        &sandbox,
        ".opencode/skill/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\n---\nSECRET-STEPS\n",
    );
    write(
        &sandbox,
        ".opencode/skill/lint/SKILL.md",
        "---\nname: lint\ndescription: Lint it\n---\nRun the linter.\n",
    );
    let server = openai_server(
        openai_call("skill", &json!({"name": "deploy"})),
        openai_answer("Cannot."),
    )
    .await;
    local_provider(
        &sandbox,
        &server,
        r#", "permission": {"skill": {"deploy": "deny"}}"#,
    );
    let out = sandbox.agent(&["run", "deploy it"], &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = bodies(&server).await;
    let first = system(&sent[0]);
    assert!(!first.contains("<name>deploy</name>"), "{first}");
    assert!(first.contains("<name>lint</name>"), "{first}");
    let result = sent[1]["messages"].to_string();
    assert!(!result.contains("SECRET-STEPS"), "{result}");
    assert!(result.contains("prevents you"), "{result}");

    // `skill` disabled for the agent: no section, no tool.
    let server = openai_server(openai_answer("Ok."), openai_answer("Ok.")).await;
    local_provider(&sandbox, &server, r#", "permission": {"skill": "deny"}"#);
    let out = sandbox.agent(&["run", "hello"], &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let later = bodies(&server).await;
    assert!(!system(&later[0]).contains("available_skills"));
    assert!(!tool_names(&later[0]).contains(&"skill".to_string()));
}

#[tokio::test]
async fn chat_help_lists_commands_and_answers_unknown_ones_locally() {
    use tokio::io::AsyncWriteExt;
    let sandbox = Sandbox::new("cmd-chat");
    let server = openai_server(openai_answer("Greeted."), openai_answer("Greeted.")).await;
    local_provider(&sandbox, &server, "");
    write(
        &sandbox,
        ".opencode/commands/greet.md",
        "---\ndescription: Greet someone\n---\nGreet $1 warmly.\n",
    );
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .arg("chat")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .current_dir(&sandbox.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"/help\n/nope\n/greet Ada\n/exit\n")
        .await
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("/greet  Greet someone"), "{stderr}");
    assert!(stderr.contains("unknown command /nope"), "{stderr}");
    assert!(stdout.contains("Greeted."), "{stdout}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1, "only /greet reached the model");
    assert_eq!(
        last_user(&bodies[0]),
        json!("Greet Ada warmly.").to_string()
    );
}

#[tokio::test]
async fn a_subtask_command_runs_as_a_sub_agent() {
    let sandbox = Sandbox::new("cmd-subtask");
    let server = openai_server(openai_answer("Sub-agent summary."), openai_answer("unused")).await;
    local_provider(
        &sandbox,
        &server,
        r#", "command": {"sum": {"template": "Summarize $1", "subtask": true, "description": "sum up"}}"#,
    );
    let out = sandbox
        .agent(&["run", "--command", "sum", "notes.txt"], &[])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("sub-agent general"), "{stderr}");
    assert!(stdout.contains("Sub-agent summary."), "{stdout}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    assert_eq!(
        last_user(&bodies[0]),
        json!("Summarize notes.txt").to_string()
    );
}
