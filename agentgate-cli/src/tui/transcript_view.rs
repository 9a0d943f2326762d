//! Drawing the transcript: each entry as styled lines (markdown for the
//! model's text, a header and, expanded, the output of a tool call, a
//! sub-agent's entries indented behind a bar), wrapped to the panel's
//! width. An entry's wrapped lines are cached by its revision and the
//! width, so a frame redraws only what changed and costs the rows on
//! screen, not the length of the transcript.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::markdown::markdown_lines;
use super::transcript::{Entry, NoteKind, ToolEntry, ToolStatus, Transcript};
use super::wrap::wrap;

/// How many lines of a tool's output show when expanded.
const OUTPUT_LINES: usize = 200;

/// The wrapped lines of each entry, by entry index.
#[derive(Debug, Default)]
pub struct ViewCache {
    entries: HashMap<usize, Cached>,
    /// The scroll of the last frame, clamped.
    used: Option<usize>,
}

#[derive(Debug)]
struct Cached {
    rev: u64,
    width: u16,
    expanded: bool,
    rows: Vec<Line<'static>>,
}

/// The prefix of a sub-agent's lines.
fn nest(depth: u8, lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    if depth == 0 {
        return lines;
    }
    let bar = Span::styled("  ┃ ", Style::default().fg(Color::Magenta));
    lines
        .into_iter()
        .map(|line| {
            let mut spans = vec![bar.clone()];
            spans.extend(line.spans);
            Line::from(spans).style(line.style)
        })
        .collect()
}

fn plain_lines(text: &str, style: Style, prefix: &str) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| {
            Line::from(Span::styled(
                format!("{prefix}{}", l.replace('\t', "    ")),
                style,
            ))
        })
        .collect()
}

/// A tool call: its header, then (expanded, or when it failed) its output.
fn tool_lines(tool: &ToolEntry, expanded: bool) -> Vec<Line<'static>> {
    let (icon, color) = match tool.status {
        ToolStatus::Pending | ToolStatus::Running => ("⋯", Color::Yellow),
        ToolStatus::Done => ("✓", Color::Green),
        ToolStatus::Failed => ("✗", Color::Red),
    };
    let mut header = vec![
        Span::styled(format!("{icon} "), Style::default().fg(color)),
        Span::styled(
            tool.tool.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {}", tool.summary)),
    ];
    let count = tool.output.lines().count();
    let open = expanded || tool.status == ToolStatus::Failed;
    if count > 0 && !open {
        let note = format!(
            "  ({count} line{} · Ctrl-O shows)",
            if count == 1 { "" } else { "s" }
        );
        header.push(Span::styled(note, Style::default().fg(Color::DarkGray)));
    }
    let mut lines = vec![Line::from(header)];
    if open {
        for line in tool.output.lines().take(OUTPUT_LINES) {
            let color = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => Color::Green,
                Some('-') if !line.starts_with("---") => Color::Red,
                _ if tool.status == ToolStatus::Failed => Color::Red,
                _ => Color::Gray,
            };
            let text = format!("    {}", line.replace('\t', "    "));
            lines.push(Line::from(Span::styled(text, Style::default().fg(color))));
        }
        if count > OUTPUT_LINES {
            lines.push(Line::from(format!(
                "    … {} more lines",
                count - OUTPUT_LINES
            )));
        }
    }
    lines
}

/// One entry as styled lines, not yet wrapped.
pub fn entry_lines(entry: &Entry, expanded: bool) -> Vec<Line<'static>> {
    let mut lines = match entry {
        Entry::User(text) => {
            let style = Style::default()
                .fg(Color::Green)
                .add_modifier(Modifier::BOLD);
            let mut lines = plain_lines(text, Style::default(), "  ");
            if let Some(first) = lines.first_mut() {
                first.spans[0].content = first.spans[0].content.replacen("  ", "", 1).into();
                first.spans.insert(0, Span::styled("› ", style));
            }
            lines
        }
        Entry::Assistant { text, depth, .. } => nest(*depth, markdown_lines(text)),
        Entry::Reasoning { text, .. } => {
            let style = Style::default()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC);
            let mut lines = plain_lines(text.trim(), style, "∴ ");
            if !expanded && lines.len() > 2 {
                lines.truncate(2);
                lines.push(Line::from(Span::styled("  … (Ctrl-O shows all)", style)));
            }
            lines
        }
        Entry::Tool(tool) => nest(tool.depth, tool_lines(tool, expanded)),
        Entry::Note(kind, text) => {
            let color = match kind {
                NoteKind::Info => Color::Cyan,
                NoteKind::Error => Color::Red,
            };
            plain_lines(text, Style::default().fg(color), "")
        }
    };
    let spaced = matches!(entry, Entry::User(_) | Entry::Assistant { .. });
    if spaced {
        lines.push(Line::default());
    }
    lines
}

impl ViewCache {
    /// The wrapped rows of entry `at`.
    fn rows(
        &mut self,
        at: usize,
        rev: u64,
        entry: &Entry,
        width: u16,
        expanded: bool,
    ) -> &[Line<'static>] {
        let fresh = self
            .entries
            .get(&at)
            .is_some_and(|c| c.rev == rev && c.width == width && c.expanded == expanded);
        if !fresh {
            let rows = entry_lines(entry, expanded)
                .into_iter()
                .flat_map(|line| wrap(line, usize::from(width)))
                .collect();
            self.entries.insert(
                at,
                Cached {
                    rev,
                    width,
                    expanded,
                    rows,
                },
            );
        }
        self.entries
            .get(&at)
            .map(|c| c.rows.as_slice())
            .unwrap_or(&[])
    }

    /// The rows of `transcript` that fill `height` rows, `scroll` rows up
    /// from its end (clamped), and the scroll actually used.
    ///
    /// Entries are wrapped from the end only until `scroll + height` rows
    /// are known, so a frame costs the rows on screen and the scroll above
    /// the bottom, not the length of the transcript. When the entries run
    /// out first, all of them were seen and the clamp is exact.
    pub fn visible(
        &mut self,
        transcript: &Transcript,
        width: u16,
        height: usize,
        scroll: usize,
        expanded: bool,
    ) -> (Vec<Line<'static>>, usize) {
        let entries = transcript.entries();
        let wanted = scroll.saturating_add(height);
        let mut seen = 0usize;
        let mut first = entries.len();
        while first > 0 && seen < wanted {
            first -= 1;
            let (rev, entry) = &entries[first];
            seen += self.rows(first, *rev, entry, width, expanded).len();
        }
        let scroll = if seen < wanted {
            scroll.min(seen.saturating_sub(height))
        } else {
            scroll
        };
        self.used = Some(scroll);
        let mut skipped = 0;
        let mut shown: Vec<Line<'static>> = Vec::with_capacity(height);
        for at in (first..entries.len()).rev() {
            let rows = self.entries.get(&at).map_or(&[][..], |c| c.rows.as_slice());
            let skip = (scroll - skipped).min(rows.len());
            skipped += skip;
            let end = rows.len() - skip;
            let take = (height - shown.len()).min(end);
            shown.extend(rows[end - take..end].iter().rev().cloned());
            if shown.len() >= height {
                break;
            }
        }
        shown.reverse();
        (shown, skipped)
    }

    /// The scroll the last frame used (clamped to the transcript), if a
    /// frame drew the transcript.
    pub fn used_scroll(&self) -> Option<usize> {
        self.used
    }
}

/// Draws the transcript into `area`.
pub fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    transcript: &Transcript,
    cache: &mut ViewCache,
    scroll: usize,
    expanded: bool,
) {
    let (lines, used) = cache.visible(
        transcript,
        area.width,
        usize::from(area.height),
        scroll,
        expanded,
    );
    frame.render_widget(Paragraph::new(lines), area);
    if used > 0 {
        let note = format!(" ↓ {used} more lines (PgDn) ");
        let width = u16::try_from(note.chars().count())
            .unwrap_or(area.width)
            .min(area.width);
        let at = Rect {
            x: area.x + area.width - width,
            y: area.y + area.height.saturating_sub(1),
            width,
            height: 1,
        };
        let style = Style::default().fg(Color::Black).bg(Color::Cyan);
        frame.render_widget(Paragraph::new(Span::styled(note, style)), at);
    }
}

#[cfg(test)]
mod tests {
    use ratatui::text::Line;

    use super::{ViewCache, entry_lines};
    use crate::tui::transcript::{Entry, NoteKind, ToolEntry, ToolStatus, Transcript};
    use crate::tui::wrap::wrap;

    /// A transcript of `rounds` rounds: a prompt, an answer in markdown
    /// with code (wrapped at narrow widths), a tool call and a note.
    fn transcript(rounds: usize) -> Transcript {
        let mut transcript = Transcript::new("s");
        for n in 0..rounds {
            transcript.user(&format!("prompt {n}"));
            transcript.push(Entry::Assistant {
                id: format!("a{n}"),
                text: format!(
                    "Answer {n} with **markdown**, a line long enough to wrap at forty columns.\n\n- one\n- two\n\n```rust\nfn f() -> u32 {{ {n} }}\n```\n"
                ),
                depth: 0,
            });
            transcript.push(Entry::Tool(ToolEntry {
                id: format!("t{n}"),
                tool: "bash".into(),
                summary: "cargo test".into(),
                status: ToolStatus::Done,
                output: "line one\nline two".into(),
                depth: 0,
            }));
            transcript.note(NoteKind::Info, &format!("note {n}"));
        }
        transcript
    }

    /// What `visible` gave before it stopped at the screen: every entry
    /// wrapped, the scroll clamped by the total, the window cut out.
    fn full(
        transcript: &Transcript,
        width: u16,
        height: usize,
        scroll: usize,
        expanded: bool,
    ) -> (Vec<Line<'static>>, usize) {
        let all: Vec<Line<'static>> = transcript
            .entries()
            .iter()
            .flat_map(|(_, entry)| entry_lines(entry, expanded))
            .flat_map(|line| wrap(line, usize::from(width)))
            .collect();
        let scroll = scroll.min(all.len().saturating_sub(height));
        let end = all.len() - scroll;
        (all[end.saturating_sub(height)..end].to_vec(), scroll)
    }

    #[test]
    fn the_rows_shown_are_those_of_the_whole_transcript_at_every_scroll() {
        for rounds in [0, 1, 3, 20] {
            let transcript = transcript(rounds);
            let total = full(&transcript, 40, usize::MAX / 2, 0, false).0.len();
            for (width, height) in [(40, 10), (40, 1), (200, 50), (80, 7)] {
                let mut cache = ViewCache::default();
                for scroll in [0, 1, 5, 9, 10, 33, total / 2, total, total + 1, 10_000] {
                    for expanded in [false, true] {
                        let got = cache.visible(&transcript, width, height, scroll, expanded);
                        let want = full(&transcript, width, height, scroll, expanded);
                        assert_eq!(
                            got, want,
                            "{rounds} rounds, {width}×{height}, scroll {scroll}, expanded {expanded}"
                        );
                        assert_eq!(cache.used_scroll(), Some(want.1));
                    }
                }
            }
        }
    }

    #[test]
    fn a_frame_at_the_bottom_of_a_long_transcript_wraps_only_the_entries_on_screen() {
        let transcript = transcript(2_500);
        assert_eq!(transcript.entries().len(), 10_000);
        let mut cache = ViewCache::default();
        let (rows, used) = cache.visible(&transcript, 200, 50, 0, false);
        assert_eq!((rows.len(), used), (50, 0));
        // 50 rows are about 15 entries (a round draws 14 rows at 200 columns).
        assert!(cache.entries.len() <= 20, "{} cached", cache.entries.len());
        // 100 rows up, it wraps the 150 rows' entries, not the transcript.
        let (_, used) = cache.visible(&transcript, 200, 50, 100, false);
        assert_eq!(used, 100);
        assert!(cache.entries.len() <= 60, "{} cached", cache.entries.len());
    }
}
