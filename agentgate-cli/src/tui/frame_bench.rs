//! The frame-time bench of `agent tui`: a 10,000-line transcript (model
//! markdown with code, tool calls, notes) drawn on ratatui's
//! `TestBackend` at 200×50, first cold (every entry parsed, highlighted
//! and wrapped), then scrolled a page at a time with the cache warm, the
//! budget being a 60 Hz frame (16 ms). Ignored by default (it measures,
//! it does not check behaviour); `agentgate-benches` cannot reach it, as
//! the interface lives in the `agent` binary:
//!
//! ```text
//! cargo test -p agentgate-cli --release --bin agent frame_bench -- --ignored --nocapture
//! ```

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::state::{State, Status};
use super::transcript::{Entry, NoteKind, ToolEntry, ToolStatus};
use super::transcript_view::ViewCache;
use super::view;

/// A transcript of about `lines` drawn lines (each round below draws 15
/// at 200 columns: the prompt and a blank, 11 of markdown with its code
/// block, the tool call, the note).
fn long_transcript(lines: usize) -> State {
    let mut state = State::new(Status::default());
    let block = "Some **markdown** with `code` and a list:\n\n- one\n- two\n\n```rust\nfn f(x: u32) -> u32 {\n    x + 1\n}\n```\n";
    for n in 0..lines / 15 {
        state.transcript.user(&format!("prompt {n}"));
        state.transcript.push(Entry::Assistant {
            id: format!("a{n}"),
            text: block.into(),
            depth: 0,
        });
        state.transcript.push(Entry::Tool(ToolEntry {
            id: format!("t{n}"),
            tool: "bash".into(),
            summary: "cargo test".into(),
            status: ToolStatus::Done,
            output: "test result: ok".into(),
            depth: 0,
        }));
        state
            .transcript
            .note(NoteKind::Info, "allowed once: bash cargo test");
    }
    state
}

#[test]
#[ignore = "a bench: run with --ignored --nocapture"]
fn frame_bench() {
    let mut state = long_transcript(10_000);
    let Ok(mut terminal) = Terminal::new(TestBackend::new(200, 50));
    let mut cache = ViewCache::default();
    let mut frame = |state: &State, cache: &mut ViewCache| {
        let start = Instant::now();
        if let Err(e) = terminal.draw(|f| view::draw(f, state, cache)) {
            panic!("draw: {e}");
        }
        start.elapsed()
    };
    let cold = frame(&state, &mut cache);
    let mut times: Vec<Duration> = Vec::new();
    for page in 0..200 {
        state.scroll = page * 40;
        times.push(frame(&state, &mut cache));
    }
    times.sort();
    let median = times[times.len() / 2];
    let worst = times[times.len() - 1];
    let report = format!(
        "agent tui, {} entries: cold frame {cold:?}; scrolling frames median {median:?}, worst {worst:?} (budget 16 ms)",
        state.transcript.entries().len()
    );
    println!("{}", crate::terminal_text::terminal_safe(&report));
    assert!(
        median < Duration::from_millis(16),
        "median frame {median:?}"
    );
}
