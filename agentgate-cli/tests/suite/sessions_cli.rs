//! `agent sessions list | show | delete | rename | fork` and `agent run
//! --title`: newest first with titles and times, errors in CLI words, and
//! titles written by the configured `small_model`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer};

use super::run_cli::{Sandbox, bodies, openai_answer, text};

/// The session id of a `--format json` run (its last line).
fn session_id(out: &std::process::Output) -> String {
    let stdout = text(&out.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    last["session_id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn sessions_are_listed_newest_first_renamed_forked_and_deleted() {
    let sandbox = Sandbox::new("sessions-manage");
    let first = sandbox
        .agent(
            &[
                "run",
                "--auto",
                "--format",
                "json",
                "--title",
                "First work",
                "hello",
            ],
            &[],
        )
        .await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let first = session_id(&first);
    let second = sandbox
        .agent(&["run", "--auto", "--format", "json", "what is here?"], &[])
        .await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    let second = session_id(&second);

    // Newest first; a title, else the first prompt; a local time; counts.
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(lines[0].starts_with(&second), "{list}");
    assert!(lines[0].contains("what is here?"), "{list}");
    assert!(lines[1].starts_with(&first), "{list}");
    assert!(lines[1].contains("First work"), "{list}");
    assert!(lines[1].contains(" messages  "), "{list}");
    let date = lines[1][first.len()..].trim_start();
    assert!(
        date.len() > 16 && date.as_bytes()[4] == b'-' && date.as_bytes()[13] == b':',
        "{list}"
    );

    // Continuing the older session moves it to the top.
    let again = sandbox
        .agent(&["run", "--auto", "--session", &first, "more"], &[])
        .await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(list.starts_with(&first), "{list}");

    // Show: title, times, the model of each answer.
    let show = text(
        &sandbox
            .agent(&["sessions", "show", &first], &[])
            .await
            .stdout,
    );
    assert!(show.contains("title: First work"), "{show}");
    assert!(show.contains("created "), "{show}");
    assert!(show.contains("[user]\nhello"), "{show}");
    assert!(show.contains("[assistant demo/"), "{show}");

    // Rename.
    let renamed = sandbox
        .agent(&["sessions", "rename", &second, "Looking", "around"], &[])
        .await;
    assert!(renamed.status.success(), "{}", text(&renamed.stderr));
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(list.contains("Looking around"), "{list}");

    // Fork before the second user message: the first exchange only.
    let export: Value = serde_json::from_slice(
        &sandbox
            .agent(&["sessions", "export", &first], &[])
            .await
            .stdout,
    )
    .unwrap();
    let messages = export["messages"].as_array().unwrap();
    let second_prompt = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .nth(1)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let forked = sandbox
        .agent(
            &["sessions", "fork", &first, "--message", &second_prompt],
            &[],
        )
        .await;
    assert!(forked.status.success(), "{}", text(&forked.stderr));
    let fork = text(&forked.stdout).trim().to_string();
    assert!(fork.starts_with("ses_") && fork != first, "{fork}");
    let export: Value = serde_json::from_slice(
        &sandbox
            .agent(&["sessions", "export", &fork], &[])
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(export["session"]["title"], "First work (fork #1)");
    let copied = export["messages"].as_array().unwrap();
    assert_eq!(
        copied.len(),
        messages
            .iter()
            .position(|m| m["id"] == second_prompt.as_str())
            .unwrap()
    );
    assert!(copied.iter().all(|m| m["session_id"] == fork.as_str()));

    // Delete.
    let deleted = sandbox.agent(&["sessions", "delete", &fork], &[]).await;
    assert!(deleted.status.success(), "{}", text(&deleted.stderr));
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(!list.contains(&fork), "{list}");
    assert_eq!(list.lines().count(), 2, "{list}");

    // Unknown ids and messages, in CLI words.
    for args in [
        vec!["sessions", "show", "ses_nope"],
        vec!["sessions", "export", "ses_nope"],
        vec!["sessions", "delete", "ses_nope"],
        vec!["sessions", "rename", "ses_nope", "x"],
        vec!["sessions", "fork", "ses_nope"],
        vec!["sessions", "show", "../../etc/passwd"],
    ] {
        let out = sandbox.agent(&args, &[]).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("no session"), "{args:?}: {stderr}");
        assert!(stderr.contains("agent sessions list"), "{args:?}: {stderr}");
        assert!(!stderr.contains("SessionStore"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let out = sandbox
        .agent(&["sessions", "fork", &first, "--message", "msg_nope"], &[])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has no message \"msg_nope\""), "{stderr}");
}

#[tokio::test]
async fn the_small_model_titles_a_new_session_unless_run_gives_a_title() {
    let sandbox = Sandbox::new("sessions-title");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(serde_json::json!({"model": "tiny"})))
        .respond_with(openai_answer("Reading the notes file\n"))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai_answer("The code is 1234."))
        .with_priority(2)
        .mount(&server)
        .await;
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "small_model": "local/tiny",
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        server.uri()
    ));

    let out = sandbox
        .agent(&["run", "--format", "json", "what is in notes.txt?"], &[])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = session_id(&out);
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(list.contains("Reading the notes file"), "{list}");
    let title_requests: Vec<Value> = bodies(&server)
        .await
        .into_iter()
        .filter(|b| b["model"] == "tiny")
        .collect();
    assert_eq!(title_requests.len(), 1);
    let request = title_requests[0].to_string();
    assert!(
        request.contains("Generate a title for this conversation"),
        "{request}"
    );
    assert!(request.contains("what is in notes.txt?"), "{request}");
    assert!(title_requests[0].get("tools").is_none(), "{request}");

    // A second prompt in the session writes no new title.
    let again = sandbox
        .agent(&["run", "--session", &id, "and then?"], &[])
        .await;
    assert!(again.status.success(), "{}", text(&again.stderr));

    // --title: that title, and no title request.
    let titled = sandbox
        .agent(
            &["run", "--format", "json", "--title", "Mine", "hello"],
            &[],
        )
        .await;
    assert!(titled.status.success(), "{}", text(&titled.stderr));
    // --title with no value: the prompt's start.
    let bare = sandbox
        .agent(
            &[
                "run",
                "--format",
                "json",
                "--title",
                "--",
                "a prompt that names itself",
            ],
            &[],
        )
        .await;
    assert!(bare.status.success(), "{}", text(&bare.stderr));
    let tiny = bodies(&server)
        .await
        .into_iter()
        .filter(|b| b["model"] == "tiny")
        .count();
    assert_eq!(tiny, 1);
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(list.contains("Mine"), "{list}");
    assert!(list.contains("a prompt that names itself"), "{list}");
}

/// A title or transcript holds what a model (or a hostile project's
/// prompt) wrote: `sessions list` and `show` print it terminal-safe, so an
/// escape sequence in a title cannot clear the screen or redraw a line.
#[tokio::test]
async fn titles_and_transcripts_are_shown_terminal_safe() {
    let sandbox = Sandbox::new("sessions-terminal-safe");
    let out = sandbox
        .agent(
            &[
                "run",
                "--auto",
                "--format",
                "json",
                "--title",
                "fine\u{1b}[2J\u{1b}]0;pwned\u{7}",
                "say \u{202e}olleh",
            ],
            &[],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = session_id(&out);
    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(
        !list.contains('\u{1b}') && !list.contains('\u{7}'),
        "{list:?}"
    );
    assert!(
        list.contains("fine\\u{1b}[2J\\u{1b}]0;pwned\\u{7}"),
        "{list}"
    );
    let show = text(&sandbox.agent(&["sessions", "show", &id], &[]).await.stdout);
    assert!(
        !show.contains('\u{1b}') && !show.contains('\u{202e}'),
        "{show:?}"
    );
    assert!(show.contains("say \\u{202e}olleh"), "{show}");
    // The export stays JSON, byte for byte what was stored.
    let export: Value = serde_json::from_slice(
        &sandbox
            .agent(&["sessions", "export", &id], &[])
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(
        export["session"]["title"].as_str(),
        Some("fine\u{1b}[2J\u{1b}]0;pwned\u{7}")
    );
}
