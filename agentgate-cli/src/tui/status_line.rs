//! The status line of `agent tui`: the agent, the model, the tokens and
//! cost so far, the sandbox mode, whether the project is trusted, and the
//! session (local, or the server attached to); labelled when the screen
//! is wide enough, values only when it is not.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::state::Status;

/// The spinner's frames (the hint line shows it while a turn runs).
pub const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

/// A token count, short: `950`, `1.2k`, `3.4M`.
fn count(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The status line's fields: label (none for the trust state, whose
/// words say what they are) and value.
fn fields(status: &Status) -> Vec<(&'static str, String)> {
    let mut tokens = format!("{}↑ {}↓", count(status.tokens_in), count(status.tokens_out));
    if let Some(cost) = status.cost {
        tokens.push_str(&format!(" ${cost:.4}"));
    }
    vec![
        ("agent", status.agent.clone()),
        ("model", status.model.clone()),
        ("tokens", tokens),
        ("sandbox", status.sandbox.clone()),
        ("", status.trust.clone()),
        ("session", format!("{} {}", status.place, status.session)),
    ]
}

/// The status line for a screen `width` columns wide.
pub fn status_line(status: &Status, width: u16) -> Line<'static> {
    let label = Style::default().fg(Color::DarkGray);
    let value = Style::default().add_modifier(Modifier::BOLD);
    let fields = fields(status);
    let full: usize = fields
        .iter()
        .map(|(l, v)| l.chars().count() + v.chars().count() + 4)
        .sum();
    let labelled = full <= usize::from(width);
    let mut spans = Vec::new();
    for (name, text) in fields {
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", label));
        }
        let name = if labelled { name } else { "" };
        if !name.is_empty() {
            spans.push(Span::styled(format!("{name} "), label));
        }
        spans.push(Span::styled(text, value));
    }
    Line::from(spans)
}

/// Draws the status line into `area` (one row).
pub fn draw(frame: &mut Frame<'_>, area: Rect, status: &Status) {
    frame.render_widget(Paragraph::new(status_line(status, area.width)), area);
}
