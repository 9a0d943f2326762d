//! An ask as `agent tui` shows it: a modal over the transcript with what
//! is asked (the permission, its patterns, the command or the file and
//! its real diff), what each "always" would add, and the keys of `agent
//! chat` (`o` once, `a` always, `r` reject, `f` reject with feedback; `g`
//! and `x` where offered).
//!
//! It cannot be taken for model text: only the modal is drawn with a
//! double yellow border and a title in reverse video, which the
//! transcript never uses (its text is the model's, drawn in foreground
//! colours only), and while it is up the prompt editor gives way to it.
//! Every text in it went through [`ask_safe`]: every character of what is
//! approved is shown, the invisible ones written out.

use agentgate::permission::{PermissionRequest, Reply, ReplyKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use super::wrap::wrap;
use crate::terminal_text::ask_safe;

/// How an ask is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allowed this once.
    Once,
    /// Allowed once, the sandbox letting the command write there.
    Grant,
    /// Allowed now and from now on (the rules shown).
    Always,
    /// Allowed from now on for exactly this command.
    AlwaysExact,
    /// Rejected.
    Reject,
    /// Rejected, with these words for the model.
    Feedback(String),
}

impl Answer {
    /// The reply the gate (or the server) gets.
    pub fn reply(self) -> Reply {
        match self {
            Answer::Once => Reply::Once,
            Answer::Grant => Reply::Grant,
            Answer::Always => Reply::Always,
            Answer::AlwaysExact => Reply::AlwaysExact,
            Answer::Reject => Reply::reject(),
            Answer::Feedback(words) => Reply::correct(words),
        }
    }
}

/// What the modal shows of one ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskView {
    /// The request's id.
    pub id: String,
    /// The permission (`bash`, `edit`).
    pub permission: String,
    /// Its patterns, joined.
    pub patterns: String,
    /// The command asked to run.
    pub command: Option<String>,
    /// The file asked to change.
    pub file: Option<String>,
    /// The change's diff, line by line.
    pub diff: Vec<String>,
    /// The "always" answers: key, then what it adds and means.
    pub always: Vec<(char, String)>,
    /// Whether `g` (grant the sandbox) is offered.
    pub grant: bool,
    /// The feedback being written after `f` (`None`: not writing).
    pub feedback: Option<String>,
    /// The first diff line shown.
    pub scroll: usize,
}

impl AskView {
    /// The view of `request`, every text made safe.
    pub fn of(request: &PermissionRequest) -> Self {
        let meta = &request.metadata;
        let text = |key: &str| meta.get(key).and_then(|v| v.as_str()).map(ask_safe);
        let always = request
            .always_choices()
            .into_iter()
            .map(|choice| {
                let key = if choice.kind == ReplyKind::AlwaysExact {
                    'x'
                } else {
                    'a'
                };
                (
                    key,
                    ask_safe(&format!("{}: {}", choice.label, choice.meaning)),
                )
            })
            .collect();
        AskView {
            id: request.id.clone(),
            permission: ask_safe(&request.permission),
            patterns: ask_safe(&request.patterns.join(", ")),
            command: text("command"),
            file: text("filepath"),
            diff: text("diff")
                .map(|d| d.trim_end().lines().map(str::to_string).collect())
                .unwrap_or_default(),
            always,
            grant: request.answers().contains(&ReplyKind::Grant),
            feedback: None,
            scroll: 0,
        }
    }

    /// The answer key `c` gives, when it is one on offer.
    pub fn answer_for(&self, c: char) -> Option<Answer> {
        match c {
            'o' | 'y' => Some(Answer::Once),
            'g' if self.grant => Some(Answer::Grant),
            'a' if self.always.iter().any(|(k, _)| *k == 'a') => Some(Answer::Always),
            'x' if self.always.iter().any(|(k, _)| *k == 'x') => Some(Answer::AlwaysExact),
            'r' | 'n' => Some(Answer::Reject),
            _ => None,
        }
    }
}

/// The lines above the diff.
fn head_lines(ask: &AskView) -> Vec<Line<'static>> {
    let label = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::from(vec![
        Span::styled("permission: ", label),
        Span::raw(ask.permission.clone()),
    ])];
    lines.push(Line::from(vec![
        Span::styled("patterns: ", label),
        Span::raw(ask.patterns.clone()),
    ]));
    if let Some(command) = &ask.command {
        lines.push(Line::from(vec![
            Span::styled("command: ", label),
            Span::raw(command.clone()),
        ]));
    }
    if let Some(file) = &ask.file {
        lines.push(Line::from(vec![
            Span::styled("file: ", label),
            Span::raw(file.clone()),
        ]));
    }
    lines
}

/// The lines below the diff: the answers on offer, or the feedback being
/// written.
fn answer_lines(ask: &AskView) -> Vec<Line<'static>> {
    let key = Style::default()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    if let Some(feedback) = &ask.feedback {
        return vec![
            Line::from(vec![
                Span::styled(" feedback ", key),
                Span::raw(format!(" {feedback}█")),
            ]),
            Line::from("Enter rejects with this feedback · Esc goes back to the answers"),
        ];
    }
    let mut first = vec![Span::styled(" o ", key), Span::raw(" once  ")];
    if ask.grant {
        first.extend([
            Span::styled(" g ", key),
            Span::raw(" once, sandbox may write there  "),
        ]);
    }
    first.extend([
        Span::styled(" r ", key),
        Span::raw(" reject  "),
        Span::styled(" f ", key),
        Span::raw(" reject with feedback"),
    ]);
    let mut lines = vec![Line::from(first)];
    for (k, meaning) in &ask.always {
        lines.push(Line::from(vec![
            Span::styled(format!(" {k} "), key),
            Span::raw(format!(" {meaning}")),
        ]));
    }
    lines
}

/// The diff's rows from line `ask.scroll` on, coloured, each line wrapped
/// to `width` (every character of the change is shown, none cut off).
fn diff_rows(ask: &AskView, width: usize) -> Vec<Line<'static>> {
    let from = ask.scroll.min(ask.diff.len().saturating_sub(1));
    ask.diff
        .iter()
        .skip(from)
        .flat_map(|line| {
            let color = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => Color::Green,
                Some('-') if !line.starts_with("---") => Color::Red,
                Some('@') => Color::Cyan,
                _ => Color::Reset,
            };
            wrap(
                Line::from(Span::styled(line.clone(), Style::default().fg(color))),
                width,
            )
        })
        .collect()
}

/// `rows` cut to `room`, the last one then saying how many more there are.
fn fit(mut rows: Vec<Line<'static>>, room: usize) -> Vec<Line<'static>> {
    if rows.len() <= room {
        return rows;
    }
    let hidden = rows.len() - room.saturating_sub(1);
    rows.truncate(room.saturating_sub(1));
    let note = format!("… {hidden} more diff rows (↑/↓ scroll)");
    rows.push(Line::from(Span::styled(
        note,
        Style::default().add_modifier(Modifier::DIM),
    )));
    rows
}

/// Draws `ask` as a modal over `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, ask: &AskView) {
    let width = area.width.saturating_sub(4).min(120);
    let inner = usize::from(width.saturating_sub(4));
    let cut = |lines: Vec<Line<'static>>| -> Vec<Line<'static>> {
        lines
            .into_iter()
            .flat_map(|line| wrap(line, inner))
            .collect()
    };
    let head = cut(head_lines(ask));
    let answers = cut(answer_lines(ask));
    let fixed = head.len() + answers.len() + 1;
    let most = usize::from(area.height.saturating_sub(4));
    let rows = diff_rows(ask, inner);
    let room = most.saturating_sub(fixed + 2).min(rows.len());
    let height = (fixed + room + 2 + usize::from(room > 0)).min(most);
    let height = u16::try_from(height).unwrap_or(area.height);
    let modal = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    };
    let mut lines = head;
    if room > 0 {
        lines.push(Line::default());
        lines.extend(fit(rows, room));
    }
    lines.push(Line::default());
    lines.extend(answers);
    let title = Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(Color::Yellow))
        .title(Span::styled(
            " ASK · the agent needs your permission ",
            title,
        ))
        .padding(Padding::horizontal(1));
    frame.render_widget(Clear, modal);
    frame.render_widget(Paragraph::new(lines).block(block), modal);
}
