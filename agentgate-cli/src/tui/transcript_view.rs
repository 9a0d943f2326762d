//! Drawing the transcript: each entry as styled lines (markdown for the
//! model's text, a header and, expanded, the output of a tool call, a
//! sub-agent's entries indented behind a bar), wrapped to the panel's
//! width. An entry's wrapped lines are cached by its revision and the
//! width, so a frame redraws only what changed and costs the rows on
//! screen, not the length of the transcript.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::markdown::{markdown_lines, sections};
use super::transcript::{Entry, NoteKind, ToolEntry, ToolStatus, Transcript};
use super::wrap::wrap;

/// How many lines of a tool's output show when expanded.
const OUTPUT_LINES: usize = 200;

/// The wrapped lines of each entry, by entry index; a model's answer by
/// section (see [`sections`]), so a long answer costs the sections on
/// screen, and a streaming one the sections that changed.
#[derive(Debug, Default)]
pub struct ViewCache {
    /// By (entry, section; 0 for entries drawn whole).
    rows: HashMap<(usize, usize), Cached>,
    /// The sections of each answer, by entry, with the entry's revision.
    sections: HashMap<usize, (u64, Vec<Range<usize>>)>,
    /// The scroll of the last frame, clamped.
    used: Option<usize>,
    /// The rows of the last frame's transcript panel.
    height: Option<usize>,
}

#[derive(Debug)]
struct Cached {
    /// The entry's revision, or a hash of a section's text and place.
    key: u64,
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

/// Section `text` of an answer at `depth` as lines: after a blank line
/// unless `first`, the entry's spacing after it when `last` (together,
/// the sections are [`entry_lines`] of the answer).
fn section_lines(text: &str, first: bool, last: bool, depth: u8) -> Vec<Line<'static>> {
    let mut lines = markdown_lines(text);
    if !first && !lines.is_empty() {
        lines.insert(0, Line::default());
    }
    let mut lines = nest(depth, lines);
    if last {
        lines.push(Line::default());
    }
    lines
}

impl ViewCache {
    /// How many units entry `at` is drawn in: an answer's sections, else 1.
    fn units(&mut self, at: usize, rev: u64, entry: &Entry) -> usize {
        let Entry::Assistant { text, .. } = entry else {
            return 1;
        };
        if self.sections.get(&at).is_none_or(|(r, _)| *r != rev) {
            self.sections.insert(at, (rev, sections(text)));
        }
        self.sections.get(&at).map_or(1, |(_, s)| s.len())
    }

    /// The wrapped rows of unit `unit` of entry `at` (after [`Self::units`]).
    fn rows(
        &mut self,
        (at, unit): (usize, usize),
        rev: u64,
        entry: &Entry,
        width: u16,
        expanded: bool,
    ) -> &[Line<'static>] {
        let section = match entry {
            Entry::Assistant { text, depth, .. } => self
                .sections
                .get(&at)
                .and_then(|(_, s)| s.get(unit))
                .and_then(|range| {
                    Some((
                        text.get(range.clone())?,
                        unit == 0,
                        range.end == text.len(),
                        *depth,
                    ))
                }),
            _ => None,
        };
        let key = section.map_or(rev, |place| {
            let mut hasher = DefaultHasher::new();
            place.hash(&mut hasher);
            hasher.finish()
        });
        let fresh = self
            .rows
            .get(&(at, unit))
            .is_some_and(|c| c.key == key && c.width == width && c.expanded == expanded);
        if !fresh {
            let lines = match section {
                Some((text, first, last, depth)) => section_lines(text, first, last, depth),
                None => entry_lines(entry, expanded),
            };
            let rows = lines
                .into_iter()
                .flat_map(|line| wrap(line, usize::from(width)))
                .collect();
            let cached = Cached {
                key,
                width,
                expanded,
                rows,
            };
            self.rows.insert((at, unit), cached);
        }
        self.rows
            .get(&(at, unit))
            .map(|c| c.rows.as_slice())
            .unwrap_or(&[])
    }

    /// The rows of `transcript` that fill `height` rows, `scroll` rows up
    /// from its end (clamped), and the scroll actually used.
    ///
    /// Entries (an answer, section by section) are wrapped from the end
    /// only until `scroll + height` rows are known, so a frame costs the
    /// rows on screen and the scroll above the bottom, not the length of
    /// the transcript. When the entries run out first, all of them were
    /// seen and the clamp is exact.
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
        // The units wrapped, the last first.
        let mut walked: Vec<(usize, usize)> = Vec::new();
        'walk: for (at, (rev, entry)) in entries.iter().enumerate().rev() {
            for unit in (0..self.units(at, *rev, entry)).rev() {
                if seen >= wanted {
                    break 'walk;
                }
                seen += self.rows((at, unit), *rev, entry, width, expanded).len();
                walked.push((at, unit));
            }
        }
        let scroll = if seen < wanted {
            scroll.min(seen.saturating_sub(height))
        } else {
            scroll
        };
        self.used = Some(scroll);
        self.height = Some(height);
        let mut skipped = 0;
        let mut shown: Vec<Line<'static>> = Vec::with_capacity(height);
        for key in walked {
            let rows = self.rows.get(&key).map_or(&[][..], |c| c.rows.as_slice());
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

    /// The rows a page up or down moves: the last frame's transcript
    /// panel less two rows kept on screen for context (at least one).
    pub fn page_rows(&self) -> Option<usize> {
        self.height.map(|h| h.saturating_sub(2).max(1))
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
            if n % 5 == 4 {
                transcript.push(Entry::Assistant {
                    id: format!("long{n}"),
                    text: long_answer(6),
                    depth: u8::from(n % 10 == 9),
                });
            }
        }
        transcript
    }

    /// An answer in `sections` sections (headings after text, lists,
    /// code with a blank line and a `#` in it).
    fn long_answer(sections: usize) -> String {
        let mut text = String::from("Intro text.\n");
        for n in 0..sections {
            text.push_str(&format!(
                "\n## Part {n}\n\nA paragraph long enough to wrap at forty columns, part {n}.\n\n- a\n- b\n\n```sh\necho {n}\n\n# a comment\n```\n"
            ));
        }
        text
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
    fn a_frame_at_the_bottom_of_a_long_answer_wraps_only_its_sections_on_screen() {
        let mut transcript = Transcript::new("s");
        transcript.push(Entry::Assistant {
            id: "a".into(),
            text: long_answer(1_000),
            depth: 0,
        });
        let mut cache = ViewCache::default();
        assert_eq!(cache.page_rows(), None);
        let (rows, used) = cache.visible(&transcript, 200, 50, 0, false);
        assert_eq!((rows.len(), used), (50, 0));
        assert_eq!(rows, full(&transcript, 200, 50, 0, false).0);
        // PgUp moves the panel's rows less two kept for context.
        assert_eq!(cache.page_rows(), Some(48));
        // A section draws 12 rows: 50 rows are 5 sections at most.
        assert!(cache.rows.len() <= 5, "{} cached", cache.rows.len());
        let (rows, _) = cache.visible(&transcript, 200, 50, 5_000, false);
        assert_eq!(rows, full(&transcript, 200, 50, 5_000, false).0);
        assert!(
            cache.rows.len() <= 5_050 / 12 + 2,
            "{} cached",
            cache.rows.len()
        );
    }

    #[test]
    fn a_frame_at_the_bottom_of_a_long_transcript_wraps_only_the_entries_on_screen() {
        let transcript = transcript(2_000);
        assert_eq!(transcript.entries().len(), 8_400);
        let mut cache = ViewCache::default();
        let (rows, used) = cache.visible(&transcript, 200, 50, 0, false);
        assert_eq!((rows.len(), used), (50, 0));
        // 50 rows are about 15 entries (a round draws 14 rows at 200 columns).
        assert!(cache.rows.len() <= 20, "{} cached", cache.rows.len());
        // 100 rows up, it wraps the 150 rows' entries, not the transcript.
        let (_, used) = cache.visible(&transcript, 200, 50, 100, false);
        assert_eq!(used, 100);
        assert!(cache.rows.len() <= 60, "{} cached", cache.rows.len());
    }
}
