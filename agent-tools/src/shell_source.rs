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
//!   as code, is opaque;
//! - **heredocs.** Where each heredoc body starts and which line ends it is
//!   computed with bash's rule on the original bytes (the first line equal
//!   to the quote-removed delimiter, leading tabs stripped for `<<-`) and
//!   compared with tree-sitter's; any difference (non-ASCII or control
//!   characters the parser masks, a delimiter it misreads, a quote left open
//!   on the heredoc's line) is opaque;
//! - **control characters** bash uses for its own quoting (`\0`, `\x01`,
//!   `\x7f`) are opaque.
//!
//! The parse sees `\r`, `\v`, `\f` and Unicode spaces as word characters,
//! as bash does, and other non-ASCII characters as `x` (see
//! [`for_tree_sitter`](crate::shell_word::for_tree_sitter)); the heredoc
//! check is what makes that masking safe, since it is the one place where
//! two characters masking alike could change where a construct ends.

use tree_sitter::Node;

/// Bytes before a `#` at which bash starts a comment: a blank or a
/// metacharacter (the `#` then begins a word).
const COMMENT_STARTS: &[u8] = b" \t\n;&|()<>";

/// Node kinds whose text bash and tree-sitter both read literally (a `#` or
/// `\`-newline inside them is not a comment or a continuation).
const LITERAL_KINDS: &[&str] = &["raw_string", "comment", "heredoc_body", "ansi_c_string"];

/// Node kinds of double-quoted text (a continuation there is removed by
/// bash and by the word reader alike).
const STRING_KINDS: &[&str] = &["string", "translated_string"];

/// Control characters bash gives a meaning of its own (internal quoting).
const BASH_CONTROL: &[char] = &['\0', '\u{1}', '\u{7f}'];

/// Why tree-sitter's parse of `source` may not be bash's; empty when it is
/// faithful. `root` is the parse of `source` (masked for tree-sitter with
/// the same byte offsets).
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
    let bytes = source.as_bytes();
    for at in continuations(bytes) {
        if let Some(reason) = continuation(root, source, at) {
            add(reason);
        }
    }
    for reason in comments(root, source) {
        add(reason);
    }
    for reason in heredocs(root, source) {
        add(reason);
    }
    reasons
}

/// The positions of the `\` of every `\`-newline whose backslash is not
/// itself escaped (an odd run of backslashes before the newline).
fn continuations(bytes: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    for (newline, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'\n') {
        let run = bytes[..newline]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        if run % 2 == 1 {
            found.push(newline - 1);
        }
    }
    found
}

/// Node kinds that hold code again inside text (`"$(…)"`): a search for
/// the text around a byte stops at them.
const CODE_KINDS: &[&str] = &[
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "expansion",
];

/// The innermost ancestor of `node` (itself included) of one of `kinds`,
/// unless code ([`CODE_KINDS`]) encloses `node` first.
fn enclosing<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut current = Some(node);
    while let Some(here) = current {
        if kinds.contains(&here.kind()) {
            return Some(here);
        }
        if CODE_KINDS.contains(&here.kind()) {
            return None;
        }
        current = here.parent();
    }
    None
}

/// Whether a heredoc's delimiter is quoted (its body is then literal).
fn quoted_heredoc(redirect: Node<'_>, source: &str) -> bool {
    let mut cursor = redirect.walk();
    redirect
        .children(&mut cursor)
        .filter(|child| child.kind() == "heredoc_start")
        .any(|start| text(start, source).contains(['\'', '"', '\\']))
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// Why the continuation at `at` may be read differently, if it may.
fn continuation(root: Node<'_>, source: &str, at: usize) -> Option<String> {
    let bytes = source.as_bytes();
    let node = root.descendant_for_byte_range(at, at + 2)?;
    let mut kinds: Vec<&str> = LITERAL_KINDS.to_vec();
    kinds.extend_from_slice(STRING_KINDS);
    match enclosing(node, &kinds).map(|n| (n.kind(), n)) {
        Some(("raw_string" | "comment", _)) => None,
        Some(("string" | "translated_string", _)) => None,
        Some(("heredoc_body", body)) => {
            let quoted = body
                .parent()
                .is_some_and(|redirect| quoted_heredoc(redirect, source));
            (!quoted).then(|| {
                "a line continuation in the body of a heredoc with an unquoted delimiter"
                    .to_string()
            })
        }
        Some(_) => Some("a line continuation inside a `$'…'` string".to_string()),
        None => {
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

/// Comments tree-sitter and bash may not agree on.
fn comments(root: Node<'_>, source: &str) -> Vec<String> {
    let bytes = source.as_bytes();
    let starts_comment = |at: usize| at == 0 || COMMENT_STARTS.contains(&bytes[at - 1]);
    let mut reasons = Vec::new();
    // Every comment tree-sitter sees starts where bash starts one.
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "comment" {
            if !starts_comment(node.start_byte()) {
                reasons.push(format!(
                    "a `#` that tree-sitter reads as a comment and bash as part of a word (`{}`)",
                    excerpt(source, node.start_byte(), node.start_byte() + 24)
                ));
            }
            continue;
        }
        stack.extend(node.children(&mut cursor));
    }
    // Every `#` bash reads as a comment is one to tree-sitter (or inside
    // text both read literally).
    for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'#') {
        if !starts_comment(at) {
            continue;
        }
        let Some(node) = root.descendant_for_byte_range(at, at + 1) else {
            continue;
        };
        let mut kinds: Vec<&str> = LITERAL_KINDS.to_vec();
        kinds.extend_from_slice(STRING_KINDS);
        if enclosing(node, &kinds).is_none() {
            reasons.push(format!(
                "a `#` that bash reads as a comment and tree-sitter as code (`{}`)",
                excerpt(source, at, at + 24)
            ));
        }
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

fn heredoc_nodes(root: Node<'_>, source: &str) -> Vec<Heredoc> {
    let mut found = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "heredoc_redirect" {
            let mut inner = node.walk();
            let mut heredoc = Heredoc {
                strip_tabs: false,
                delimiter: String::new(),
                start_end: node.end_byte(),
                body_start: None,
                end: None,
            };
            for child in node.children(&mut inner) {
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
            found.push(heredoc);
        }
        // Children in reverse so the stack pops them in document order.
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    found.sort_by_key(|heredoc| heredoc.start_end);
    found
}

/// The delimiter bash compares body lines with: the word after quote
/// removal (no expansion). `None` when the word holds an expansion, which
/// this check does not model.
fn delimiter_text(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                for inner in chars.by_ref() {
                    if inner == '\'' {
                        break;
                    }
                    out.push(inner);
                }
            }
            '"' => {
                while let Some(inner) = chars.next() {
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
                }
            }
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

/// Heredocs whose body tree-sitter may bound differently from bash.
fn heredocs(root: Node<'_>, source: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    // Where the previous heredoc's terminator line ended, and the line its
    // operator was on: a second heredoc on that line starts after it.
    let mut previous: Option<(usize, usize)> = None;
    for heredoc in heredoc_nodes(root, source) {
        let misread = || {
            format!(
                "a heredoc (`<<{}`) whose end the parser may misread",
                heredoc.delimiter.escape_debug()
            )
        };
        let Some(delimiter) = delimiter_text(&heredoc.delimiter) else {
            reasons.push(format!(
                "a heredoc delimiter with an expansion (`<<{}`)",
                heredoc.delimiter.escape_debug()
            ));
            continue;
        };
        let line_end = source[heredoc.start_end..]
            .find('\n')
            .map_or(source.len(), |i| heredoc.start_end + i);
        let line_start = source[..heredoc.start_end].rfind('\n').map_or(0, |i| i + 1);
        if !line_is_closed(&source[heredoc.start_end..line_end]) {
            reasons.push(misread());
            continue;
        }
        let expected_start = match previous {
            Some((after, line)) if line == line_start => after,
            _ => (line_end + 1).min(source.len()),
        };
        let Some(body_start) = heredoc.body_start else {
            // No body and no end: bash reads to the end of the input.
            if heredoc.end.is_none() && source[expected_start.min(source.len())..].is_empty() {
                continue;
            }
            reasons.push(misread());
            continue;
        };
        // tree-sitter starts a `<<-` body after the first line's tabs.
        let tabs = if heredoc.strip_tabs {
            source[expected_start..].len() - source[expected_start..].trim_start_matches('\t').len()
        } else {
            0
        };
        if body_start != expected_start && body_start != expected_start + tabs {
            reasons.push(misread());
            continue;
        }
        // bash's terminator: the first line equal to the delimiter.
        let mut at = expected_start;
        let mut terminator = None;
        while at < source.len() {
            let end = source[at..].find('\n').map_or(source.len(), |i| at + i);
            let line = &source[at..end];
            let candidate = if heredoc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if candidate == delimiter {
                terminator = Some((end - candidate.len(), end));
                break;
            }
            at = end + 1;
        }
        if terminator != heredoc.end {
            reasons.push(misread());
            continue;
        }
        // In an unquoted body bash joins continued lines before it looks
        // for the delimiter (also inside `${…}` spanning lines).
        let body_end = terminator.map_or(source.len(), |(start, _)| start);
        let quoted = heredoc.delimiter.contains(['\'', '"', '\\']);
        if !quoted && !continuations(&source.as_bytes()[body_start..body_end]).is_empty() {
            reasons.push(
                "a line continuation in the body of a heredoc with an unquoted delimiter"
                    .to_string(),
            );
        }
        let after = terminator.map_or(source.len(), |(_, end)| (end + 1).min(source.len()));
        previous = Some((after, line_start));
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell_word::for_tree_sitter;

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
            ("echo \u{1}x", "control character"),
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
    }
}
