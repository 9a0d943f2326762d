//! Checkpoints through `agent serve` (issue 44): a scripted model's turn
//! writes one file, edits another, and runs a command that modifies a
//! third, deletes a fourth and creates a fifth; `GET /session/{id}/diff`
//! lists all five, `POST /session/{id}/revert` to the prompt puts the tree
//! back exactly (bytes and modes), `POST /session/{id}/unrevert` gives the
//! final tree again. Then `agent sessions diff|revert|unrevert` do the
//! same from the command line, on the server's data directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::run_cli::{Sandbox, local_provider, openai_answer, openai_call, text};

/// Every entry under `root`: its kind, content (or link target) and mode.
fn tree(root: &Path) -> BTreeMap<String, (String, Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let kind = meta.file_type();
            let value = if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                (
                    "link".to_string(),
                    target.display().to_string().into_bytes(),
                    0,
                )
            } else if kind.is_dir() {
                pending.push(path.clone());
                ("dir".to_string(), Vec::new(), mode)
            } else {
                ("file".to_string(), std::fs::read(&path).unwrap(), mode)
            };
            out.insert(name, value);
        }
    }
    out
}

/// A model that answers the scripted responses in order, then `done`.
async fn scripted(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    let count = responses.len();
    for (i, response) in responses.into_iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(u8::try_from(i + 1).unwrap())
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai_answer("done"))
        .with_priority(u8::try_from(count + 1).unwrap())
        .mount(&server)
        .await;
    server
}

async fn serve(sandbox: &Sandbox) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .args(["serve", "--port", "0"])
        .current_dir(&sandbox.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("agent serve printed no URL within 60 s")
        .unwrap()
        .expect("agent serve exited before listening");
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (child, base)
}

async fn call(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{status}: {body:#}");
    body
}

#[tokio::test]
async fn revert_and_unrevert_through_agent_serve_restore_what_the_tools_and_a_command_changed() {
    let sandbox = Sandbox::new("serve-revert");
    let project = sandbox.project.clone();
    std::fs::write(project.join("gone.txt"), "to be deleted\n").unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/run.sh"), "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(
        project.join("src/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let edit_path = project.join("README.md").display().to_string();
    let write_path = project.join("src/new/deep.txt").display().to_string();
    let model = scripted(vec![
        openai_call(
            "write",
            &json!({"filePath": write_path, "content": "written by the tool\n"}),
        ),
        openai_call(
            "edit",
            &json!({"filePath": edit_path, "oldString": "A test project.", "newString": "An edited project."}),
        ),
        openai_call(
            "bash",
            &json!({"command": "echo more >> notes.txt && rm gone.txt && printf 'made\\n' > made.txt && chmod 644 src/run.sh", "description": "change three files"}),
        ),
    ])
    .await;
    local_provider(&sandbox, &model, "");
    let before = tree(&project);

    let (_server, base) = serve(&sandbox).await;
    let http = reqwest::Client::new();
    let session = call(http.post(format!("{base}/session")).json(&json!({}))).await;
    let id = session["id"].as_str().unwrap().to_string();
    let answer = call(
        http.post(format!("{base}/session/{id}/message"))
            .json(&json!({"parts": [{"type": "text", "text": "change things"}]})),
    )
    .await;
    assert_eq!(answer["info"]["role"], "assistant", "{answer:#}");
    let after = tree(&project);
    assert_ne!(before, after, "the turn changed nothing");
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "made\n"
    );

    let messages = call(http.get(format!("{base}/session/{id}/message"))).await;
    let prompt = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["info"]["role"] == "user")
        .unwrap()["info"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let patches: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .filter(|p| p["type"] == "patch")
        .collect();
    assert_eq!(
        patches.len(),
        3,
        "one patch part per step that changed files: {messages:#}"
    );

    let diff = call(http.get(format!("{base}/session/{id}/diff?messageID={prompt}"))).await;
    let mut files: Vec<(String, String)> = diff
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    files.sort();
    let expected: Vec<(String, String)> = [
        ("README.md", "modified"),
        ("gone.txt", "deleted"),
        ("made.txt", "added"),
        ("notes.txt", "modified"),
        ("src/new/deep.txt", "added"),
        ("src/run.sh", "modified"),
    ]
    .iter()
    .map(|(f, s)| (f.to_string(), s.to_string()))
    .collect();
    assert_eq!(files, expected, "{diff:#}");
    let readme = diff
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "README.md")
        .unwrap();
    assert!(
        readme["patch"]
            .as_str()
            .unwrap()
            .contains("-A test project.\n+An edited project."),
        "{readme:#}"
    );

    let reverted = call(
        http.post(format!("{base}/session/{id}/revert"))
            .json(&json!({"messageID": prompt})),
    )
    .await;
    assert_eq!(reverted["revert"]["messageID"], prompt.as_str());
    assert_eq!(tree(&project), before, "revert restores the tree exactly");

    let unreverted = call(http.post(format!("{base}/session/{id}/unrevert"))).await;
    assert!(unreverted.get("revert").is_none(), "{unreverted:#}");
    assert_eq!(tree(&project), after, "unrevert gives the final tree back");

    // A file changed since by someone else: revert refuses and names it.
    std::fs::write(project.join("made.txt"), "the user's own edit\n").unwrap();
    let refused = http
        .post(format!("{base}/session/{id}/revert"))
        .json(&json!({"messageID": prompt}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 409);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["name"], "FileConflictError", "{body:#}");
    assert!(
        body["data"]["message"]
            .as_str()
            .unwrap()
            .contains("made.txt"),
        "{body:#}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "the user's own edit\n",
        "a refused revert changes nothing"
    );
    std::fs::write(project.join("made.txt"), "made\n").unwrap();

    // The same from the command line, on the same data directory.
    let out = sandbox
        .agent(&["sessions", "diff", &id, "--stat"], &[])
        .await;
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}{}", text(&out.stderr));
    for file in [
        "README.md",
        "gone.txt",
        "made.txt",
        "notes.txt",
        "src/new/deep.txt",
    ] {
        assert!(shown.contains(file), "{file} missing from {shown}");
    }
    let out = sandbox
        .agent(&["sessions", "revert", &id, &prompt], &[])
        .await;
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        tree(&project),
        before,
        "agent sessions revert restores the tree"
    );
    let out = sandbox.agent(&["sessions", "unrevert", &id], &[]).await;
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        tree(&project),
        after,
        "agent sessions unrevert puts it back"
    );
}

/// `agent chat`'s `/undo` takes back the last prompt's file changes (a
/// write and a command's), `/redo` puts them back.
#[tokio::test]
async fn chat_undo_and_redo_take_back_and_put_back_a_prompts_changes() {
    use tokio::io::AsyncWriteExt;
    let sandbox = Sandbox::new("chat-undo");
    let project = sandbox.project.clone();
    let write_path = project.join("made/by/tool.txt").display().to_string();
    let model = scripted(vec![
        openai_call(
            "write",
            &json!({"filePath": write_path, "content": "tool\n"}),
        ),
        openai_call(
            "bash",
            &json!({"command": "rm notes.txt && echo cmd > cmd.txt", "description": "shuffle"}),
        ),
    ])
    .await;
    local_provider(&sandbox, &model, "");
    let before = tree(&project);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .arg("chat")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .current_dir(&project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"change things\n").await.unwrap();
    // The turn's changes, then /undo, checked from outside between lines.
    let changed = wait_for(|| project.join("cmd.txt").exists()).await;
    assert!(changed, "the turn did not run the command");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = tree(&project);
    stdin.write_all(b"/undo\n").await.unwrap();
    assert!(
        wait_for(|| !project.join("cmd.txt").exists()).await,
        "/undo left cmd.txt"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(tree(&project), before, "/undo restores the tree");
    stdin.write_all(b"/redo\n/exit\n").await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("undid: change things"), "{stderr}");
    assert!(stderr.contains("made/by/tool.txt"), "{stderr}");
    assert!(stderr.contains("redone"), "{stderr}");
    assert_eq!(tree(&project), after, "/redo puts the changes back");
}

/// Polls `done` every 50 ms for up to 30 s.
async fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..600 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
