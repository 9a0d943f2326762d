//! A small JSONC reader: strips `//` and `/* */` comments and trailing
//! commas outside strings, so opencode's `opencode.jsonc` files parse with
//! `serde_json`.
//!
//! Comments and removed commas are replaced by spaces (newlines are kept),
//! so the line and column numbers in a later JSON error still point at the
//! right place in the original file.
//!
//! ```
//! let text = "{\n  // a comment\n  \"a\": \"//not a comment\", /* b */\n}";
//! let json = agentgate_core::config_text::strip_jsonc(text).unwrap();
//! let value: serde_json::Value = serde_json::from_str(&json).unwrap();
//! assert_eq!(value["a"], "//not a comment");
//! ```

use std::fmt;

/// A comment that is never closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnterminatedComment {
    /// 1-based line where the `/*` starts.
    pub line: usize,
    /// 1-based column (in bytes) where the `/*` starts.
    pub column: usize,
}

impl fmt::Display for UnterminatedComment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unterminated /* comment starting at line {} column {}: close it with */",
            self.line, self.column
        )
    }
}

impl std::error::Error for UnterminatedComment {}

/// Returns `text` with comments and trailing commas (a `,` followed only by
/// whitespace or comments before `]` or `}`) replaced by spaces. Text
/// inside strings is never touched. Invalid JSON stays invalid, so that the
/// JSON parser reports it at its original position.
pub fn strip_jsonc(text: &str) -> Result<String, UnterminatedComment> {
    let without_comments = strip_comments(text)?;
    Ok(strip_trailing_commas(&without_comments))
}

/// Replaces every byte of a comment except newlines by a space.
fn strip_comments(text: &str) -> Result<String, UnterminatedComment> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' {
                if let Some(&next) = bytes.get(i + 1) {
                    out.push(next);
                    i += 1;
                }
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                out.push(b);
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(if bytes[i] == b'\r' { b'\r' } else { b' ' });
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let start = i;
                out.extend_from_slice(b"  ");
                i += 2;
                loop {
                    match bytes.get(i) {
                        None => {
                            let (line, column) = position(text, start);
                            return Err(UnterminatedComment { line, column });
                        }
                        Some(b'*') if bytes.get(i + 1) == Some(&b'/') => {
                            out.extend_from_slice(b"  ");
                            i += 2;
                            break;
                        }
                        Some(&c) => {
                            out.push(if c == b'\n' || c == b'\r' { c } else { b' ' });
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII bytes inside comments were replaced by ASCII spaces and
    // every multi-byte sequence outside comments was copied whole.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Replaces each `,` that is followed (after whitespace) by `]` or `}` with
/// a space. Expects comments to be gone already.
fn strip_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = bytes[i + 1..]
                .iter()
                .find(|c| !c.is_ascii_whitespace())
                .copied();
            if matches!(next, Some(b']' | b'}')) {
                out[i] = b' ';
            }
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// 1-based line and column of byte offset `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> serde_json::Value {
        serde_json::from_str(&strip_jsonc(text).unwrap()).unwrap()
    }

    #[test]
    fn comments_and_trailing_commas() {
        let v = parse(
            "// head\n{\n \"a\": [1, 2, /* x */ ],\n \"b\": {\"c\": \"d\",\n // tail\n },\n}\n",
        );
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": {"c": "d"}}));
    }

    #[test]
    fn strings_are_untouched() {
        let v = parse(r#"{"a": "// x /* y */", "b": "q\"// z", "c": ",}", "d": "\\"}"#);
        assert_eq!(v["a"], "// x /* y */");
        assert_eq!(v["b"], "q\"// z");
        assert_eq!(v["c"], ",}");
        assert_eq!(v["d"], "\\");
    }

    #[test]
    fn positions_survive() {
        let text = "{\n /* é */ \"a\": x\n}";
        let err =
            serde_json::from_str::<serde_json::Value>(&strip_jsonc(text).unwrap()).unwrap_err();
        assert_eq!(err.line(), 2);
    }

    #[test]
    fn unterminated_comment() {
        let err = strip_jsonc("{\n  /* open").unwrap_err();
        assert_eq!((err.line, err.column), (2, 3));
    }

    #[test]
    fn non_ascii_in_comments_and_strings() {
        let v = parse("{\"é\": \"ü\" // ñ 😀\n}");
        assert_eq!(v["é"], "ü");
    }
}
