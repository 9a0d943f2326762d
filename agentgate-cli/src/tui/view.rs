//! The screen of `agent tui`: the transcript above, a line of hints, the
//! prompt editor and the status line below, and over them the sessions
//! panel or the ask's modal. Below 80×24 it says so instead.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use super::state::State;
use super::status_line::SPINNER;
use super::transcript_view::ViewCache;
use super::{ask_modal, sessions_panel, status_line, transcript_view};
use crate::terminal_text::terminal_safe;

/// The smallest screen drawn.
pub const MIN_SIZE: (u16, u16) = (80, 24);

/// How many editor lines show at most.
const EDITOR_ROWS: usize = 6;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, state: &State, cache: &mut ViewCache) {
    let area = frame.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "agent tui needs at least {}×{} (this terminal is {}×{})",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        frame.render_widget(Paragraph::new(text), area);
        return;
    }
    let rows = state.editor.lines().len().clamp(1, EDITOR_ROWS);
    let editor_height = u16::try_from(rows + 2).unwrap_or(3);
    let [transcript, hints, editor, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(editor_height),
        Constraint::Length(1),
    ])
    .areas(area);
    transcript_view::draw(
        frame,
        transcript,
        &state.transcript,
        cache,
        state.scroll,
        state.expanded,
    );
    frame.render_widget(Paragraph::new(hint_line(state)), hints);
    draw_editor(frame, editor, state);
    status_line::draw(frame, status, &state.status);
    if let Some(panel) = &state.sessions {
        sessions_panel::draw(frame, transcript, panel, &state.status.session);
    }
    if let Some(ask) = &state.ask {
        ask_modal::draw(frame, transcript, ask);
    }
}

/// The line above the editor: while a turn runs, a spinner and what it
/// does; else the keys.
fn hint_line(state: &State) -> Line<'static> {
    let dim = Style::default().fg(Color::DarkGray);
    if state.ask.is_some() {
        return Line::from(Span::styled(
            "an ask is waiting: answer it in the box above",
            Style::default().fg(Color::Yellow),
        ));
    }
    if let Some(activity) = &state.activity {
        let frame = SPINNER[state.tick % SPINNER.len()];
        return Line::from(vec![
            Span::styled(
                format!("{frame} {activity}"),
                Style::default().fg(Color::Yellow),
            ),
            Span::styled(
                " · Ctrl-C cancels the turn · PgUp/PgDn scroll · Ctrl-O tool output",
                dim,
            ),
        ]);
    }
    let keys = "Enter sends · Alt-Enter new line · /help · Ctrl-O tool output · Ctrl-D quits";
    Line::from(Span::styled(keys, dim))
}

/// The prompt editor, the cursor placed in it.
fn draw_editor(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let editor = &state.editor;
    let (row, col) = editor.cursor();
    let inner_width = usize::from(area.width.saturating_sub(2)).max(1);
    let first_row = row.saturating_sub(EDITOR_ROWS - 1);
    let shift = col.saturating_sub(inner_width - 1);
    let lines: Vec<Line<'static>> = editor
        .lines()
        .iter()
        .skip(first_row)
        .take(EDITOR_ROWS)
        .map(|line| {
            // The person's own text, but a paste may carry anything.
            let shown: String = line.chars().skip(shift).collect();
            Line::from(terminal_safe(&shown))
        })
        .collect();
    let border = if state.ask.is_some() {
        Color::DarkGray
    } else {
        Color::Green
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(border))
        .title(" prompt ");
    frame.render_widget(Paragraph::new(lines).block(block), area);
    if state.ask.is_none() && state.sessions.is_none() {
        let x = area.x + 1 + u16::try_from(col - shift).unwrap_or(0);
        let y = area.y + 1 + u16::try_from(row - first_row).unwrap_or(0);
        frame.set_cursor_position(Position { x, y });
    }
}
