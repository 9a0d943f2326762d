//! The turn engine (`src/engine/`) stays readable: no function in it is
//! longer than [`MAX_LINES`] lines, counted from the line of its `fn`
//! keyword to the line of its closing brace (signature and body), tests
//! included.
//!
//! The scan is a small lexer, not a parser: it blanks comments, strings
//! and character literals so their braces do not count, then finds each
//! `fn` item and matches its braces.

use std::path::{Path, PathBuf};

/// The longest a function in the engine may be.
const MAX_LINES: usize = 80;

/// The engine's sources, sorted.
fn engine_sources() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `text` with every comment, string and character literal replaced by
/// spaces (newlines kept, so line numbers stay right).
fn blank_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(keep_lines(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &skipped in &chars[i..j.min(chars.len())] {
                out.push(keep_lines(skipped));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(keep_lines(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'), else a lifetime.
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Every function of `code` (already blanked) as (name, first line, lines),
/// lines numbered from 1. A `fn` without a body (a trait's declaration)
/// is skipped.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
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

#[test]
fn no_engine_function_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut seen = 0;
    for file in engine_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, line, lines) in functions(&blank_literals(&text)) {
            seen += 1;
            if lines > MAX_LINES {
                let path = file.strip_prefix(root).unwrap_or(&file).display();
                long.push(format!("{path}:{line}: fn {name} is {lines} lines"));
            }
        }
    }
    assert!(
        seen > 100,
        "the scan found only {seen} functions in src/engine"
    );
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines in the engine (split them): {long:#?}"
    );
}

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
