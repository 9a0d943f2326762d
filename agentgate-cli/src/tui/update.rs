//! The reducer of `agent tui`: [`update`] takes the state and one
//! message (a key, a paste, an event of the turn, an ask, a command's
//! answer) and changes the state, returning the effects the driver is to
//! carry out (send a prompt, cancel the turn, answer the ask, switch
//! sessions...). It does no I/O, so every key's meaning is unit tested.

use agentgate::TurnEvent;
use agentgate::remote::RemoteEvent;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::ask_modal::{Answer, AskView};
use super::state::{SessionRow, SessionsPanel, State, Status};
use super::transcript::{Entry, NoteKind, ToolStatus, Transcript};

/// How a turn ended, for the transcript and the status line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnSummary {
    /// Why it stopped, when it did not finish (`the turn was cancelled`).
    pub stopped: Option<String>,
    /// Input tokens.
    pub tokens_in: u64,
    /// Output tokens.
    pub tokens_out: u64,
    /// Its cost in dollars, when known.
    pub cost: Option<f64>,
}

/// What can happen to the screen.
#[derive(Debug)]
pub enum Msg {
    /// A key was pressed.
    Key(KeyEvent),
    /// Text was pasted.
    Paste(String),
    /// An event of the running turn.
    Turn(Box<TurnEvent>),
    /// An event of the running turn on a server.
    Remote(Box<RemoteEvent>),
    /// The running turn ended.
    Finished(TurnSummary),
    /// An ask is waiting for an answer.
    Asked(Box<AskView>),
    /// A line for the transcript (a command's answer).
    Said(NoteKind, String),
    /// The directory's sessions, for the panel.
    Sessions(Vec<SessionRow>),
    /// Another session (or agent, or model) is now shown.
    Reset(Box<Status>, Transcript),
    /// Time passed (the spinner turns while a turn runs).
    Tick,
}

/// What the driver is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Run a turn with this prompt.
    Send(String),
    /// Run custom command `name` with `arguments`.
    Command {
        /// The command's name.
        name: String,
        /// Its arguments.
        arguments: String,
    },
    /// Cancel the running turn.
    Cancel,
    /// Answer ask `id`.
    Answer {
        /// The ask's id.
        id: String,
        /// The answer.
        answer: Answer,
    },
    /// `/undo` with this argument (`--force` or nothing).
    Undo(String),
    /// `/redo` with this argument.
    Redo(String),
    /// `/agent`: switch to the agent named (a new session), or say which.
    Agent(String),
    /// `/model`: switch the model, or say which.
    Model(String),
    /// List the directory's sessions in the panel.
    ListSessions,
    /// Show session `id`.
    OpenSession(String),
    /// Leave.
    Quit,
}

/// The chat's own commands, as `/help` lists them.
const HELP: &str = "commands:\n  /agent [NAME]  show or switch the agent (a new session)\n  \
/model [PROVIDER/MODEL]  show or switch the model\n  /sessions  this directory's sessions\n  \
/undo  take back the last prompt and its file changes\n  /redo  put back what /undo took\n  \
/help  this list\n  /exit  leave (Ctrl-D too)\nkeys: Enter sends · Alt-Enter or Ctrl-J a new line · \
↑/↓ history · PgUp/PgDn scroll · Ctrl-O tool output · Ctrl-C cancels the turn";

/// Changes `state` by `msg`; the effects the driver carries out.
pub fn update(state: &mut State, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(key) if key.kind != KeyEventKind::Release => on_key(state, key),
        Msg::Key(_) => Vec::new(),
        Msg::Paste(text) => {
            match state.ask.as_mut() {
                Some(ask) => {
                    if let Some(feedback) = ask.feedback.as_mut() {
                        feedback.push_str(&text.replace(['\r', '\n'], " "));
                    }
                }
                None => state.editor.insert(&text),
            }
            Vec::new()
        }
        Msg::Turn(item) => {
            state.transcript.event(&item);
            on_activity(state);
            Vec::new()
        }
        Msg::Remote(event) => {
            if let RemoteEvent::StepStarted { model, .. } = event.as_ref()
                && !model.is_empty()
            {
                state.status.model = crate::terminal_text::terminal_safe(model);
            }
            state.transcript.remote(&event);
            on_activity(state);
            Vec::new()
        }
        Msg::Finished(summary) => {
            on_finished(state, summary);
            Vec::new()
        }
        Msg::Asked(view) => {
            state.ask = Some(*view);
            Vec::new()
        }
        Msg::Said(_, text) if text.trim().is_empty() => Vec::new(),
        Msg::Said(kind, text) => {
            state.transcript.note(kind, &text);
            state.scroll = 0;
            Vec::new()
        }
        Msg::Sessions(rows) => {
            let selected = rows
                .iter()
                .position(|r| r.id == state.status.session)
                .unwrap_or(0);
            state.sessions = Some(SessionsPanel { rows, selected });
            Vec::new()
        }
        Msg::Reset(mut status, transcript) => {
            if status.session == state.status.session {
                // The same session (after /undo, /model): its totals stay.
                status.tokens_in = state.status.tokens_in;
                status.tokens_out = state.status.tokens_out;
                status.cost = state.status.cost;
            }
            state.status = *status;
            state.transcript = transcript;
            state.scroll = 0;
            Vec::new()
        }
        Msg::Tick => {
            state.tick = state.tick.wrapping_add(1);
            Vec::new()
        }
    }
}

/// What the running turn does now, after its last event, into the
/// activity line.
fn on_activity(state: &mut State) {
    if let Some((_, Entry::Tool(tool))) = state.transcript.entries().last() {
        state.activity = Some(match tool.status {
            ToolStatus::Running | ToolStatus::Pending => {
                format!("running {} {}", tool.tool, tool.summary)
            }
            _ => "thinking".into(),
        });
    } else if state.activity.is_some() {
        state.activity = Some("writing".into());
    }
}

fn on_finished(state: &mut State, summary: TurnSummary) {
    state.activity = None;
    state.ask = None;
    state.status.tokens_in += summary.tokens_in;
    state.status.tokens_out += summary.tokens_out;
    if let Some(cost) = summary.cost {
        state.status.cost = Some(state.status.cost.unwrap_or(0.0) + cost);
    }
    if let Some(stopped) = summary.stopped {
        state.transcript.note(NoteKind::Error, &stopped);
    }
}

fn on_key(state: &mut State, key: KeyEvent) -> Vec<Effect> {
    if state.ask.is_some() {
        return ask_key(state, key);
    }
    if state.sessions.is_some() {
        return panel_key(state, key);
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c') if ctrl => {
            if state.busy() {
                state.activity = Some("cancelling".into());
                return vec![Effect::Cancel];
            }
            state.editor.clear();
        }
        KeyCode::Char('d') if ctrl => {
            if state.editor.is_empty() {
                state.quit = true;
                return vec![Effect::Quit];
            }
            state.editor.delete();
        }
        KeyCode::Char('o') if ctrl => state.expanded = !state.expanded,
        KeyCode::Char('j') if ctrl => state.editor.newline(),
        KeyCode::Char('u') if ctrl => state.editor.clear(),
        KeyCode::Enter
            if key
                .modifiers
                .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) =>
        {
            state.editor.newline();
        }
        KeyCode::Enter => return submit(state),
        KeyCode::PageUp => state.scroll = state.scroll.saturating_add(state.page.max(1)),
        KeyCode::PageDown => state.scroll = state.scroll.saturating_sub(state.page.max(1)),
        _ => edit_key(state, key),
    }
    Vec::new()
}

/// A key that edits the prompt.
fn edit_key(state: &mut State, key: KeyEvent) {
    let editor = &mut state.editor;
    match key.code {
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => editor.insert_char(c),
        KeyCode::Backspace => editor.backspace(),
        KeyCode::Delete => editor.delete(),
        KeyCode::Left => editor.left(),
        KeyCode::Right => editor.right(),
        KeyCode::Up => editor.up(),
        KeyCode::Down => editor.down(),
        KeyCode::Home => editor.home(),
        KeyCode::End => editor.end(),
        KeyCode::Tab => editor.insert("    "),
        _ => {}
    }
}

/// Enter: the prompt is sent, or its `/` command run.
fn submit(state: &mut State) -> Vec<Effect> {
    if state.editor.text().trim().is_empty() {
        return Vec::new();
    }
    if state.busy() && matches!(state.editor.text().trim(), "/exit" | "/quit") {
        state.quit = true;
        return vec![Effect::Cancel, Effect::Quit];
    }
    if state.busy() {
        state.transcript.note(
            NoteKind::Info,
            "a turn is running: wait for it, or Ctrl-C cancels it",
        );
        return Vec::new();
    }
    let raw = state.editor.take();
    state.scroll = 0;
    // A leading space sends a line that starts with / as text.
    if raw.starts_with(' ') || !raw.trim_start().starts_with('/') {
        return send(state, raw.trim().to_string());
    }
    let line = raw.trim();
    let (command, argument) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    slash(state, command, argument.trim())
}

fn send(state: &mut State, text: String) -> Vec<Effect> {
    state.transcript.user(&text);
    state.activity = Some("thinking".into());
    vec![Effect::Send(text)]
}

/// A `/` command.
fn slash(state: &mut State, command: &str, argument: &str) -> Vec<Effect> {
    let argument = argument.to_string();
    match command {
        "/exit" | "/quit" => {
            state.quit = true;
            vec![Effect::Quit]
        }
        "/help" => {
            let mut text = HELP.to_string();
            if state.commands.is_empty() {
                text.push_str("\nno custom commands (.opencode/commands/NAME.md)");
            } else {
                text.push_str("\ncustom commands (/NAME ARGS):");
                for line in &state.commands {
                    text.push('\n');
                    text.push_str(line);
                }
            }
            state.transcript.note(NoteKind::Info, &text);
            Vec::new()
        }
        "/sessions" => vec![Effect::ListSessions],
        "/agent" => vec![Effect::Agent(argument)],
        "/model" => vec![Effect::Model(argument)],
        "/undo" => vec![Effect::Undo(argument)],
        "/redo" => vec![Effect::Redo(argument)],
        _ => {
            let name = &command[1..];
            let known = state.commands.iter().any(|line| {
                line.trim_start()
                    .strip_prefix('/')
                    .and_then(|l| l.split_whitespace().next())
                    == Some(name)
            });
            if !known {
                let said = format!("unknown command {command}; /help lists the commands");
                state.transcript.note(NoteKind::Error, &said);
                return Vec::new();
            }
            state.transcript.user(&format!("{command} {argument}"));
            state.activity = Some("thinking".into());
            vec![Effect::Command {
                name: name.to_string(),
                arguments: argument,
            }]
        }
    }
}

/// A key while the ask modal is up.
fn ask_key(state: &mut State, key: KeyEvent) -> Vec<Effect> {
    let Some(ask) = state.ask.as_mut() else {
        return Vec::new();
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let answer = if let Some(feedback) = ask.feedback.as_mut() {
        match key.code {
            KeyCode::Enter if feedback.trim().is_empty() => Answer::Reject,
            KeyCode::Enter => Answer::Feedback(feedback.trim().to_string()),
            KeyCode::Esc => {
                ask.feedback = None;
                return Vec::new();
            }
            KeyCode::Backspace => {
                feedback.pop();
                return Vec::new();
            }
            KeyCode::Char('c') if ctrl => Answer::Reject,
            KeyCode::Char(c) => {
                feedback.push(c);
                return Vec::new();
            }
            _ => return Vec::new(),
        }
    } else {
        match key.code {
            KeyCode::Char('c') if ctrl => Answer::Reject,
            KeyCode::Char('f') => {
                ask.feedback = Some(String::new());
                return Vec::new();
            }
            KeyCode::Up => {
                ask.scroll = ask.scroll.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::Down => {
                ask.scroll = (ask.scroll + 1).min(ask.diff.len().saturating_sub(1));
                return Vec::new();
            }
            KeyCode::Char(c) => match ask.answer_for(c) {
                Some(answer) => answer,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        }
    };
    answered(state, answer)
}

/// The ask is answered: the modal closes, the transcript says how.
fn answered(state: &mut State, answer: Answer) -> Vec<Effect> {
    let Some(ask) = state.ask.take() else {
        return Vec::new();
    };
    let what = ask
        .command
        .clone()
        .or(ask.file.clone())
        .unwrap_or(ask.patterns.clone());
    let how = match &answer {
        Answer::Once => "allowed once",
        Answer::Grant => "allowed once (sandbox may write there)",
        Answer::Always => "allowed always",
        Answer::AlwaysExact => "allowed always (exactly)",
        Answer::Reject => "rejected",
        Answer::Feedback(_) => "rejected with feedback",
    };
    let kind = match answer {
        Answer::Reject | Answer::Feedback(_) => NoteKind::Error,
        _ => NoteKind::Info,
    };
    state
        .transcript
        .note(kind, &format!("{how}: {} {what}", ask.permission));
    vec![Effect::Answer { id: ask.id, answer }]
}

/// A key while the sessions panel is open.
fn panel_key(state: &mut State, key: KeyEvent) -> Vec<Effect> {
    let Some(panel) = state.sessions.as_mut() else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Up => panel.selected = panel.selected.saturating_sub(1),
        KeyCode::Down => {
            panel.selected = (panel.selected + 1).min(panel.rows.len().saturating_sub(1))
        }
        KeyCode::Enter => {
            let chosen = panel.rows.get(panel.selected).map(|r| r.id.clone());
            state.sessions = None;
            return chosen.map(Effect::OpenSession).into_iter().collect();
        }
        KeyCode::Esc | KeyCode::Char('q') => state.sessions = None,
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            state.sessions = None
        }
        _ => {}
    }
    Vec::new()
}

#[cfg(test)]
mod tests;
