//! `agent attach URL "/NAME ARGS"` runs the server's custom command NAME
//! there (`POST /session/{id}/command`), as `agent chat` runs it: the
//! model receives the expanded template, not the slash line. Text naming
//! no command of the server is sent as the prompt it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::attach_cli::serve;
use super::run_cli::{Sandbox, bodies, local_provider, openai_answer, openai_server, text};

#[tokio::test]
async fn a_slash_line_naming_a_server_command_runs_it_there() {
    let sandbox = Sandbox::new("attach-command");
    let model = openai_server(openai_answer("Reviewed."), openai_answer("Reviewed.")).await;
    local_provider(
        &sandbox,
        &model,
        r#", "command": {"review": {"template": "Review $ARGUMENTS now, line by line.", "description": "Review a file"}}"#,
    );
    let (mut server, url) = serve(&sandbox).await;

    let out = sandbox
        .agent(&["attach", &url, "/review calc.py"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "Reviewed.");
    let sent = bodies(&model).await;
    let asked: Vec<String> = sent
        .iter()
        .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .map(|b| b["messages"].to_string())
        .collect();
    assert!(
        asked
            .iter()
            .any(|m| m.contains("Review calc.py now, line by line.")),
        "the model got the template: {asked:?}"
    );
    assert!(
        !asked.iter().any(|m| m.contains("/review")),
        "not the slash line: {asked:?}"
    );

    // Not a command of the server: the text itself is the prompt.
    let out = sandbox.agent(&["attach", &url, "/nosuch thing"], &[]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last = bodies(&model).await;
    assert!(
        last.iter()
            .any(|b| b["messages"].to_string().contains("/nosuch thing")),
        "sent as typed"
    );
    server.kill().await.unwrap();
}
