//! Function length, measured on sources: the function-length tests of
//! every crate of the workspace (`tests/function_length.rs` of this crate
//! walks them all) count each function from the line of its `fn` keyword
//! to the line of its closing brace (signature and body), tests included.
//!
//! The scan is a small lexer, not a parser: it blanks comments, strings
//! and character literals so their braces do not count, then finds each
//! `fn` item and matches its braces.

/// `text` with every comment, string and character literal replaced by
/// spaces (newlines kept, so line numbers stay right).
pub fn blank_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let end = LITERALS
            .iter()
            .find_map(|literal_end| literal_end(&chars, i));
        match end {
            Some(end) => {
                let end = end.min(chars.len());
                out.extend(
                    chars[i..end]
                        .iter()
                        .map(|&c| if c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// Where a literal that starts at `i` ends (exclusive), or `None` when
/// none of its kind starts there.
type LiteralEnd = fn(&[char], usize) -> Option<usize>;

/// The kinds of text whose braces do not count, tried in this order.
const LITERALS: &[LiteralEnd] = &[
    line_comment_end,
    block_comment_end,
    raw_string_end,
    string_end,
    char_literal_end,
];

/// A `//` comment runs to the end of its line.
fn line_comment_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != '/' || chars.get(i + 1) != Some(&'/') {
        return None;
    }
    let rest = chars[i..].iter().position(|&c| c == '\n');
    Some(rest.map_or(chars.len(), |p| i + p))
}

/// A `/* … */` comment, nested ones included.
fn block_comment_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != '/' || chars.get(i + 1) != Some(&'*') {
        return None;
    }
    let mut depth = 0usize;
    let mut j = i;
    while j < chars.len() {
        if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
            depth += 1;
            j += 2;
        } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
            depth = depth.saturating_sub(1);
            j += 2;
            if depth == 0 {
                return Some(j);
            }
        } else {
            j += 1;
        }
    }
    Some(chars.len())
}

/// A raw string: `r"…"` or `r#"…"#` (not the `r` ending an identifier).
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != 'r' || !matches!(chars.get(i + 1), Some('"' | '#')) || ident_before(chars, i) {
        return None;
    }
    let mut j = i + 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// A string `"…"`, its escapes skipped.
fn string_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != '"' {
        return None;
    }
    let mut j = i + 1;
    while j < chars.len() && chars[j] != '"' {
        j += if chars[j] == '\\' { 2 } else { 1 };
    }
    Some(j + 1)
}

/// A character literal (`'x'`, `'\n'`, `'\u{7f}'`); a lifetime is not one.
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    if chars[i] != '\'' {
        return None;
    }
    if chars.get(i + 1) == Some(&'\\') {
        let rest = chars.get(i + 2..)?;
        rest.iter().position(|&c| c == '\'').map(|p| i + 2 + p + 1)
    } else if chars.get(i + 2) == Some(&'\'') {
        Some(i + 3)
    } else {
        None
    }
}

/// Whether the character before `i` continues an identifier.
fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Every function of `code` (already blanked) as (name, first line, lines),
/// lines numbered from 1. A `fn` without a body (a trait's declaration)
/// is skipped.
pub fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let line_at = |index: usize| chars[..index].iter().filter(|&&c| c == '\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < chars.len() {
        let is_fn = chars[i] == 'f'
            && chars[i + 1] == 'n'
            && chars[i + 2].is_whitespace()
            && !ident_before(&chars, i);
        if !is_fn {
            i += 1;
            continue;
        }
        let name: String = chars[i + 2..]
            .iter()
            .skip_while(|c| c.is_whitespace())
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        // The body opens at the first `{` outside parentheses and brackets
        // before any `;` there (a declaration ends at its `;`; an array
        // type `[u8; 4]` does not).
        let mut j = i + 2;
        let mut nesting = 0usize;
        while j < chars.len() {
            match chars[j] {
                '(' | '[' => nesting += 1,
                ')' | ']' => nesting = nesting.saturating_sub(1),
                '{' | ';' if nesting == 0 => break,
                _ => {}
            }
            j += 1;
        }
        if j >= chars.len() || chars[j] == ';' || name.is_empty() {
            i += 2;
            continue;
        }
        let mut depth = 0usize;
        let mut end = j;
        for (k, &c) in chars.iter().enumerate().skip(j) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = line_at(i);
        out.push((name, first, line_at(end) - first + 1));
        // Nested functions are measured too: continue inside the body.
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_measures_functions() {
        let code = blank_literals(
            "fn short() {\n    let s = \"}}}\"; // }\n    let c = '}';\n}\n\
             trait T { fn declared(&self, x: [u8; 4]); }\n\
             pub(crate) async fn outer<'a>(x: &'a str) -> &'a str {\n    \
             fn inner() { /* { */ }\n    let r = r#\"{\"#;\n    x\n}\n",
        );
        let found = functions(&code);
        let summary: Vec<(&str, usize, usize)> = found
            .iter()
            .map(|(name, line, lines)| (name.as_str(), *line, *lines))
            .collect();
        assert_eq!(
            summary,
            [("short", 1, 4), ("outer", 6, 5), ("inner", 7, 1)],
            "{code}"
        );
    }
}
