//! Whether tree-sitter's parse of a command line is the parse bash makes of
//! the same bytes.
//!
//! The scanner never rewrites the text it parses: a rewrite that disagrees
//! with bash (joining `\`-newline inside a comment bash ends at the newline,
//! or inside a quoted heredoc, which keeps it) hides the lines bash runs.
//! Instead, tree-sitter parses the bytes bash reads, and the places where the
//! two readers can differ are checked against bash's own lexical rules.
//! Where they may differ, [`unfaithful`] gives a reason that names the
//! construct, and the line is opaque (an ask), never a guess:
//!
//! - **line continuations.** bash removes `\`-newline before it splits
//!   words; tree-sitter skips it only between tokens. A continuation is
//!   accepted between words (a blank on either side), in a comment, in
//!   quotes, and in the body of a heredoc with a quoted delimiter (both keep
//!   it there); one that joins two words (`r\⏎m`, `$\⏎(…)`, `<\⏎<`), one in
//!   an unquoted heredoc body (where it decides whether the next line ends
//!   the heredoc) or in `$'…'` is opaque;
//! - **comments.** bash starts a comment at a `#` that begins a word (at the
//!   start, or after a blank or one of `| & ; ( ) < >`); a comment
//!   tree-sitter sees anywhere else (`{#…`), or such a `#` tree-sitter reads
//!   as code, is opaque; so is a comment tree-sitter reads past its line or
//!   inside a command with words after it (`wait #\⏎\m6`: bash ends the
//!   comment, and the command, at the newline);
//! - **heredocs.** Where each heredoc body starts and which line ends it is
//!   computed with bash's rule on the original bytes (the first line equal
//!   to the quote-removed delimiter, leading tabs stripped for `<<-`) and
//!   compared with tree-sitter's; any difference (non-ASCII or control
//!   characters the parser masks, a delimiter it misreads, a quote left open
//!   on the heredoc's line) is opaque;
//! - **control characters** bash uses for its own quoting (`\0`, `\x01`,
//!   `\x7f`) are opaque;
//! - **newlines.** bash ends a simple command at an unquoted newline; a
//!   command whose words tree-sitter reads across one is opaque;
//! - **descriptors.** Digits glued to `<` or `>` are the redirect's
//!   descriptor to bash (`2>&1`); where tree-sitter reads them as a word
//!   (after a `\`-newline) the line is opaque.
//!
//! The parse sees `\r`, `\v`, `\f` and Unicode spaces as word characters,
//! as bash does, and other non-ASCII characters as `x` (see
//! [`for_tree_sitter`](crate::shell::shell_word::for_tree_sitter)); the heredoc
//! check is what makes that masking safe, since it is the one place where
//! two characters masking alike could change where a construct ends.

use tree_sitter::Node;

/// Bytes before a `#` at which bash starts a comment: a blank or a
/// metacharacter (the `#` then begins a word).
const COMMENT_STARTS: &[u8] = b" \t\n;&|()<>";

/// The node kinds bash ends at an unquoted newline: a simple command, a
/// declaration (`export`, `declare`, `local`, `readonly`, `typeset`) and
/// `unset`.
const SIMPLE_COMMANDS: &[&str] = &["command", "declaration_command", "unset_command"];

/// Control characters bash gives a meaning of its own (internal quoting).
const BASH_CONTROL: &[char] = &['\0', '\u{1}', '\u{7f}'];

/// Why tree-sitter's parse of `source` may not be bash's; empty when it is
/// faithful. `root` is the parse of `source` (masked for tree-sitter with
/// the same byte offsets). Linear in the line: one walk of the tree, then
/// sweeps over the positions to check.
pub(crate) fn unfaithful(root: Node<'_>, source: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut add = |reason: String| {
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    };
    if let Some(c) = source.chars().find(|c| BASH_CONTROL.contains(c)) {
        add(format!(
            "a control character (U+{:04X}) that bash uses for its own quoting",
            u32::from(c)
        ));
    }
    let parse = Parse::of(root, source);
    let bytes = source.as_bytes();
    let continued = continuations(bytes);
    for (at, span) in continued.iter().zip(parse.innermost(&continued, 1)) {
        if let Some(reason) = continuation(source, *at, span) {
            add(reason);
        }
    }
    for reason in comments(&parse, source) {
        add(reason);
    }
    for reason in heredocs(&parse.heredocs, source) {
        add(reason);
    }
    if let Some(reason) = split_command(&parse.word_gaps, bytes) {
        add(reason);
    }
    if let Some(&at) = parse.descriptor_words.first() {
        add(format!(
            "a redirection the parser reads differently from bash (its descriptor, or the words after its target) (`{}`)",
            excerpt(source, at, at + 12)
        ));
    }
    reasons
}

/// A newline between the words of a simple command, or inside an unquoted
/// word, that is not a `\`-newline: bash ends the command there, so a
/// parse that reads on (tree-sitter joins `m5⏎echo >x` into one command
/// after a pipeline of three) is not bash's.
fn split_command(gaps: &[(usize, usize)], bytes: &[u8]) -> Option<String> {
    gaps.iter().find_map(|&(start, end)| {
        let gap = bytes.get(start..end)?;
        // The backslashes are counted at newlines only: linear in the line.
        gap.iter().enumerate().find_map(|(i, byte)| {
            if *byte != b'\n' {
                return None;
            }
            let backslashes = bytes[..start + i]
                .iter()
                .rev()
                .take_while(|b| **b == b'\\')
                .count();
            (backslashes % 2 == 0).then(|| {
                "a command the parser reads across a newline, where bash ends it".to_string()
            })
        })
    })
}

/// The positions of the `\` of every `\`-newline whose backslash is not
/// itself escaped (an odd run of backslashes before the newline), in
/// order.
fn continuations(bytes: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut run = 0;
    for (at, byte) in bytes.iter().enumerate() {
        match byte {
            b'\\' => run += 1,
            b'\n' if run % 2 == 1 => {
                found.push(at - 1);
                run = 0;
            }
            _ => run = 0,
        }
    }
    found
}

/// How bash and tree-sitter read the text of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    /// Both read it literally: `'…'`, a comment, a heredoc body with a
    /// quoted delimiter.
    Literal,
    /// Double-quoted text (a continuation is removed by bash and by the
    /// word reader alike).
    Quoted,
    /// The body of a heredoc with an unquoted delimiter.
    Body,
    /// `$'…'`.
    AnsiC,
    /// Code again inside text (`"$(…)"`, `${…}`).
    Code,
}

/// The class of a node kind, if it is one the checks look at.
fn text_class(kind: &str, quoted_heredoc: bool) -> Option<Text> {
    Some(match kind {
        "raw_string" | "comment" => Text::Literal,
        "heredoc_body" if quoted_heredoc => Text::Literal,
        "heredoc_body" => Text::Body,
        "string" | "translated_string" => Text::Quoted,
        "ansi_c_string" => Text::AnsiC,
        "command_substitution" | "process_substitution" | "arithmetic_expansion" | "expansion" => {
            Text::Code
        }
        _ => return None,
    })
}

/// What the checks need of a parse, gathered in one walk.
struct Parse {
    /// Nodes of a [`Text`] class in document order (parents first).
    spans: Vec<(usize, usize, Text)>,
    /// Where each comment starts.
    comments: Vec<usize>,
    /// Where each comment ends (same order).
    comment_ends: Vec<usize>,
    /// Comments tree-sitter reads inside a command, with words after them.
    words_after_comment: Vec<usize>,
    /// Words of digits glued to a redirection operator: descriptors to bash.
    descriptor_words: Vec<usize>,
    /// The heredocs, in document order.
    heredocs: Vec<Heredoc>,
    /// The bytes between the words of each simple command (and unquoted
    /// words themselves), where bash ends the command at a newline.
    word_gaps: Vec<(usize, usize)>,
}

impl Parse {
    fn of(root: Node<'_>, source: &str) -> Parse {
        let mut parse = Parse {
            spans: Vec::new(),
            comments: Vec::new(),
            comment_ends: Vec::new(),
            words_after_comment: Vec::new(),
            descriptor_words: Vec::new(),
            heredocs: Vec::new(),
            word_gaps: Vec::new(),
        };
        let mut cursor = root.walk();
        // Each node with whether its heredoc's delimiter is quoted.
        let mut stack = vec![(root, false)];
        while let Some((node, quoted)) = stack.pop() {
            let kind = node.kind();
            if let Some(class) = text_class(kind, quoted) {
                parse
                    .spans
                    .push((node.start_byte(), node.end_byte(), class));
            }
            if kind == "comment" {
                parse.comments.push(node.start_byte());
                parse.comment_ends.push(node.end_byte());
            }
            let quoted = if kind == "heredoc_redirect" {
                let heredoc = Heredoc::of(node, source);
                let quoted = heredoc.delimiter.contains(['\'', '"', '\\']);
                parse.heredocs.push(heredoc);
                quoted
            } else {
                quoted
            };
            // Children in reverse, so they pop in document order.
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            // Simple commands, declarations (`export a`) and `unset`: bash
            // ends each at an unquoted newline.
            let simple = SIMPLE_COMMANDS.contains(&kind);
            if simple
                && let Some(comment) = children[..children.len().saturating_sub(1)]
                    .iter()
                    .find(|child| child.kind() == "comment")
            {
                // Words after a comment: bash ended the command at the
                // comment's newline (`wait #\⏎\m6` runs `m6`).
                parse.words_after_comment.push(comment.start_byte());
            }
            if simple {
                parse.word_gaps.extend(
                    children
                        .windows(2)
                        .filter(|pair| pair[1].kind() != "heredoc_body")
                        .map(|pair| (pair[0].end_byte(), pair[1].start_byte())),
                );
            }
            if kind == "word" {
                parse.word_gaps.push((node.start_byte(), node.end_byte()));
            }
            // bash takes one word after a redirection operator; the words
            // after it are the command's arguments (`rm 2>/dev/null -rf /`
            // runs `rm -rf /`), which tree-sitter files as more destinations.
            if kind == "file_redirect"
                && node
                    .children_by_field_name("destination", &mut node.walk())
                    .nth(1)
                    .is_some()
            {
                parse.descriptor_words.push(node.start_byte());
            }
            if kind == "word" || kind == "number" {
                // bash reads digits glued to `<` or `>` as the redirect's
                // descriptor (`2>&1`), never as a word.
                let glued = source
                    .as_bytes()
                    .get(node.end_byte())
                    .is_some_and(|b| matches!(b, b'<' | b'>'));
                let text = source.get(node.byte_range()).unwrap_or_default();
                if glued && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
                    parse.descriptor_words.push(node.start_byte());
                }
            }
            stack.extend(children.into_iter().rev().map(|child| (child, quoted)));
        }
        parse
    }

    /// For each of `positions` (ascending), the class of the innermost
    /// span holding `width` bytes from it, `None` when no span does.
    fn innermost(&self, positions: &[usize], width: usize) -> Vec<Option<Text>> {
        let mut open: Vec<(usize, usize, Text)> = Vec::new();
        let mut next = 0;
        let mut found = Vec::with_capacity(positions.len());
        for &at in positions {
            while let Some(&span) = self.spans.get(next)
                && span.0 <= at
            {
                open.push(span);
                next += 1;
            }
            // A span that ends before `at + width` holds neither this
            // position nor any later one.
            while open.last().is_some_and(|span| span.1 < at + width) {
                open.pop();
            }
            found.push(open.last().map(|span| span.2));
        }
        found
    }
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// Why the continuation at `at` (inside a span of class `class`) may be
/// read differently, if it may.
fn continuation(source: &str, at: usize, class: Option<Text>) -> Option<String> {
    let bytes = source.as_bytes();
    match class {
        Some(Text::Literal | Text::Quoted) => None,
        Some(Text::Body) => Some(UNQUOTED_BODY.to_string()),
        Some(Text::AnsiC) => Some("a line continuation inside a `$'…'` string".to_string()),
        Some(Text::Code) | None => {
            let blank = |b: Option<&u8>| b.is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n'));
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let after = bytes.get(at + 2);
            (!(blank(before) || blank(after))).then(|| {
                format!(
                    "a line continuation that joins two words (`{}`)",
                    excerpt(source, at.saturating_sub(10), at + 12)
                )
            })
        }
    }
}

/// The reason for a continuation in an unquoted heredoc body.
const UNQUOTED_BODY: &str =
    "a line continuation in the body of a heredoc with an unquoted delimiter";

/// Comments tree-sitter and bash may not agree on.
fn comments(parse: &Parse, source: &str) -> Vec<String> {
    let bytes = source.as_bytes();
    // A blank escaped by a backslash (`\ #`) is part of a word, and so is
    // the `#` after it (a fuzz find: `m5 \ # $(m6)` runs `m6`).
    let escaped = |at: usize| {
        bytes[..at]
            .iter()
            .rev()
            .take_while(|byte| **byte == b'\\')
            .count()
            % 2
            == 1
    };
    let starts_comment =
        |at: usize| at == 0 || (COMMENT_STARTS.contains(&bytes[at - 1]) && !escaped(at - 1));
    let mut reasons = Vec::new();
    // Every comment tree-sitter sees starts where bash starts one.
    if let Some(&at) = parse.comments.iter().find(|at| !starts_comment(**at)) {
        reasons.push(format!(
            "a `#` that tree-sitter reads as a comment and bash as part of a word (`{}`)",
            excerpt(source, at, at + 24)
        ));
    }
    // Every comment ends at the end of its line, as bash ends it (a `\`
    // before the newline does not continue a comment).
    if let Some((&at, _)) = parse
        .comments
        .iter()
        .zip(&parse.comment_ends)
        .find(|(start, end)| {
            bytes
                .get(**start..**end)
                .is_some_and(|t| t.contains(&b'\n'))
        })
    {
        reasons.push(format!(
            "a comment that tree-sitter reads past the end of its line, where bash ends it (`{}`)",
            excerpt(source, at, at + 24)
        ));
    }
    if let Some(&at) = parse.words_after_comment.first() {
        reasons.push(format!(
            "a comment tree-sitter reads inside a command, with words after it on the next line (`{}`)",
            excerpt(source, at, at + 24)
        ));
    }
    // Every `#` bash reads as a comment is one to tree-sitter (or inside
    // text both read literally).
    let hashes: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(at, byte)| **byte == b'#' && starts_comment(*at))
        .map(|(at, _)| at)
        .collect();
    let classes = parse.innermost(&hashes, 1);
    if let Some((&at, _)) = hashes
        .iter()
        .zip(classes)
        .find(|(_, class)| matches!(class, None | Some(Text::Code)))
    {
        reasons.push(format!(
            "a `#` that bash reads as a comment and tree-sitter as code (`{}`)",
            excerpt(source, at, at + 24)
        ));
    }
    reasons
}

/// The text of `source` between about `from` and `to` (widened to
/// character boundaries), escaped for a reason.
fn excerpt(source: &str, from: usize, to: usize) -> String {
    let mut from = from.min(source.len());
    while !source.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = to.min(source.len());
    while !source.is_char_boundary(to) {
        to += 1;
    }
    source[from..to].escape_debug().to_string()
}

/// A heredoc as tree-sitter parsed it.
struct Heredoc {
    /// `<<-`: leading tabs are stripped from body lines.
    strip_tabs: bool,
    /// The delimiter word as written.
    delimiter: String,
    /// Where the delimiter word ends.
    start_end: usize,
    /// Where the body starts (the body or, when empty, the end line).
    body_start: Option<usize>,
    /// The line that ends it, if tree-sitter found one.
    end: Option<(usize, usize)>,
}

impl Heredoc {
    /// The heredoc of a `heredoc_redirect` node.
    fn of(node: Node<'_>, source: &str) -> Heredoc {
        let mut heredoc = Heredoc {
            strip_tabs: false,
            delimiter: String::new(),
            start_end: node.end_byte(),
            body_start: None,
            end: None,
        };
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "<<-" => heredoc.strip_tabs = true,
                "heredoc_start" => {
                    heredoc.delimiter = text(child, source).to_string();
                    heredoc.start_end = child.end_byte();
                }
                "heredoc_body" => heredoc.body_start = Some(child.start_byte()),
                "heredoc_end" => {
                    heredoc.body_start.get_or_insert(child.start_byte());
                    heredoc.end = Some((child.start_byte(), child.end_byte()));
                }
                _ => {}
            }
        }
        heredoc
    }

    /// Whether `line` ends this heredoc for bash.
    fn ends_at(&self, line: &str, delimiter: &str) -> bool {
        let line = if self.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        line == delimiter
    }
}

/// The delimiter bash compares body lines with: the word after quote
/// removal (no expansion). `None` when the word holds an expansion or a
/// quote it does not close (the parser then read only part of the word),
/// which this check does not model.
fn delimiter_text(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                // An open quote: the word is not one the parser read whole.
                match chars.next()? {
                    '\'' => break,
                    inner => out.push(inner),
                }
            },
            '"' => loop {
                let inner = chars.next()?;
                match inner {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some(next @ ('$' | '`' | '"' | '\\')) => out.push(next),
                        Some(next) => {
                            out.push('\\');
                            out.push(next);
                        }
                        None => out.push('\\'),
                    },
                    '$' | '`' => return None,
                    other => out.push(other),
                }
            },
            '\\' => out.push(chars.next()?),
            '$' | '`' => return None,
            other => out.push(other),
        }
    }
    Some(out)
}

/// Whether the rest of a heredoc's line (after its delimiter word) closes
/// every quote and parenthesis it opens, so bash's body starts at the next
/// line as tree-sitter's does.
fn line_is_closed(rest: &str) -> bool {
    let mut single = false;
    let mut double = false;
    let mut depth = 0i32;
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            _ if single => {}
            // An escape takes the next character; a trailing one continues
            // the line.
            '\\' if chars.next().is_none() => return false,
            '\\' => {}
            '"' => double = !double,
            '`' => return false,
            '(' if !double => depth += 1,
            ')' if !double => depth -= 1,
            '#' if !double => break,
            _ => {}
        }
    }
    !single && !double && depth <= 0
}

/// Heredocs whose body tree-sitter may bound differently from bash. Each
/// body is read once (up to tree-sitter's end, or to the end of the line
/// when it found none), and each line's tail once.
fn heredocs(heredocs: &[Heredoc], source: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    // A body tree-sitter did not end runs to the end of the input: more
    // than one such body is not a line anybody writes, and reading each to
    // the end would make the check quadratic.
    if heredocs
        .iter()
        .filter(|heredoc| heredoc.end.is_none())
        .count()
        > 1
    {
        reasons.push("more than one heredoc without an end line".to_string());
        return reasons;
    }
    let newlines: Vec<usize> = source
        .bytes()
        .enumerate()
        .filter(|(_, byte)| *byte == b'\n')
        .map(|(at, _)| at)
        .collect();
    // Where the previous heredoc's terminator line ended, and the line its
    // operator was on: a second heredoc on that line starts after it.
    let mut previous: Option<(usize, usize)> = None;
    // The last line whose tail was checked, and the answer.
    let mut checked_line: Option<(usize, bool)> = None;
    for heredoc in heredocs {
        let misread = || {
            format!(
                "a heredoc (`<<{}`) whose end the parser may misread",
                heredoc.delimiter.escape_debug()
            )
        };
        let Some(delimiter) = delimiter_text(&heredoc.delimiter) else {
            reasons.push(format!(
                "a heredoc delimiter with an expansion or an open quote (`<<{}`)",
                heredoc.delimiter.escape_debug()
            ));
            continue;
        };
        let start_end = heredoc.start_end.min(source.len());
        // The line the delimiter word is on, from the newline index.
        let next = newlines.partition_point(|&newline| newline < start_end);
        let line_end = newlines.get(next).copied().unwrap_or(source.len());
        let line_start = next
            .checked_sub(1)
            .and_then(|i| newlines.get(i))
            .map_or(0, |newline| newline + 1);
        let closed = match checked_line {
            Some((line, closed)) if line == line_start => closed,
            _ => {
                let closed = line_is_closed(&source[start_end..line_end]);
                checked_line = Some((line_start, closed));
                closed
            }
        };
        if !closed {
            reasons.push(misread());
            continue;
        }
        let expected_start = match previous {
            Some((after, line)) if line == line_start => after,
            _ => (line_end + 1).min(source.len()),
        };
        let Some(body_start) = heredoc.body_start else {
            // No body and no end: bash reads to the end of the input.
            if heredoc.end.is_some() || expected_start < source.len() {
                reasons.push(misread());
            }
            continue;
        };
        // tree-sitter starts a `<<-` body after the first line's tabs.
        let tabs = if heredoc.strip_tabs {
            let rest = &source[expected_start..];
            rest.len() - rest.trim_start_matches('\t').len()
        } else {
            0
        };
        if body_start != expected_start && body_start != expected_start + tabs {
            reasons.push(misread());
            continue;
        }
        // bash ends the body at the first line equal to the delimiter: it
        // must be tree-sitter's end line, and no line before it.
        let limit = heredoc.end.map_or(source.len(), |(_, end)| end);
        let mut at = expected_start;
        let mut terminator = None;
        while at < limit {
            let end = source[at..].find('\n').map_or(source.len(), |i| at + i);
            if heredoc.ends_at(&source[at..end], &delimiter) {
                terminator = Some((at, end));
                break;
            }
            at = end + 1;
        }
        let agrees = match (terminator, heredoc.end) {
            (None, None) => true,
            (Some((line, end)), Some((start, ts_end))) => {
                end == ts_end && line <= start && source[line..start].bytes().all(|b| b == b'\t')
            }
            _ => false,
        };
        if !agrees {
            reasons.push(misread());
            continue;
        }
        // In an unquoted body bash joins continued lines before it looks
        // for the delimiter (also inside `${…}` spanning lines).
        let body_end = terminator.map_or(source.len(), |(line, _)| line);
        let quoted = heredoc.delimiter.contains(['\'', '"', '\\']);
        if !quoted && !continuations(&source.as_bytes()[expected_start..body_end]).is_empty() {
            reasons.push(UNQUOTED_BODY.to_string());
        }
        let after = terminator.map_or(source.len(), |(_, end)| (end + 1).min(source.len()));
        previous = Some((after, line_start));
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::shell_word::for_tree_sitter;

    fn reasons(line: &str) -> Vec<String> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(for_tree_sitter(line), None).unwrap();
        unfaithful(tree.root_node(), line)
    }

    #[test]
    fn ordinary_lines_are_faithful() {
        for line in [
            "cargo build \\\n  --release",
            "ls -la |\\\n  grep x",
            "echo 'a\\\nb'",
            "echo \"a\\\nb\"",
            "git commit -m \"$(cat <<'EOF'\nmsg \\\nit's\nEOF\n)\"",
            "cat <<EOF > out.txt\nhello $USER\nEOF\necho done",
            "cat <<-EOF\n\tindented\n\tEOF\n",
            "cat <<A <<B\na\nA\nb\nB\nls",
            "echo x # comment\nls # another",
            "echo a#b; echo $#; echo ${#x}",
            "(# comment\nls)",
            "echo héllo wörld | grep ö",
            "cat <<\"END\"\n日本語\nEND\n",
            "a | b\nd >x | e",
            "cat <<EOF # why\nx\nEOF\nls",
            "git commit -m x # why\nls -la # list",
            "ls \\\n  -la # c\necho done",
            "for f in a b; do # loop\n  echo $f # each\ndone",
            "make 2>&1 | tee log; cmd 1>out 2>err; echo 3 > x; m 10>&-",
            "cat <<EOF | tr a b | wc\nx\nEOF\nls >y | m",
        ] {
            assert!(reasons(line).is_empty(), "{line:?}: {:?}", reasons(line));
        }
    }

    #[test]
    fn disagreements_are_named() {
        for (line, what) in [
            ("r\\\nm -f x", "joins two words"),
            ("echo $\\\n(rm x)", "joins two words"),
            ("cat <\\\n<EOF\nrm x\nEOF", "joins two words"),
            ("cat <<EOF\nfoo\\\nEOF\nrm x\nEOF", "unquoted delimiter"),
            ("echo $'a\\\nb'", "`$'…'`"),
            ("{#; rm -rf src", "bash as part of a word"),
            ("echo \"$(r\\\nm x)\"", "joins two words"),
            ("cat <<é\nä\necho '\né\nrm -rf src\n'", "may misread"),
            ("cat <<EOF 'x\nEOF\n' ; rm y\nEOF", "may misread"),
            ("cat <<$X\nrm\n$X", "expansion"),
            ("cat <<'E\nOF'\nrm -f x\nE\nOF\n", "open quote"),
            ("echo \u{1}x", "control character"),
            ("m7 | m6 | m5\nm4 >x | m3", "across a newline"),
            ("wait #\\\n\\m6", "inside a command"),
            ("m1 a #\\\n\\rm -rf x", "inside a command"),
            ("! m9 $1\\\n 2>&1; m2", "descriptor"),
            ("rm 2>/dev/null -rf /", "words after its target"),
            ("m1 >out a b", "words after its target"),
            (
                "m3 a | readarray a | readarray a | export a #\\\n! X=1 m1 >/dev/null",
                "inside a command",
            ),
        ] {
            let found = reasons(line);
            assert!(
                found.iter().any(|r| r.contains(what)),
                "{line:?}: {found:?}"
            );
        }
    }

    #[test]
    fn delimiters_are_quote_removed() {
        assert_eq!(delimiter_text("'EOF'").as_deref(), Some("EOF"));
        assert_eq!(delimiter_text("\\EOF").as_deref(), Some("EOF"));
        assert_eq!(delimiter_text("E\"O\"F").as_deref(), Some("EOF"));
        assert_eq!(delimiter_text("$X"), None);
        assert_eq!(delimiter_text("'E"), None);
        assert_eq!(delimiter_text("\"E"), None);
    }
}
