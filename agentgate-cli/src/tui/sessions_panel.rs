//! The sessions panel of `agent tui` (`/sessions`): the directory's
//! sessions, most recent first, the current one marked; ↑/↓ choose, Enter
//! opens, Esc closes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::state::SessionsPanel;

/// Draws `panel` over `area`; `current` is the session shown now.
pub fn draw(frame: &mut Frame<'_>, area: Rect, panel: &SessionsPanel, current: &str) {
    let width = area.width.saturating_sub(8).min(110);
    let most = area.height.saturating_sub(6);
    let rows = u16::try_from(panel.rows.len().max(1)).unwrap_or(most);
    let height = (rows + 2).min(most);
    let modal = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + 2,
        width,
        height,
    };
    let room = usize::from(height.saturating_sub(2));
    let first = panel.selected.saturating_sub(room.saturating_sub(1));
    let mut lines: Vec<Line<'static>> = panel
        .rows
        .iter()
        .enumerate()
        .skip(first)
        .take(room)
        .map(|(at, row)| {
            let mark = if row.id == current { "*" } else { " " };
            let style = if at == panel.selected {
                Style::default().fg(Color::Black).bg(Color::Cyan)
            } else {
                Style::default()
            };
            Line::from(vec![
                Span::styled(
                    format!("{mark} {}  ", row.id),
                    style.add_modifier(Modifier::BOLD),
                ),
                Span::styled(format!("{:<8} ", row.agent), style.fg(Color::Magenta)),
                Span::styled(row.title.clone(), style),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from("no sessions in this directory yet"));
    }
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::Cyan))
        .title(" sessions · ↑/↓ choose · Enter opens · Esc closes ");
    frame.render_widget(Clear, modal);
    frame.render_widget(Paragraph::new(lines).block(block), modal);
}
