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
    for event in Parser::new_ext(text, OPTIONS) {
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

/// The markdown extensions the transcript draws.
const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH.union(Options::ENABLE_TASKLISTS);

/// Where `text` (markdown) can be drawn piece by piece: the byte ranges of
/// its sections, each after the first starting at a heading that the
/// parser itself finds at the top level (in no list, quote, code block or
/// HTML block) with a blank line above it, the first holding some block.
/// Each section drawn apart by [`markdown_lines`], the sections joined by
/// one blank line, give the lines of the whole. The whole is one section
/// when it defines a link reference (`[x]: …`, used across sections).
pub fn sections(text: &str) -> Vec<std::ops::Range<usize>> {
    let whole = std::iter::once(0..text.len()).collect();
    let blocks = Parser::new_ext(text, OPTIONS).into_offset_iter();
    if blocks.reference_definitions().iter().next().is_some() {
        return whole;
    }
    let mut starts = vec![0];
    let (mut depth, mut seen_block) = (0usize, false);
    for (event, range) in blocks {
        match event {
            Event::Start(tag) => {
                let heading = matches!(tag, Tag::Heading { .. });
                if depth == 0
                    && heading
                    && seen_block
                    && text.is_char_boundary(range.start)
                    && blank_line_above(text, range.start)
                {
                    starts.push(range.start);
                }
                seen_block |= depth == 0;
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => seen_block |= depth == 0,
        }
    }
    starts.push(text.len());
    starts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Whether the line before byte `at` (the start of a line) is blank.
fn blank_line_above(text: &str, at: usize) -> bool {
    let Some(before) = text.get(..at) else {
        return false;
    };
    let Some(before) = before.strip_suffix('\n') else {
        return false;
    };
    let line = before.rsplit('\n').next().unwrap_or(before);
    line.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::{markdown_lines, sections};

    #[test]
    fn sections_drawn_apart_and_joined_by_a_blank_line_are_the_whole() {
        let texts = [
            "# Title\n\nSome text.\n\n## Two\n\n- a\n- b\n\n### Three\n\n```rust\nfn f() {}\n\n# not a heading\n```\n\n# Four\n---\n\n# Five\n",
            "intro\n\n# A\n\n> quote\n\n# B\n\n1. one\n\n2. two\n\n#C not a heading\n\n# D\n\n    indented\n\n# E",
            "#\n\n# only after text\n\n~~~\n\n# in a fence\n~~~\n\n# out",
            "- item\n\n  # in the item\n\n# after\n\ntext\n",
            // An HTML block of this kind ends at a blank line (CommonMark).
            "text\n\n<div>\n\n# after html\n</div>\n\n# After\n",
        ];
        for text in texts {
            let parts = sections(text);
            assert!(parts.len() >= 2, "{text:?}: {parts:?}");
            let mut joined = Vec::new();
            for part in &parts {
                let lines = markdown_lines(&text[part.clone()]);
                if !joined.is_empty() && !lines.is_empty() {
                    joined.push(ratatui::text::Line::default());
                }
                joined.extend(lines);
            }
            assert_eq!(joined, markdown_lines(text), "{text:?}: {parts:?}");
        }
        // The fence opened in the item ends with it; the one at column 0
        // then runs to the end, over the heading.
        let fenced = "- item\n  ```\n```\n\n# Title\n";
        assert_eq!(sections(fenced).len(), 1);
        let refs = "see [x]\n\n# A\n\n[x]: https://example.com\n";
        assert_eq!(sections(refs).len(), 1);
    }
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

    /// Lines that open, close or continue blocks across a blank line:
    /// headings (ATX, setext, not-quite), fences of both kinds and
    /// lengths, lists, quotes, indented code, HTML, link references,
    /// tables, rules.
    const LINES: &[&str] = &[
        "# Title",
        "## Two",
        "###### Six",
        "####### seven",
        "#no space",
        "  # indented",
        "text",
        "more *text* and `code`",
        "Setext",
        "===",
        "---",
        "",
        "",
        "",
        "```",
        "```rust",
        "````",
        "~~~",
        "  ```",
        "- item",
        "  continued",
        "1. one",
        "> quote",
        "    indented code",
        "<div>",
        "</div>",
        "[x]: https://example.com",
        "see [x]",
        "| a | b |",
        "|---|---|",
        "***",
        "\\# escaped",
        "\u{3000}",
        "\u{a0}",
        "\t",
        " ",
        "Überschrift é",
        "> # quoted heading",
        "- # listed heading",
    ];

    proptest::proptest! {
        /// Drawn section by section and joined by one blank line, any
        /// text gives the lines of the whole.
        #[test]
        fn sections_always_draw_as_the_whole(
            picks in proptest::collection::vec(0..LINES.len(), 0..40),
        ) {
            let text: String = picks.iter().map(|&i| format!("{}\n", LINES[i])).collect();
            let mut joined = Vec::new();
            for part in sections(&text) {
                let lines = markdown_lines(&text[part]);
                if !joined.is_empty() && !lines.is_empty() {
                    joined.push(ratatui::text::Line::default());
                }
                joined.extend(lines);
            }
            proptest::prop_assert_eq!(joined, markdown_lines(&text), "{:?}", text);
        }
    }
}
