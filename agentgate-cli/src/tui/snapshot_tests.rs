//! Snapshot tests of the views: each screen drawn on ratatui's
//! `TestBackend` at 80×24 and 200×50, its text compared with
//! `tests/snapshots/tui_NAME_WxH.txt` (`UPDATE_SNAPSHOTS=1` rewrites them),
//! and its styles checked where they carry meaning (the modal's frame,
//! the diff's colours, no reverse video outside the modal).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::ask_modal::AskView;
use super::state::{SessionRow, SessionsPanel, State, Status};
use super::transcript::{Entry, NoteKind, ToolEntry, ToolStatus};
use super::transcript_view::ViewCache;
use super::view;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn status() -> Status {
    Status {
        agent: "build".into(),
        model: "local/qwen3".into(),
        session: "ses_0123456789abcdef".into(),
        tokens_in: 1200,
        tokens_out: 80,
        cost: Some(0.0042),
        sandbox: "workspace-write".into(),
        trust: "project trusted".into(),
        place: "local".into(),
    }
}

fn tool(id: &str, name: &str, summary: &str, status: ToolStatus, output: &str, depth: u8) -> Entry {
    Entry::Tool(ToolEntry {
        id: id.into(),
        tool: name.into(),
        summary: summary.into(),
        status,
        output: output.into(),
        depth,
    })
}

/// A transcript with each kind of entry.
fn conversation() -> State {
    let mut state = State::new(status());
    let t = &mut state.transcript;
    t.user("Make the greeting say hello, then run the tests.");
    t.push(Entry::Reasoning {
        id: "r1".into(),
        text: "The greeting lives in src/main.rs.\nI should read it first.\nThen edit.".into(),
    });
    t.push(tool(
        "t1",
        "read",
        "src/main.rs",
        ToolStatus::Done,
        "1: fn main() {}\n2: ",
        0,
    ));
    let answer = "## Plan\n\nI will **edit** `src/main.rs`:\n\n```rust\nfn main() {\n    greet(\"hello\");\n}\n```\n\n- keep the tests\n- run `cargo test`";
    t.push(Entry::Assistant {
        id: "a1".into(),
        text: answer.into(),
        depth: 0,
    });
    t.push(tool(
        "t2",
        "edit",
        "src/main.rs",
        ToolStatus::Done,
        "--- a/src/main.rs\n+++ b/src/main.rs\n-fn main() {}\n+fn main() { greet(\"hello\"); }",
        0,
    ));
    t.push(tool(
        "t3",
        "task",
        "check the style",
        ToolStatus::Running,
        "",
        0,
    ));
    t.push(Entry::Assistant {
        id: "s1".into(),
        text: "The sub-agent looks at **style**.".into(),
        depth: 1,
    });
    t.push(tool(
        "t4",
        "grep",
        "println",
        ToolStatus::Done,
        "src/main.rs:1",
        1,
    ));
    t.push(tool(
        "t5",
        "bash",
        "cargo test",
        ToolStatus::Failed,
        "error: could not compile",
        0,
    ));
    t.note(NoteKind::Info, "allowed always: bash cargo test");
    state
}

fn ask() -> AskView {
    AskView {
        id: "per_1".into(),
        permission: "edit".into(),
        patterns: "src/main.rs".into(),
        command: None,
        file: Some("/work/project/src/main.rs".into()),
        diff: vec![
            "--- a/src/main.rs".into(),
            "+++ b/src/main.rs".into(),
            "@@ -1 +1 @@".into(),
            "-fn main() {}".into(),
            "+fn main() { greet(\"hello\"); }".into(),
        ],
        always: vec![('a', "Always allow edit \"src/main.rs\": edits of src/main.rs: allowed without asking from now on".into())],
        grant: false,
        feedback: None,
        scroll: 0,
    }
}

fn draw(state: &State, (width, height): (u16, u16)) -> Buffer {
    let backend = TestBackend::new(width, height);
    let Ok(mut terminal) = Terminal::new(backend);
    let mut cache = ViewCache::default();
    if let Err(e) = terminal.draw(|frame| view::draw(frame, state, &mut cache)) {
        panic!("draw: {e}");
    }
    terminal.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces cut.
fn text_of(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Compares the screen with its snapshot file.
fn snapshot(name: &str, buffer: &Buffer) {
    let area = buffer.area;
    let file = format!("tui_{name}_{}x{}.txt", area.width, area.height);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(file);
    let text = text_of(buffer);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).ok();
        std::fs::write(&path, &text).ok();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        text,
        expected,
        "{} differs (UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

/// Where `needle` is on screen.
fn find(buffer: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let text = text_of(buffer);
    text.lines().enumerate().find_map(|(y, line)| {
        let at = line.find(needle)?;
        let x = line[..at].chars().count();
        Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
    })
}

#[test]
fn transcript() {
    for size in SIZES {
        let buffer = draw(&conversation(), size);
        snapshot("transcript", &buffer);
        // No cell of the transcript is drawn in reverse video: only the
        // modal's title is.
        let area = buffer.area;
        for y in 0..area.height {
            for x in 0..area.width {
                assert!(
                    !buffer[(x, y)].modifier.contains(Modifier::REVERSED),
                    "({x}, {y})"
                );
            }
        }
    }
}

#[test]
fn transcript_expanded_shows_tool_output() {
    let mut state = conversation();
    state.expanded = true;
    let buffer = draw(&state, (200, 50));
    snapshot("transcript_expanded", &buffer);
    let Some((x, y)) = find(&buffer, "+fn main() { greet") else {
        panic!("the edit's diff is shown:\n{}", text_of(&buffer));
    };
    assert_eq!(buffer[(x, y)].fg, Color::Green);
}

#[test]
fn modal() {
    for size in SIZES {
        let mut state = conversation();
        state.activity = Some("running edit src/main.rs".into());
        state.ask = Some(ask());
        let buffer = draw(&state, size);
        snapshot("modal", &buffer);
        let Some((x, y)) = find(&buffer, "ASK · the agent needs your permission") else {
            panic!("the modal is drawn:\n{}", text_of(&buffer));
        };
        assert!(buffer[(x, y)].modifier.contains(Modifier::REVERSED));
        assert_eq!(buffer[(x - 2, y)].symbol(), "╔");
        assert_eq!(buffer[(x - 2, y)].fg, Color::Yellow);
        let Some((x, y)) = find(&buffer, "+fn main()") else {
            panic!("the diff is in the modal:\n{}", text_of(&buffer));
        };
        assert_eq!(buffer[(x, y)].fg, Color::Green);
    }
}

#[test]
fn sessions_panel() {
    for size in SIZES {
        let mut state = conversation();
        let row = |id: &str, agent: &str, title: &str| SessionRow {
            id: id.into(),
            agent: agent.into(),
            title: title.into(),
        };
        state.sessions = Some(SessionsPanel {
            rows: vec![
                row(
                    "ses_0123456789abcdef",
                    "build",
                    "Make the greeting say hello",
                ),
                row("ses_00aa", "plan", "Plan the release"),
                row("ses_0099", "build", "Fix the flaky test"),
            ],
            selected: 1,
        });
        let buffer = draw(&state, size);
        snapshot("sessions", &buffer);
        let Some((x, y)) = find(&buffer, "ses_00aa") else {
            panic!("the panel is drawn:\n{}", text_of(&buffer));
        };
        assert_eq!(
            buffer[(x, y)].bg,
            Color::Cyan,
            "the selected row stands out"
        );
    }
}

#[test]
fn status_line() {
    for size in SIZES {
        let mut state = State::new(status());
        state.activity = Some("running bash cargo test".into());
        let buffer = draw(&state, size);
        snapshot("status", &buffer);
        let text = text_of(&buffer);
        let lines: Vec<&str> = text.lines().collect();
        let (hint, last) = (lines[lines.len() - 5], lines[lines.len() - 1]);
        assert!(hint.contains("running bash cargo test"), "{hint}");
        for part in [
            "build",
            "local/qwen3",
            "1.2k↑ 80↓ $0.0042",
            "workspace-write",
            "project trusted",
        ] {
            assert!(last.contains(part), "{part} in {last}");
        }
        if size.0 >= 200 {
            for part in [
                "agent build",
                "model local/qwen3",
                "sandbox workspace-write",
                "session local ses_0123456789abcdef",
            ] {
                assert!(last.contains(part), "{part} in {last}");
            }
        }
    }
}

#[test]
fn a_screen_below_80_by_24_says_so() {
    let buffer = draw(&conversation(), (79, 30));
    assert!(text_of(&buffer).contains("agent tui needs at least 80×24 (this terminal is 79×30)"));
}

#[test]
fn hostile_model_text_draws_no_control_character() {
    let mut state = State::new(status());
    let hostile = "fine\x1b[2J\x1b]52;c;aGk=\x07 \u{202e}txt.exe\r\u{9b}31mred\u{8}";
    state.transcript.part(&agentgate::Part::text(hostile), 0);
    let buffer = draw(&state, (80, 24));
    let text = text_of(&buffer);
    assert!(
        text.contains("fine\\u{1b}[2J\\u{1b}]52;c;aGk=\\u{7}"),
        "{text}"
    );
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(!text.contains('\u{202e}'));
}

#[test]
fn a_long_diff_wraps_and_says_how_much_more_there_is() {
    let mut state = conversation();
    let mut view = ask();
    let long = format!("+{}END", "x".repeat(100));
    view.diff = std::iter::once(long)
        .chain((0..40).map(|n| format!("+line {n}")))
        .collect();
    state.ask = Some(view);
    let buffer = draw(&state, (80, 24));
    let text = text_of(&buffer);
    // The long line is wrapped, not cut: its end is on screen.
    assert!(text.contains("xEND"), "{text}");
    assert!(text.contains("more diff rows (↑/↓ scroll)"), "{text}");
    // The answers stay on screen below the diff.
    assert!(text.contains(" o  once"), "{text}");
}
