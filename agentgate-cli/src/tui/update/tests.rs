use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Effect, Msg, update};
use crate::tui::ask_modal::{Answer, AskView};
use crate::tui::state::{SessionRow, State, Status};
use crate::tui::transcript::Entry;

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn typed(state: &mut State, text: &str) {
    for c in text.chars() {
        update(state, key(KeyCode::Char(c)));
    }
}

fn state() -> State {
    State::new(Status {
        session: "ses_1".into(),
        ..Status::default()
    })
}

fn ask() -> AskView {
    AskView {
        id: "per_1".into(),
        permission: "bash".into(),
        patterns: "cargo test".into(),
        command: Some("cargo test".into()),
        file: None,
        diff: Vec::new(),
        always: vec![('a', "Always allow bash \"cargo test *\"".into())],
        grant: false,
        feedback: None,
        scroll: 0,
    }
}

#[test]
fn enter_sends_the_prompt_and_a_running_turn_is_cancelled_by_ctrl_c() {
    let mut state = state();
    typed(&mut state, "fix it");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::Send("fix it".into())]
    );
    assert!(state.editor.is_empty());
    assert!(matches!(&state.transcript.entries()[0].1, Entry::User(t) if t == "fix it"));
    assert!(state.busy());
    // Enter during the turn sends nothing.
    typed(&mut state, "more");
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    assert_eq!(update(&mut state, ctrl('c')), [Effect::Cancel]);
    update(&mut state, Msg::Finished(Default::default()));
    assert!(!state.busy());
    // Idle, Ctrl-C clears the editor; Ctrl-D on an empty one quits.
    update(&mut state, ctrl('c'));
    assert!(state.editor.is_empty());
    assert_eq!(update(&mut state, ctrl('d')), [Effect::Quit]);
    assert!(state.quit);
}

#[test]
fn alt_enter_writes_a_second_line() {
    let mut state = state();
    typed(&mut state, "a");
    update(
        &mut state,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
    );
    typed(&mut state, "b");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::Send("a\nb".into())]
    );
}

#[test]
fn slash_commands_become_effects_and_unknown_ones_are_answered_here() {
    let mut state = state();
    state.commands = vec!["  /review  review the diff".into()];
    for (line, effect) in [
        ("/undo", Effect::Undo(String::new())),
        ("/redo --force", Effect::Redo("--force".into())),
        ("/agent plan", Effect::Agent("plan".into())),
        ("/model local/qwen3", Effect::Model("local/qwen3".into())),
        ("/sessions", Effect::ListSessions),
        (
            "/review src",
            Effect::Command {
                name: "review".into(),
                arguments: "src".into(),
            },
        ),
    ] {
        typed(&mut state, line);
        assert_eq!(update(&mut state, key(KeyCode::Enter)), [effect], "{line}");
        state.activity = None;
    }
    typed(&mut state, "/nope");
    assert!(update(&mut state, key(KeyCode::Enter)).is_empty());
    let last = &state.transcript.entries().last().map(|e| e.1.clone());
    assert!(matches!(last, Some(Entry::Note(_, t)) if t.contains("unknown command /nope")));
    typed(&mut state, " /not a command");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::Send("/not a command".into())]
    );
    // During a turn, /exit cancels it and leaves.
    typed(&mut state, "/exit");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::Cancel, Effect::Quit]
    );
}

#[test]
fn the_modal_takes_the_keys_of_agent_chat() {
    let mut state = state();
    state.activity = Some("thinking".into());
    update(&mut state, Msg::Asked(Box::new(ask())));
    // Keys not on offer do nothing; the editor does not get them.
    update(&mut state, key(KeyCode::Char('z')));
    assert!(state.ask.is_some() && state.editor.is_empty());
    let answered = update(&mut state, key(KeyCode::Char('a')));
    assert_eq!(
        answered,
        [Effect::Answer {
            id: "per_1".into(),
            answer: Answer::Always
        }]
    );
    assert!(state.ask.is_none());
    update(&mut state, Msg::Asked(Box::new(ask())));
    assert_eq!(
        update(&mut state, key(KeyCode::Char('o'))),
        [Effect::Answer {
            id: "per_1".into(),
            answer: Answer::Once
        }]
    );
    update(&mut state, Msg::Asked(Box::new(ask())));
    update(&mut state, key(KeyCode::Char('f')));
    typed(&mut state, "use nextest");
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::Answer {
            id: "per_1".into(),
            answer: Answer::Feedback("use nextest".into())
        }]
    );
    update(&mut state, Msg::Asked(Box::new(ask())));
    assert_eq!(
        update(&mut state, key(KeyCode::Char('r'))),
        [Effect::Answer {
            id: "per_1".into(),
            answer: Answer::Reject
        }]
    );
}

#[test]
fn the_sessions_panel_opens_the_session_chosen() {
    let mut state = state();
    let row = |id: &str| SessionRow {
        id: id.into(),
        agent: "build".into(),
        title: "t".into(),
    };
    update(
        &mut state,
        Msg::Sessions(vec![row("ses_0"), row("ses_1"), row("ses_2")]),
    );
    // The current session is selected first.
    assert_eq!(state.sessions.as_ref().map(|p| p.selected), Some(1));
    update(&mut state, key(KeyCode::Down));
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Effect::OpenSession("ses_2".into())]
    );
    assert!(state.sessions.is_none());
}

#[test]
fn page_up_and_down_move_a_page_of_the_transcript() {
    let mut state = state();
    // Before the first frame the page is unknown: a row at a time.
    update(&mut state, key(KeyCode::PageUp));
    assert_eq!(state.scroll, 1);
    state.page = 38;
    update(&mut state, key(KeyCode::PageUp));
    update(&mut state, key(KeyCode::PageUp));
    assert_eq!(state.scroll, 77);
    update(&mut state, key(KeyCode::PageDown));
    assert_eq!(state.scroll, 39);
    update(&mut state, key(KeyCode::PageDown));
    update(&mut state, key(KeyCode::PageDown));
    assert_eq!(state.scroll, 0);
}
