//! The model's markdown as styled lines for `agent tui`: headings, bold,
//! italic, inline code, lists, quotes, rules, links and fenced code
//! (highlighted by [`highlight`](super::highlight)). The text given is
//! already terminal-safe; this only chooses styles and line breaks
//! (wrapping to the panel's width is the view's).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::code_lines;

/// The lines being built.
#[derive(Default)]
struct Builder {
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open lists: the next number of an ordered one, `None` for bullets.
    lists: Vec<Option<u64>>,
    quote: usize,
    /// An open code block: its language and text.
    code: Option<(String, String)>,
}

impl Builder {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, change: impl FnOnce(Style) -> Style) {
        let next = change(self.style());
        self.styles.push(next);
    }

    /// The prefix of a line in the open quotes.
    fn quote_prefix(&self) -> Option<Span<'static>> {
        (self.quote > 0).then(|| {
            Span::styled(
                "│ ".repeat(self.quote),
                Style::default().fg(Color::DarkGray),
            )
        })
    }

    fn flush(&mut self) {
        if self.current.is_empty() {
            return;
        }
        let mut spans: Vec<Span<'static>> = self.quote_prefix().into_iter().collect();
        spans.append(&mut self.current);
        self.lines.push(Line::from(spans));
    }

    fn blank(&mut self) {
        self.flush();
        if self.lines.last().is_some_and(|l| l.width() > 0) {
            self.lines.push(Line::default());
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let style = self.style();
        for (n, piece) in text.split('\n').enumerate() {
            if n > 0 {
                self.flush();
            }
            if !piece.is_empty() {
                self.current
                    .push(Span::styled(piece.replace('\t', "    "), style));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.blank();
                let color = if level == HeadingLevel::H1 {
                    Color::Magenta
                } else {
                    Color::Cyan
                };
                self.push_style(|s| s.fg(color).add_modifier(Modifier::BOLD));
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { .. } => {
                self.push_style(|s| s.fg(Color::Blue).add_modifier(Modifier::UNDERLINED))
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let indent = "  ".repeat(self.lists.len().saturating_sub(1));
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{indent}{}. ", *n - 1)
                    }
                    _ => format!("{indent}• "),
                };
                self.current
                    .push(Span::styled(marker, Style::default().fg(Color::Yellow)));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.blank();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link => {
                self.styles.pop();
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.blank();
            }
            _ => {}
        }
    }

    /// Ends a code block: its lines highlighted, behind a bar.
    fn code_block(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let bar = Style::default().fg(Color::DarkGray);
        if !lang.is_empty() {
            self.lines
                .push(Line::from(Span::styled(format!("┌ {lang}"), bar)));
        }
        for line in code_lines(&code, &lang) {
            let mut spans = vec![Span::styled("│ ", bar)];
            spans.extend(line.spans);
            self.lines.push(Line::from(spans));
        }
        self.blank();
    }
}

/// `text` (terminal-safe markdown) as styled lines, not yet wrapped.
pub fn markdown_lines(text: &str) -> Vec<Line<'static>> {
    let mut builder = Builder::default();
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(tag) => builder.start(tag),
            Event::End(tag) => builder.end(tag),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => builder.text(&t),
            Event::Code(code) => {
                let style = builder.style().fg(Color::Yellow);
                builder.current.push(Span::styled(code.to_string(), style));
            }
            Event::SoftBreak => builder.text(" "),
            Event::HardBreak => builder.flush(),
            Event::Rule => {
                builder.flush();
                builder.lines.push(Line::from(Span::styled(
                    "─".repeat(40),
                    Style::default().fg(Color::DarkGray),
                )));
            }
            Event::TaskListMarker(done) => builder.text(if done { "[x] " } else { "[ ] " }),
            _ => {}
        }
    }
    builder.flush();
    while builder.lines.last().is_some_and(|l| l.width() == 0) {
        builder.lines.pop();
    }
    builder.lines
}

#[cfg(test)]
mod tests {
    use super::markdown_lines;
    use ratatui::style::Modifier;

    fn plain(lines: &[ratatui::text::Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_become_lines_with_their_marks() {
        let text = "# Plan\n\nFirst **bold** and `code`.\n\n- one\n- two\n\n1. a\n2. b\n\n> said\n\n```rust\nlet x = 1;\n```\nafter";
        let lines = markdown_lines(text);
        assert_eq!(
            plain(&lines),
            [
                "Plan",
                "",
                "First bold and code.",
                "",
                "• one",
                "• two",
                "",
                "1. a",
                "2. b",
                "",
                "│ said",
                "",
                "┌ rust",
                "│ let x = 1;",
                "",
                "after"
            ]
        );
        assert!(
            lines[0].spans[0]
                .style
                .add_modifier
                .contains(Modifier::BOLD)
        );
        let bold = lines[2].spans.iter().find(|s| s.content == "bold");
        assert!(bold.is_some_and(|s| s.style.add_modifier.contains(Modifier::BOLD)));
    }
}
