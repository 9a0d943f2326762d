//! The status line of `agent tui`: what runs now (a spinner and the
//! activity while a turn runs), then the agent, the model, the tokens and
//! cost so far, the sandbox mode, whether the project is trusted, and the
//! session (local, or the server attached to).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::state::State;

/// The spinner's frames.
const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

/// The status line's spans.
pub fn status_line(state: &State) -> Line<'static> {
    let status = &state.status;
    let label = Style::default().fg(Color::DarkGray);
    let value = Style::default().add_modifier(Modifier::BOLD);
    let mut spans = Vec::new();
    if let Some(activity) = &state.activity {
        let frame = SPINNER[state.tick % SPINNER.len()];
        spans.push(Span::styled(
            format!("{frame} {activity} "),
            Style::default().fg(Color::Yellow),
        ));
        spans.push(Span::styled("│ ", label));
    }
    let mut field = |name: &str, text: String| {
        spans.push(Span::styled(format!("{name} "), label));
        spans.push(Span::styled(text, value));
        spans.push(Span::styled(" · ", label));
    };
    field("agent", status.agent.clone());
    field("model", status.model.clone());
    field(
        "tokens",
        format!("{}↑ {}↓", status.tokens_in, status.tokens_out),
    );
    if let Some(cost) = status.cost {
        field("cost", format!("${cost:.4}"));
    }
    field("sandbox", status.sandbox.clone());
    field("trust", status.trust.clone());
    field(&status.place, status.session.clone());
    spans.pop();
    Line::from(spans)
}

/// Draws the status line into `area` (one row).
pub fn draw(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let line = status_line(state);
    frame.render_widget(
        Paragraph::new(line).style(Style::default().bg(Color::Reset)),
        area,
    );
}
