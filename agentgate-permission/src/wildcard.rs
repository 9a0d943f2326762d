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
//! use agentgate_permission::wildcard::matches;
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

/// The part of `pattern` after its last `*` or `?`: every input that
/// matches `pattern` ends with it (after backslashes become slashes). Empty
/// when the pattern ends with a wildcard or with the optional `" *"`; the
/// whole pattern when it has no wildcard.
pub fn literal_suffix(pattern: &str) -> &str {
    if pattern.ends_with(" *") {
        return "";
    }
    match pattern.rfind(['*', '?']) {
        Some(at) => &pattern[at + 1..],
        None => pattern,
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
                    if let Some(ic) = char_at(input, i)
                        && fold(ic, ci) == fold(pc, ci)
                    {
                        i += ic.len_utf8();
                        p += pc.len_utf8();
                        continue;
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

/// A wildcard pattern analysed once for repeated matching (used by
/// [`crate::CompiledRuleset`]). Answers exactly like [`matches()`].
///
/// Patterns made of literals and `*` (the common case) are split at their
/// stars into literal segments, so matching is a prefix test, a suffix test
/// and a left-to-right substring search for the segments in between — each a
/// `memcmp`-speed operation — instead of a character-by-character walk.
/// Patterns with `?`, inputs with backslashes and case-insensitive platforms
/// take the general path.
///
/// ```
/// use agentgate_permission::wildcard::Pattern;
/// let pattern = Pattern::new("git push *");
/// assert!(pattern.matches("git push origin main"));
/// assert!(pattern.matches("git push"));
/// assert!(!pattern.matches("git pushy"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    fast: Option<Segments>,
    /// Whether the fast segments hold a `/`: only then can a backslash of
    /// the input (which counts as `/`) change the answer of the fast path.
    slash: bool,
}

/// A `*`-only pattern; with the optional trailing `" *"` the pattern is
/// the union of `base` and `tail`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segments {
    base: Shape,
    tail: Option<Shape>,
}

/// A `*`-only wildcard (backslashes already turned into slashes), in the
/// cheapest form that matches exactly the same inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// Only stars: matches everything.
    Any,
    /// No star: the input must equal it.
    Exact(Box<str>),
    /// `lit*`: the input must start with it.
    Prefix(Box<str>),
    /// `*lit`: the input must end with it.
    Suffix(Box<str>),
    /// Anything else, split at its stars.
    Split(Vec<String>),
}

impl Shape {
    fn new(pattern: &str) -> Self {
        let parts = split_stars(pattern);
        match parts.as_slice() {
            [only] => Shape::Exact(only.as_str().into()),
            _ if parts.iter().all(String::is_empty) => Shape::Any,
            [first, last] if last.is_empty() => Shape::Prefix(first.as_str().into()),
            [first, last] if first.is_empty() => Shape::Suffix(last.as_str().into()),
            _ => Shape::Split(parts),
        }
    }

    #[inline]
    fn matches(&self, input: &str) -> bool {
        match self {
            Shape::Any => true,
            Shape::Exact(literal) => input == &**literal,
            Shape::Prefix(literal) => input.starts_with(&**literal),
            Shape::Suffix(literal) => input.ends_with(&**literal),
            Shape::Split(parts) => segments_match(parts, input),
        }
    }
}

fn split_stars(pattern: &str) -> Vec<String> {
    pattern
        .replace('\\', "/")
        .split('*')
        .map(str::to_string)
        .collect()
}

/// The leftmost byte offset of `needle` (non-empty) in `haystack`. A plain
/// scan for the first byte then a comparison: for the short strings of
/// permission requests this beats `str::find`, whose searcher has a set-up
/// cost. Matches of a valid UTF-8 needle always start on a char boundary.
#[inline]
fn find(haystack: &str, needle: &str) -> Option<usize> {
    let (hay, pin) = (haystack.as_bytes(), needle.as_bytes());
    let (&first, _) = pin.split_first()?;
    let last_start = hay.len().checked_sub(pin.len())?;
    let mut from = 0;
    while from <= last_start {
        let at = from + hay[from..=last_start].iter().position(|&b| b == first)?;
        if hay[at..at + pin.len()] == *pin {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Whether `input` matches the literal segments `parts` joined by `*`.
fn segments_match(parts: &[String], input: &str) -> bool {
    let (first, last) = match parts {
        [] => return input.is_empty(),
        [only] => return input == only,
        [first, .., last] => (first.as_str(), last.as_str()),
    };
    if input.len() < first.len() + last.len() || !input.starts_with(first) || !input.ends_with(last)
    {
        return false;
    }
    let Some(mut rest) = input.get(first.len()..input.len() - last.len()) else {
        return false;
    };
    for middle in &parts[1..parts.len() - 1] {
        if middle.is_empty() {
            continue;
        }
        match find(rest, middle).and_then(|at| rest.get(at + middle.len()..)) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    true
}

impl Pattern {
    /// Analyses `pattern`.
    pub fn new(pattern: &str) -> Self {
        let fast = (!CASE_INSENSITIVE && !pattern.contains('?')).then(|| Segments {
            base: Shape::new(pattern.strip_suffix(" *").unwrap_or(pattern)),
            tail: pattern.ends_with(" *").then(|| Shape::new(pattern)),
        });
        let slash = fast.is_some() && pattern.contains(['/', '\\']);
        Pattern {
            source: pattern.to_string(),
            fast,
            slash,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `input` matches. Never allocates.
    pub fn matches(&self, input: &str) -> bool {
        self.matches_lazy(input, &mut None)
    }

    /// [`Pattern::matches`], finding out whether `input` contains a
    /// backslash only when the answer depends on it, and remembering that
    /// in `backslash` for the next pattern tested on the same input.
    #[inline]
    pub(crate) fn matches_lazy(&self, input: &str, backslash: &mut Option<bool>) -> bool {
        let Some(segments) = &self.fast else {
            return matches(input, &self.source);
        };
        // Without a `/` in the segments, a backslash of the input can only
        // be matched by a `*`, as in the general path.
        if self.slash && *backslash.get_or_insert_with(|| input.contains('\\')) {
            return matches(input, &self.source);
        }
        segments.base.matches(input)
            || segments
                .tail
                .as_ref()
                .is_some_and(|tail| tail.matches(input))
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
        // `\*` is not an escaped star: it is a slash followed by a wildcard.
        assert!(!matches("a*b", "a\\*b"));
        assert!(matches("a/*b", "a\\*b"));
        assert!(matches("a\\anything\\b", "a\\*b"));
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
    fn compiled_patterns_agree() {
        let patterns = [
            "*", "", "ls *", " *", "a*b*c", "*.env", "*.env.*", "src/*", "a\\*b", "git * *", "x?y",
            "**", "*a*a*",
        ];
        let inputs = [
            "", "ls", "ls -la", "lsof", " ", "abc", "axbyc", "ac", "x.env", "a.env.b", "src/",
            "src", "a/xb", "a\\xb", "git a", "git", "xzy", "aa", "a", "abab",
        ];
        for p in patterns {
            let compiled = Pattern::new(p);
            for i in inputs {
                assert_eq!(compiled.matches(i), matches(i, p), "{i:?} vs {p:?}");
            }
        }
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
