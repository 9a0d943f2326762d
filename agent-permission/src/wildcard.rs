//! opencode's wildcard language (§2), matched by hand without building a
//! regular expression per call.
//!
//! - Backslashes count as `/` in both the input and the pattern, so a
//!   backslash never escapes anything.
//! - `*` matches any sequence of characters (including `/` and newlines),
//!   `?` exactly one character.
//! - A pattern ending in `" *"` also matches without that tail: `ls *`
//!   matches `ls`, `ls -la` but not `lsof`.
//! - Everything else is literal (`[ab]`, `a{2}`, `x|y` ...), and the whole
//!   input must match (anchored at both ends).
//! - Matching is case-sensitive, except on Windows.
//!
//! **Deliberate difference:** `?` matches one Unicode scalar value (`char`),
//! while opencode matches one UTF-16 code unit, so there an emoji needs `??`.
//!
//! ```
//! use agent_permission::wildcard::matches;
//! assert!(matches("ls", "ls *"));
//! assert!(matches("src/a/b.rs", "src/*"));
//! assert!(!matches("lsof", "ls *"));
//! assert!(matches("echo hi\nrm -rf /", "echo *"));
//! ```

/// Whether matching ignores letter case on this platform (Windows only).
pub const CASE_INSENSITIVE: bool = cfg!(windows);

/// Whether `input` matches the wildcard `pattern` (see the module docs).
///
/// Never allocates; runs in `O(input × pattern)` in the worst case and
/// linear time for the usual patterns with one or two `*`.
pub fn matches(input: &str, pattern: &str) -> bool {
    matches_with(input, pattern, CASE_INSENSITIVE)
}

/// [`matches()`] with explicit case handling, for callers (and tests) that
/// need the other platform's behaviour.
pub fn matches_with(input: &str, pattern: &str, case_insensitive: bool) -> bool {
    if let Some(base) = pattern.strip_suffix(" *") {
        // `( .*)?`: the base alone, or the base followed by a space and anything.
        glob(input, base, case_insensitive) || glob(input, pattern, case_insensitive)
    } else {
        glob(input, pattern, case_insensitive)
    }
}

/// The part of `pattern` before its first `*` or `?`, with the optional
/// trailing `" *"` removed first. Every input that matches `pattern` starts
/// with this prefix (after backslashes become slashes).
pub fn literal_prefix(pattern: &str) -> &str {
    let base = pattern.strip_suffix(" *").unwrap_or(pattern);
    match base.find(['*', '?']) {
        Some(end) => &base[..end],
        None => base,
    }
}

/// Whether `pattern` contains no wildcard, i.e. matches exactly one string.
pub fn is_literal(pattern: &str) -> bool {
    !pattern.contains(['*', '?'])
}

/// Normalises one character for comparison: backslash becomes slash, and
/// letters are lower-cased when matching is case-insensitive.
#[inline]
pub(crate) fn fold(c: char, case_insensitive: bool) -> char {
    if c == '\\' {
        '/'
    } else if case_insensitive {
        let mut lower = c.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(l), None) => l,
            _ => c,
        }
    } else {
        c
    }
}

#[inline]
fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|rest| rest.chars().next())
}

/// Anchored glob match with `*` and `?`, by the classic two-pointer
/// backtracking algorithm: on a mismatch, retry from the most recent `*`
/// with one more input character consumed by it.
fn glob(input: &str, pattern: &str, ci: bool) -> bool {
    let (mut i, mut p) = (0usize, 0usize);
    // (pattern index just after the last `*`, input index that star resumes at)
    let mut star: Option<(usize, usize)> = None;
    loop {
        if let Some(pc) = char_at(pattern, p) {
            match pc {
                '*' => {
                    p += 1;
                    star = Some((p, i));
                    continue;
                }
                '?' => {
                    if let Some(ic) = char_at(input, i) {
                        i += ic.len_utf8();
                        p += 1;
                        continue;
                    }
                }
                _ => {
                    if let Some(ic) = char_at(input, i) {
                        if fold(ic, ci) == fold(pc, ci) {
                            i += ic.len_utf8();
                            p += pc.len_utf8();
                            continue;
                        }
                    }
                }
            }
        } else if i == input.len() {
            return true;
        }
        // Mismatch: let the last star swallow one more character.
        match star {
            Some((sp, si)) => match char_at(input, si) {
                Some(c) => {
                    let next = si + c.len_utf8();
                    star = Some((sp, next));
                    i = next;
                    p = sp;
                }
                None => return false,
            },
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_space_star_is_optional() {
        assert!(matches("ls", "ls *"));
        assert!(matches("ls ", "ls *"));
        assert!(matches("ls -la", "ls *"));
        assert!(!matches("lstmeval", "ls *"));
        assert!(!matches("ls\nrm", "ls *"));
        assert!(matches("git a", "git * *"));
        assert!(!matches("git", "git * *"));
        assert!(matches("", " *"));
        assert!(matches(" x", " *"));
        assert!(!matches("x", " *"));
    }

    #[test]
    fn backslashes_are_slashes_and_never_escape() {
        assert!(matches("a/xb", "a\\*b"));
        assert!(matches("C:\\x\\y", "C:/x/*"));
        assert!(!matches("a*b", "a\\*b") || matches("a*b", "a/*b"));
    }

    #[test]
    fn regex_syntax_is_literal() {
        assert!(matches("[ab]", "[ab]"));
        assert!(!matches("a", "[ab]"));
        assert!(matches("a{2}", "a{2}"));
        assert!(matches("x|y", "x|y"));
        assert!(!matches("x", "x|y"));
        assert!(matches("a.b", "a.b"));
        assert!(!matches("axb", "a.b"));
    }

    #[test]
    fn anchored_and_crossing() {
        assert!(matches("src/a/b.ts", "src/*"));
        assert!(!matches("src", "src/*"));
        assert!(matches("src/", "src/*"));
        assert!(matches("config/.env", "*.env"));
        assert!(matches("a/b", "a?b"));
        assert!(!matches("xabc", "abc"));
        assert!(!matches("abcx", "abc"));
        assert!(matches("é", "?"));
        assert!(matches("😀", "?"));
    }

    #[test]
    fn case_handling() {
        assert!(!matches_with("LS", "ls", false));
        assert!(matches_with("LS", "ls", true));
    }

    #[test]
    fn prefix() {
        assert_eq!(literal_prefix("ls *"), "ls");
        assert_eq!(literal_prefix("git commit *"), "git commit");
        assert_eq!(literal_prefix("*.env"), "");
        assert_eq!(literal_prefix("src/?x"), "src/");
        assert_eq!(literal_prefix("plain"), "plain");
    }
}
