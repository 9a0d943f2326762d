//! `agent tui` end to end: the real binary in a tmux pane (120×40)
//! against a scripted OpenAI-compatible model. A prompt is typed; the
//! model reads a file, edits it (the modal shows the real diff; answered
//! once), runs a command (answered always), answers; then `/undo` puts
//! the file back. The pane's screen is captured and checked at each
//! point; skipped, saying so, when tmux is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use super::run_cli::{Sandbox, openai_answer, openai_call, text};

/// A tmux server of its own (its socket named after this process), with
/// one session running `agent tui`; killed when dropped.
struct Pane {
    socket: String,
}

impl Pane {
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Starts `command` (a shell line) in a 120×40 pane in `dir`, on a
    /// tmux server named after the sandbox `root`.
    fn start(root: &Path, dir: &Path, command: &str) -> Pane {
        let pane = Pane {
            // One tmux server per test: tests run side by side.
            socket: format!(
                "agent-tui-{}",
                root.file_name().unwrap_or_default().to_string_lossy()
            ),
        };
        let dir = dir.to_string_lossy().into_owned();
        let out = pane.tmux(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            &dir,
            command,
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        pane
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// Types `text` as it is (no key names).
    fn type_text(&self, text: &str) {
        assert!(
            self.tmux(&["send-keys", "-t", "0", "-l", text])
                .status
                .success()
        );
    }

    fn screen(&self) -> String {
        text(&self.tmux(&["capture-pane", "-p", "-t", "0"]).stdout)
    }

    /// The screen once it shows every one of `needles` (panics after 30 s
    /// with the last screen).
    fn wait_for(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!("waited for {needles:?}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The scripted model: read, edit, run the tests, answer.
async fn model(notes: &Path) -> MockServer {
    let server = MockServer::start().await;
    let file = notes.to_string_lossy().into_owned();
    let script = [
        openai_call("read", &json!({"filePath": file})),
        openai_call(
            "edit",
            &json!({"filePath": file, "oldString": "1234", "newString": "5678"}),
        ),
        openai_call(
            "bash",
            &json!({"command": "echo tests pass", "description": "run the tests"}),
        ),
        openai_answer("All done: the code is **5678** and the tests pass."),
    ];
    for (priority, response) in script.into_iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(response)
            .up_to_n_times(1)
            .with_priority(priority as u8 + 1)
            .mount(&server)
            .await;
    }
    server
}

/// The shell line that runs `agent ARGS` in the sandbox, its stderr
/// and exit status written to files.
fn command_line(sandbox: &Sandbox, args: &str) -> String {
    let root = sandbox.root.display();
    format!(
        "env -i PATH='{path}' HOME='{root}/home' XDG_DATA_HOME='{root}/data' \
         XDG_CONFIG_HOME='{root}/config' TERM=xterm-256color \
         sh -c '\"$0\" {args} 2>\"$1/stderr\"; echo \"exit $?\" >\"$1/status\"; sleep 30' \
         '{agent}' '{root}'",
        path = std::env::var("PATH").unwrap_or_default(),
        agent = env!("CARGO_BIN_EXE_agent"),
    )
}

/// The sandbox with the scripted model configured.
async fn project(name: &str) -> (Sandbox, MockServer) {
    let sandbox = Sandbox::new(name);
    let server = model(&sandbox.project.join("notes.txt")).await;
    sandbox.config(&format!(
        r#"{{"model": "local/qwen3", "permission": {{"edit": "ask", "bash": "ask"}},
            "provider": {{"local": {{"options": {{"baseURL": "{}/v1"}}}}}}}}"#,
        server.uri()
    ));
    (sandbox, server)
}

fn tmux_missing() -> bool {
    let missing = Command::new("tmux").arg("-V").output().is_err();
    if missing {
        eprintln!(
            "skipped: tmux is not installed (apt-get install tmux); agent tui's tmux test did not run"
        );
    }
    missing
}

/// Runs the task in a pane running `agent tui ARGS`, then checks what
/// it left.
async fn task(sandbox: &Sandbox, args: &str, local: bool) {
    let pane = Pane::start(
        &sandbox.root,
        &sandbox.project,
        &command_line(sandbox, args),
    );
    let notes = sandbox.project.join("notes.txt");
    // The pane lives until the checks are done (dropping it ends tmux).
    let _pane = tokio::task::spawn_blocking(move || {
        drive(&pane, &notes, local);
        pane
    })
    .await
    .unwrap();
    check_afterwards(sandbox).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_coding_task_in_tmux_read_edit_run_then_undo() {
    if tmux_missing() {
        return;
    }
    let (sandbox, _model) = project("tui-tmux").await;
    task(&sandbox, "tui", true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_task_attached_to_agent_serve() {
    if tmux_missing() {
        return;
    }
    let (sandbox, _model) = project("tui-tmux-attach").await;
    let (_server, url) = super::attach_cli::serve(&sandbox).await;
    task(&sandbox, &format!("tui --attach {url}"), false).await;
    // The session is the server's: it lists it.
    let stderr = std::fs::read_to_string(sandbox.root.join("stderr")).unwrap_or_default();
    assert!(stderr.contains(&format!(" at {url}")), "{stderr}");
    let listed = reqwest::get(format!("{url}/session"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let id = stderr
        .split_whitespace()
        .find(|w| w.starts_with("ses_"))
        .unwrap();
    assert!(listed.contains(id), "{listed}");
}

/// The screen follows the window: drawn again at 80×24, a note below
/// it, the full layout back at 120×40.
fn resizes(pane: &Pane) {
    pane.tmux(&["resize-window", "-x", "80", "-y", "24"]);
    let screen = pane.wait_for(&["╭ prompt", "local/qwen3"]);
    assert_eq!(screen.lines().count(), 24, "{screen}");
    assert!(screen.lines().all(|l| l.chars().count() <= 80), "{screen}");
    pane.tmux(&["resize-window", "-x", "60", "-y", "20"]);
    pane.wait_for(&["agent tui needs at least 80×24 (this terminal is 60×20)"]);
    pane.tmux(&["resize-window", "-x", "120", "-y", "40"]);
    pane.wait_for(&["╭ prompt", "workspace-write", "Enter sends"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_alone_at_a_terminal_opens_the_tui() {
    if tmux_missing() {
        return;
    }
    let sandbox = Sandbox::new("tui-bare");
    let line = command_line(&sandbox, "");
    let pane = Pane::start(&sandbox.root, &sandbox.project, &line);
    let screen = tokio::task::spawn_blocking(move || {
        let screen = pane.wait_for(&["╭ prompt", "demo/offline"]);
        pane.keys(&["C-d"]);
        (screen, pane)
    })
    .await
    .unwrap();
    assert!(screen.0.contains("Ctrl-D quits"), "{}", screen.0);
    let status = sandbox.root.join("status");
    let start = Instant::now();
    while !status.exists() && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        std::fs::read_to_string(&status).unwrap_or_default(),
        "exit 0\n"
    );
}

/// Types the prompt and answers the asks, checking the screen at each
/// point.
fn drive(pane: &Pane, notes: &Path, local: bool) {
    let ready: &[&str] = if local {
        &["╭ prompt", "local/qwen3", "workspace-write"]
    } else {
        &["╭ prompt", "server's"]
    };
    let screen = pane.wait_for(ready);
    assert!(screen.contains("Enter sends"), "{screen}");
    if local {
        resizes(pane);
    }
    pane.type_text("make the launch code 5678 and run the tests");
    pane.keys(&["Enter"]);
    // The edit's ask: a modal with the file and its real diff.
    let screen = pane.wait_for(&["ASK · the agent needs your permission", "permission: edit"]);
    assert!(
        screen.contains("› make the launch code 5678 and run the tests"),
        "{screen}"
    );
    assert!(screen.contains("✓ read"), "the read ran first:\n{screen}");
    assert!(screen.contains("-the launch code is 1234"), "{screen}");
    assert!(screen.contains("+the launch code is 5678"), "{screen}");
    assert!(screen.contains(" o  once"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(notes).unwrap(),
        "the launch code is 1234\n"
    );
    pane.keys(&["o"]);
    // The command's ask, with what "always" would add.
    let screen = pane.wait_for(&["permission: bash", "command: echo tests pass"]);
    assert!(screen.contains("Always allow bash \"echo *\""), "{screen}");
    assert!(screen.contains("allowed once: edit"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(notes).unwrap(),
        "the launch code is 5678\n"
    );
    pane.keys(&["a"]);
    let screen = pane.wait_for(&["All done: the code is 5678", "Enter sends"]);
    assert!(!screen.contains("ASK ·"), "{screen}");
    assert!(
        screen.contains("allowed always: bash echo tests pass"),
        "{screen}"
    );
    assert!(screen.contains("✓ bash echo tests pass"), "{screen}");
    // /undo takes the prompt back, and the edit with it.
    pane.type_text("/undo");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for(&["undid: make the launch code 5678"]);
    if local {
        assert!(
            screen.contains("notes.txt"),
            "the files undone are named:\n{screen}"
        );
    }
    assert!(
        !screen.contains("All done"),
        "the transcript lost the turn:\n{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(notes).unwrap(),
        "the launch code is 1234\n"
    );
    pane.type_text("/exit");
    pane.keys(&["Enter"]);
}

/// After the pane's `agent tui` ended: its status, the session stored,
/// the "always" remembered.
async fn check_afterwards(sandbox: &Sandbox) {
    let status = sandbox.root.join("status");
    let start = Instant::now();
    while !status.exists() && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stderr = std::fs::read_to_string(sandbox.root.join("stderr")).unwrap_or_default();
    assert_eq!(
        std::fs::read_to_string(&status).unwrap_or_default(),
        "exit 0\n",
        "{stderr}"
    );
    let id = stderr
        .split_whitespace()
        .find(|w| w.starts_with("ses_"))
        .unwrap_or_else(|| panic!("the session is named: {stderr}"));
    let shown = sandbox.agent(&["sessions", "show", id], &[]).await;
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let approvals = sandbox.agent(&["approvals", "list"], &[]).await;
    assert!(
        text(&approvals.stdout).contains("bash \"echo *\" allow"),
        "{}",
        text(&approvals.stdout)
    );
}
