//! A small HTML-to-text and HTML-to-markdown converter for `webfetch`.
//!
//! It is deliberately simple: a forgiving tag scanner (no DOM), that drops
//! `script`/`style`/`head`-like elements and comments, decodes the common
//! entities, turns block elements into line breaks and, for markdown,
//! headings, links, emphasis, code, list items and preformatted blocks into
//! their markdown forms. Malformed input never fails; it degrades to text.

/// List nesting deeper than this is not indented further, so deeply nested
/// lists cannot make the markdown grow with the square of the input.
pub const MAX_LIST_INDENT: usize = 8;

/// Longest output (5 MiB); the rest is cut with a note.
pub const MAX_OUTPUT_BYTES: usize = 5 * 1024 * 1024;

/// Elements whose content is never shown.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "head", "template", "svg", "iframe", "object", "embed",
];

/// Elements that start and end on their own line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "blockquote",
    "ul",
    "ol",
    "li",
    "table",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "hr",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "form",
    "details",
    "summary",
];

/// The output flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Plain text.
    Text,
    /// Markdown.
    Markdown,
}

/// `html` as plain text.
///
/// ```
/// assert_eq!(agentgate_tools::html::to_text("<p>a &amp; b</p><script>x()</script><p>c</p>"), "a & b\n\nc");
/// ```
pub fn to_text(html: &str) -> String {
    convert(html, Flavor::Text)
}

/// `html` as markdown.
///
/// ```
/// let md = agentgate_tools::html::to_markdown("<h2>Title</h2><p>See <a href=\"/x\">this</a>.</p>");
/// assert_eq!(md, "## Title\n\nSee [this](/x).");
/// ```
pub fn to_markdown(html: &str) -> String {
    convert(html, Flavor::Markdown)
}

struct Tag<'a> {
    name: String,
    closing: bool,
    attrs: &'a str,
}

fn parse_tag(inner: &str) -> Tag<'_> {
    let (closing, rest) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
        .unwrap_or(rest.len());
    Tag {
        name: rest[..end].to_ascii_lowercase(),
        closing,
        attrs: &rest[end..],
    }
}

/// The value of attribute `name` in a tag's attribute text.
fn attribute(attrs: &str, name: &str) -> Option<String> {
    let lower = attrs.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = at == 0
            || lower[..at]
                .chars()
                .next_back()
                .is_some_and(char::is_whitespace);
        let rest = attrs[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value = rest[1..].trim_start();
        let value = match value.chars().next() {
            Some(quote @ ('"' | '\'')) => value[1..].split(quote).next().unwrap_or(""),
            _ => value
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or(""),
        };
        return Some(decode_entities(value));
    }
    None
}

/// Decodes named entities (the common ones) and numeric references.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..].find(';').map(|i| i + 1).filter(|&i| i <= 10);
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "copy" => Some('©'),
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

struct Writer {
    out: String,
    flavor: Flavor,
    pre: usize,
    pending_newlines: usize,
    list_depth: usize,
    links: Vec<Option<String>>,
}

impl Writer {
    fn block(&mut self, newlines: usize) {
        self.pending_newlines = self.pending_newlines.max(newlines);
    }

    fn flush(&mut self) {
        if self.pending_newlines > 0 && !self.out.is_empty() {
            while self.out.ends_with(' ') {
                self.out.pop();
            }
            let have = self.out.len() - self.out.trim_end_matches('\n').len();
            for _ in have..self.pending_newlines {
                self.out.push('\n');
            }
        }
        self.pending_newlines = 0;
    }

    fn markup(&mut self, text: &str) {
        if self.flavor == Flavor::Markdown {
            self.flush();
            self.out.push_str(text);
        }
    }

    fn text(&mut self, text: &str) {
        let text = decode_entities(text);
        if self.pre > 0 {
            self.flush();
            self.out.push_str(&text);
            return;
        }
        let mut words = text.split_whitespace().peekable();
        if words.peek().is_none() {
            if !text.is_empty() && !self.out.ends_with([' ', '\n']) && !self.out.is_empty() {
                self.out.push(' ');
            }
            return;
        }
        if text.starts_with(char::is_whitespace)
            && self.pending_newlines == 0
            && !self.out.ends_with([' ', '\n'])
            && !self.out.is_empty()
        {
            self.out.push(' ');
        }
        self.flush();
        let joined: Vec<&str> = words.collect();
        self.out.push_str(&joined.join(" "));
        if text.ends_with(char::is_whitespace) {
            self.out.push(' ');
        }
    }

    fn open(&mut self, tag: &Tag<'_>) {
        let markdown = self.flavor == Flavor::Markdown;
        match tag.name.as_str() {
            "br" => {
                self.flush();
                self.out.push('\n');
            }
            "hr" => {
                self.block(2);
                self.markup("---");
                self.block(2);
            }
            "pre" => {
                self.block(2);
                self.markup("```\n");
                self.pre += 1;
            }
            "li" => {
                self.block(1);
                if markdown {
                    let levels = self.list_depth.saturating_sub(1).min(MAX_LIST_INDENT);
                    let indent = "  ".repeat(levels);
                    self.markup(&format!("{indent}- "));
                }
            }
            "ul" | "ol" => {
                self.list_depth += 1;
                self.block(if self.list_depth == 1 { 2 } else { 1 });
            }
            name @ ("h1" | "h2" | "h3" | "h4" | "h5" | "h6") => {
                self.block(2);
                let level = name[1..].parse::<usize>().unwrap_or(1);
                self.markup(&format!("{} ", "#".repeat(level)));
            }
            "strong" | "b" => self.markup("**"),
            "em" | "i" => self.markup("*"),
            "code" if self.pre == 0 => self.markup("`"),
            "a" => {
                let href = attribute(tag.attrs, "href");
                if markdown && href.is_some() {
                    self.markup("[");
                }
                self.links.push(href);
            }
            "img" => {
                if let Some(alt) = attribute(tag.attrs, "alt").filter(|a| !a.is_empty()) {
                    match (markdown, attribute(tag.attrs, "src")) {
                        (true, Some(src)) => self.markup(&format!("![{alt}]({src})")),
                        _ => self.text(&alt),
                    }
                }
            }
            "td" | "th" => self.text(" "),
            name if BLOCKS.contains(&name) => self.block(2),
            _ => {}
        }
    }

    fn close(&mut self, tag: &Tag<'_>) {
        match tag.name.as_str() {
            "pre" => {
                self.pre = self.pre.saturating_sub(1);
                if self.flavor == Flavor::Markdown {
                    if !self.out.ends_with('\n') {
                        self.out.push('\n');
                    }
                    self.out.push_str("```");
                }
                self.block(2);
            }
            "ul" | "ol" => {
                self.list_depth = self.list_depth.saturating_sub(1);
                self.block(2);
            }
            "li" | "tr" | "dt" | "dd" => self.block(1),
            "strong" | "b" => self.markup("**"),
            "em" | "i" => self.markup("*"),
            "code" if self.pre == 0 => self.markup("`"),
            "a" => {
                if let Some(Some(href)) = self.links.pop()
                    && self.flavor == Flavor::Markdown
                {
                    self.markup(&format!("]({href})"));
                }
            }
            name if BLOCKS.contains(&name) => self.block(2),
            _ => {}
        }
    }
}

/// `html` as text of `flavor`, the content of [`SKIPPED`] elements left out.
fn convert(html: &str, flavor: Flavor) -> String {
    let mut writer = Writer {
        out: String::new(),
        flavor,
        pre: 0,
        pending_newlines: 0,
        list_depth: 0,
        links: Vec::new(),
    };
    let mut rest = html;
    let mut skipping: Option<String> = None;
    while !rest.is_empty() {
        if writer.out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let Some(at) = rest.find('<') else {
            if skipping.is_none() {
                writer.text(rest);
            }
            break;
        };
        if skipping.is_none() {
            writer.text(&rest[..at]);
        }
        rest = &rest[at..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            rest = match comment.find("-->") {
                Some(end) => &comment[end + 3..],
                None => "",
            };
            continue;
        }
        let is_tag = rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?');
        if !is_tag {
            if skipping.is_none() {
                writer.text("<");
            }
            rest = &rest[1..];
            continue;
        }
        let Some(end) = rest.find('>') else {
            break;
        };
        let inner = &rest[1..end];
        rest = &rest[end + 1..];
        if inner.starts_with('!') || inner.starts_with('?') {
            continue;
        }
        let tag = parse_tag(inner);
        if let Some(skipped) = &skipping {
            if tag.closing && &tag.name == skipped {
                skipping = None;
            }
            continue;
        }
        if !tag.closing && SKIPPED.contains(&tag.name.as_str()) {
            if !inner.trim_end().ends_with('/') {
                skipping = Some(tag.name);
            }
            continue;
        }
        if tag.closing {
            writer.close(&tag);
        } else {
            writer.open(&tag);
        }
    }
    finished_text(writer.out)
}

/// The converted text cut at [`MAX_OUTPUT_BYTES`] (saying so), trailing
/// spaces of each line and blank ends trimmed.
fn finished_text(mut out: String) -> String {
    let cut = out.len() > MAX_OUTPUT_BYTES;
    if cut {
        let mut end = MAX_OUTPUT_BYTES;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
    let mut text = lines.join("\n").trim().to_string();
    if cut {
        text.push_str(&format!("\n\n(Output cut at {MAX_OUTPUT_BYTES} bytes.)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_forms() {
        let html = "<html><head><title>t</title><style>p{}</style></head><body>\
            <h1>Big</h1><p>Some <b>bold</b> and <i>it</i> and <code>x</code>.</p>\
            <ul><li>one</li><li>two</li></ul><pre>let a = 1;\nlet b = 2;</pre>\
            <!-- hidden --><p>A&nbsp;&lt;tag&gt; &#x41;&#66;</p></body></html>";
        assert_eq!(
            to_markdown(html),
            "# Big\n\nSome **bold** and *it* and `x`.\n\n- one\n- two\n\n```\nlet a = 1;\nlet b = 2;\n```\n\nA <tag> AB"
        );
        assert_eq!(
            to_text(html),
            "Big\n\nSome bold and it and x.\n\none\ntwo\n\nlet a = 1;\nlet b = 2;\n\nA <tag> AB"
        );
    }

    #[test]
    fn nested_lists_stay_linear() {
        let depth = 2000;
        let html = "<ul><li>x".repeat(depth) + &"</li></ul>".repeat(depth);
        let md = to_markdown(&html);
        // At most MAX_LIST_INDENT levels of indentation per item.
        assert!(
            md.len() <= depth * (2 * MAX_LIST_INDENT + 4),
            "{}",
            md.len()
        );
        assert!(md.len() < 2 * html.len(), "{} vs {}", md.len(), html.len());
    }

    #[test]
    fn malformed_input_degrades() {
        assert_eq!(to_text("a < b and <p>c"), "a < b and\n\nc");
        assert_eq!(to_text("<p unterminated"), "");
        assert_eq!(to_text("&bogus; &#xZZ; &"), "&bogus; &#xZZ; &");
        assert_eq!(to_text("<script>never"), "");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(html in "[<>/a-z!&#;x0-9 \"'=\n-]{0,80}|\\PC{0,40}") {
            let _ = to_markdown(&html);
            let _ = to_text(&html);
        }
    }
}
