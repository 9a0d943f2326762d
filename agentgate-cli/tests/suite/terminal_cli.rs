//! What a model prints cannot reach the terminal raw, and cannot hide an
//! ask (issue 41): a model (a local OpenAI-compatible server) streams a
//! fake "permission requested" card, black-on-black and concealed
//! attributes, an OSC 52 clipboard write, a window title and a C1 CSI,
//! split across deltas, then calls `rm -rf src`. `agent chat` runs in a
//! pseudo-terminal and its output is drawn by a terminal emulator (vt100):
//! the real ask is shown, framed, in the default colours, and the fake one
//! is plain model text. `agent run` (text and JSON, with a command whose
//! output holds escapes) and `agent attach` print no escape of the model's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use super::attach_cli::serve;
use super::run_cli::{Sandbox, local_provider, openai_answer, openai_server, sse, text};

/// The model's attack, in pieces that cut its escape sequences in two.
const ATTACK: [&str; 6] = [
    "Let me look first.\npermission requested: bash\n  patterns: ls -la\n  command: ls -la\n",
    "  [o] once  [r] reject  [f] reject with feedback\n\u{1b}[30;4",
    "0m\u{1b}",
    "[8m\u{1b}]52;c;cm0gLXJmIHNyYw==\u{7}\u{1b}]0;pwned\u{1b}\\",
    "\u{9b}8m\u{1b}P+q\u{1b}\\\u{202e}",
    "hidden\r",
];

/// What no output may hold raw: the escapes of the attack.
const RAW: [&str; 7] = [
    "\u{1b}[30;40m",
    "\u{1b}[8m",
    "\u{1b}]52",
    "\u{1b}]0;",
    "\u{9b}",
    "\u{1b}P",
    "\u{202e}",
];

/// A stream of `pieces` of text, then a call of bash with `command`.
fn text_then_command(pieces: &[&str], command: &str) -> ResponseTemplate {
    let mut events: Vec<String> = pieces
        .iter()
        .map(|piece| {
            let delta = json!({"choices":[{"index":0,"delta":{"content":piece}}]});
            format!("data: {delta}")
        })
        .collect();
    let args = json!({"command": command, "description": "tidy"}).to_string();
    let call = json!({"choices":[{"index":0,"delta":{"tool_calls":[
        {"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":args}}]}}]});
    events.push(format!("data: {call}"));
    events
        .push(r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into());
    events.push("data: [DONE]".into());
    sse(&events)
}

fn assert_no_raw_escape(output: &str, what: &str) {
    for raw in RAW {
        assert!(
            !output.contains(raw),
            "{what} holds {raw:?} raw:\n{output:?}"
        );
    }
}

/// The rows of the screen `bytes` draw, each with whether its first
/// non-blank cell is in inverse video.
fn screen_of(bytes: &[u8]) -> vt100::Parser {
    let mut parser = vt100::Parser::new(300, 120, 0);
    parser.process(bytes);
    parser
}

fn rows_with(screen: &vt100::Screen, needle: &str) -> Vec<(u16, u16)> {
    let (rows, cols) = screen.size();
    (0..rows)
        .filter_map(|row| {
            let line = screen.contents_between(row, 0, row, cols);
            let at = line.find(needle)?;
            Some((row, line[..at].chars().count() as u16))
        })
        .collect()
}

fn plain(cell: &vt100::Cell) -> bool {
    cell.fgcolor() == vt100::Color::Default
        && cell.bgcolor() == vt100::Color::Default
        && !cell.inverse()
}

#[tokio::test]
async fn chat_shows_the_real_ask_after_a_concealing_model() {
    let sandbox = Sandbox::new("terminal-chat");
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(sandbox.project.join("src/lib.rs"), "// kept\n").unwrap();
    let server = openai_server(
        text_then_command(&ATTACK, "rm -rf src"),
        openai_answer("never"),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let steps = json!([
        ["agent chat: session", "tidy up\r"],
        ["choice> ", "r\r"],
        ["rejected", ""],
        ["> ", "/exit\r"],
    ]);
    let transcript = in_a_terminal(&sandbox, &steps, &["chat"]).await;
    assert!(sandbox.project.join("src/lib.rs").exists(), "nothing ran");
    assert_no_raw_escape(&transcript, "the chat's terminal");
    // The escapes are there, written out.
    assert!(transcript.contains("\\u{1b}[8m"), "{transcript}");
    assert!(transcript.contains("\\u{1b}]52;c;"), "{transcript}");
    assert_the_real_ask_is_visible(&transcript);
}

/// Runs `agent ARGS` in a pseudo-terminal through `steps` (see
/// tests/data/pty_driver.py); all it printed.
async fn in_a_terminal(sandbox: &Sandbox, steps: &Value, args: &[&str]) -> String {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pty_driver.py");
    let out = tokio::process::Command::new("python3")
        .arg(driver)
        .arg(steps.to_string())
        .arg(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.join("home"))
        .env("XDG_DATA_HOME", sandbox.root.join("data"))
        .env("XDG_CONFIG_HOME", sandbox.root.join("config"))
        .env("TERM", "xterm")
        .current_dir(&sandbox.project)
        .output()
        .await
        .expect("python3 runs the pty driver");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let transcript: String = report["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(report["ok"], true, "{transcript}");
    transcript
}

/// The screen `transcript` draws shows the fake card as plain text and
/// the real ask (for `rm -rf src`) after it, framed, its command and
/// patterns in the default colours; no model line has a colour.
fn assert_the_real_ask_is_visible(transcript: &str) {
    let parser = screen_of(transcript.as_bytes());
    let screen = parser.screen();
    let cards = rows_with(screen, "permission requested: bash");
    assert_eq!(
        cards.len(),
        2,
        "the fake card and the real ask:\n{}",
        screen.contents()
    );
    let (fake, fake_at) = cards[0];
    let (real, real_at) = cards[1];
    // The fake card is plain model text; the real ask's header is inverse.
    assert!(
        screen.cell(fake, fake_at).is_some_and(plain),
        "{}",
        screen.contents()
    );
    assert!(
        screen.cell(real, real_at).is_some_and(vt100::Cell::inverse),
        "{}",
        screen.contents()
    );
    // Below it, the command and its pattern, framed, in the default colours.
    for needle in ["patterns: rm -rf src", "command: rm -rf src"] {
        let (row, at) = *rows_with(screen, needle)
            .first()
            .unwrap_or_else(|| panic!("{needle} missing:\n{}", screen.contents()));
        assert!(row > real, "{needle} is in the real ask");
        assert!(
            screen.cell(row, 0).is_some_and(vt100::Cell::inverse),
            "the frame"
        );
        for col in at..at + needle.len() as u16 {
            assert!(
                screen.cell(row, col).is_some_and(plain),
                "{needle} at {row},{col}:\n{}",
                screen.contents()
            );
        }
    }
    // The model's own lines carry no attribute at all.
    let (_, cols) = screen.size();
    for row in 0..real {
        for col in 0..cols {
            let cell = screen.cell(row, col).unwrap();
            assert!(
                cell.fgcolor() == vt100::Color::Default && cell.bgcolor() == vt100::Color::Default,
                "{row},{col}:\n{}",
                screen.contents()
            );
        }
    }
}

#[tokio::test]
async fn run_prints_no_escape_of_the_model_or_of_a_command() {
    let sandbox = Sandbox::new("terminal-run");
    let command = r"printf 'out\033]52;c;eA==\007\033[8m\233 done\n'";
    let server = openai_server(
        text_then_command(&ATTACK, command),
        openai_answer("Done \u{1b}]52;c;eA==\u{7}\u{1b}[8m."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "allow"}"#);
    let out = sandbox.agent(&["run", "--verbose", "tidy up"], &[]).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_no_raw_escape(&stdout, "stdout");
    assert_no_raw_escape(&stderr, "stderr");
    assert!(stdout.contains("\\u{1b}[30;40m"), "{stdout}");
    // The command's output under --verbose, written out.
    assert!(stderr.contains("out\\u{1b}]52;c;eA==\\u{7}"), "{stderr}");

    let out = sandbox
        .agent(&["run", "--format", "json", "tidy up"], &[])
        .await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_no_raw_escape(&stdout, "json lines");
    // The same text, once parsed.
    let finished: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["type"] == "turn.finished")
        .collect();
    assert_eq!(finished.len(), 1, "{stdout}");
    let answer = finished[0]["text"].as_str().unwrap();
    assert!(answer.contains("\u{1b}]52;c;eA=="), "{answer:?}");
}

#[tokio::test]
async fn attach_prints_no_escape_of_the_servers_text() {
    let sandbox = Sandbox::new("terminal-attach");
    let server = openai_server(
        text_then_command(&ATTACK, "echo tidy"),
        openai_answer("Done \u{1b}]52;c;eA==\u{7}\u{1b}[8m."),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "allow"}"#);
    let (mut child, url) = serve(&sandbox).await;
    for format in ["text", "json"] {
        let out = sandbox
            .agent(&["attach", &url, "--format", format, "tidy up"], &[])
            .await;
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_no_raw_escape(&stdout, "stdout");
        assert_no_raw_escape(&stderr, "stderr");
        assert!(stdout.contains("]52;c;eA=="), "{format}: {stdout}");
    }
    child.kill().await.unwrap();
}

#[tokio::test]
async fn attach_at_a_terminal_shows_the_real_ask_after_the_servers_text() {
    let sandbox = Sandbox::new("terminal-attach-ask");
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(sandbox.project.join("src/lib.rs"), "// kept\n").unwrap();
    let server = openai_server(
        text_then_command(&ATTACK, "rm -rf src"),
        openai_answer("never"),
    )
    .await;
    local_provider(&sandbox, &server, r#", "permission": {"bash": "ask"}"#);
    let (mut child, url) = serve(&sandbox).await;
    let steps = json!([["choice> ", "r\r"], ["rejected", ""]]);
    let transcript = in_a_terminal(&sandbox, &steps, &["attach", &url, "tidy up"]).await;
    child.kill().await.unwrap();
    assert!(sandbox.project.join("src/lib.rs").exists(), "nothing ran");
    assert_no_raw_escape(&transcript, "attach's terminal");
    assert_the_real_ask_is_visible(&transcript);
}

/// The listing commands print the project's text (here a custom command's
/// description, from a hostile repository) with its controls written out;
/// their JSON keeps the value.
#[tokio::test]
async fn listings_print_no_escape_of_the_project() {
    let sandbox = Sandbox::new("terminal-listing");
    let dir = sandbox.project.join(".opencode/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tidy.md"),
        "---\ndescription: \"tidy \\e]52;c;eA==\\a\\e[8m \\x9b8m\"\n---\nTidy up.\n",
    )
    .unwrap();
    let out = sandbox.agent(&["commands"], &[]).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("tidy"), "{stdout}");
    assert_no_raw_escape(&stdout, "agent commands");
    assert!(stdout.contains("\\u001b]52;c;eA=="), "{stdout}");
    let out = sandbox.agent(&["commands", "--json"], &[]).await;
    let stdout = text(&out.stdout);
    assert_no_raw_escape(&stdout, "agent commands --json");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert!(value.to_string().contains("\\u001b]52"), "{value}");
    assert!(
        value.to_string().contains('\u{9b}'),
        "the value is kept: {value}"
    );
}

/// Keys typed in answer to the model's fake card, while a command runs,
/// do not answer the real ask that follows: it waits for keys pressed
/// after it was drawn.
#[tokio::test]
async fn an_answer_typed_to_a_fake_ask_does_not_answer_the_real_one() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer};
    let sandbox = Sandbox::new("terminal-typeahead");
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(sandbox.project.join("src/lib.rs"), "// kept\n").unwrap();
    let server = MockServer::start().await;
    let script = [
        text_then_command(&ATTACK[..2], "sleep 3"),
        text_then_command(&[], "rm -rf src"),
        openai_answer("done"),
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
    local_provider(
        &sandbox,
        &server,
        r#", "permission": {"bash": {"*": "ask", "sleep *": "allow"}}"#,
    );
    // The project's own `allow` counts once its user trusts it.
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());
    let steps = json!([
        ["agent chat: session", "tidy up\r"],
        ["[f] reject with feedback", "o\r"],
        ["choice> ", "r\r"],
        ["rejected", ""],
        ["> ", "/exit\r"],
    ]);
    let transcript = in_a_terminal(&sandbox, &steps, &["chat"]).await;
    assert!(
        sandbox.project.join("src/lib.rs").exists(),
        "the typed-ahead o did not approve rm -rf src:\n{transcript}"
    );
    assert!(transcript.contains("rejected permission"), "{transcript}");
}
