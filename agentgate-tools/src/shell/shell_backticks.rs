//! Backtick command substitutions (`` `…` ``) as bash delimits them,
//! without trusting tree-sitter: tree-sitter's parse of a line with
//! backticks can cut across them (a fuzz find: with two substitutions
//! holding `&&` on one line the scan's patterns spanned both, and a
//! command inside one was never seen).
//!
//! bash ends a backtick substitution at the first backtick that no
//! backslash escapes, whatever quotes lie between (parse.y,
//! `parse_matched_pair` with `open == close`: quotes are not special,
//! a backslash passes the next character). Outside backticks a backslash
//! also passes the next character, except inside single quotes, where a
//! backtick after it is quoted too. So every backtick bash reads as a
//! delimiter is one of the *unescaped* backticks of a plain left-to-right
//! pass (a backslash skips the next character, nothing else is special),
//! and each substitution bash runs is the text between two *consecutive*
//! unescaped backticks: from its opening backtick both passes skip the
//! same characters. The pass cannot tell which gaps are substitutions
//! (that needs quoting context: `'`'` is literal), so it answers for all
//! of them: the line is understood only when every gap is a simple
//! command the scanner can read alone.

/// What the plain pass found in a line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Backticks<'a> {
    /// No unescaped backtick.
    None,
    /// The text between each two consecutive unescaped backticks, every
    /// one a simple command (see [`is_simple`]).
    Simple(Vec<&'a str>),
    /// Why the line's substitutions are not understood.
    Opaque(&'static str),
}

/// Characters a gap may hold: words of letters, digits, the glob
/// characters `*` and `?` (which the scan of the gap expands as it does on
/// any line) and punctuation that bash gives no meaning (no quotes,
/// escapes, expansions, brackets, braces, operators, comments or
/// newlines).
fn is_simple_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '*' | '?' | ' ' | '\t' | '-' | '_' | '.' | '/' | ',' | ':' | '=' | '+' | '@' | '%'
        )
}

/// A gap bash would run as one simple command made of plain words.
pub(crate) fn is_simple(gap: &str) -> bool {
    gap.chars().all(is_simple_char)
}

/// The gaps between the unescaped backticks of `source`.
pub(crate) fn backticks(source: &str) -> Backticks<'_> {
    let mut marks = Vec::new();
    let mut chars = source.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '`' => marks.push(at),
            _ => {}
        }
    }
    if marks.is_empty() {
        return Backticks::None;
    }
    if marks.len() % 2 == 1 {
        return Backticks::Opaque("an unmatched backtick, which bash may read as a substitution");
    }
    let mut gaps = Vec::with_capacity(marks.len() - 1);
    for pair in marks.windows(2) {
        // Both marks are ASCII backticks found by `char_indices`.
        let gap = source.get(pair[0] + 1..pair[1]).unwrap_or_default();
        if !is_simple(gap) {
            return Backticks::Opaque(
                "a backtick substitution that is not one simple command of plain words",
            );
        }
        gaps.push(gap);
    }
    Backticks::Simple(gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_backticks_or_escaped_ones() {
        assert_eq!(backticks("rm -rf x"), Backticks::None);
        assert_eq!(backticks("echo \\`rm x\\`"), Backticks::None);
    }

    #[test]
    fn every_gap_is_judged() {
        assert_eq!(
            backticks("echo `date` `pwd`"),
            Backticks::Simple(vec!["date", " ", "pwd"])
        );
        // The fuzz find: the gaps hold `&&`.
        assert!(matches!(
            backticks("m6 `SECONDS=. && m6 x {a,b}` `SECONDS=. && m6 x x`"),
            Backticks::Opaque(_)
        ));
        // A quoted backtick shifts the pairing: the pass cannot tell, so
        // the gap between the literal and the real one is judged too.
        assert!(matches!(
            backticks("echo '`' `rm -rf x` '`'"),
            Backticks::Opaque(_)
        ));
        assert!(matches!(backticks("echo 'a`b'"), Backticks::Opaque(_)));
        // Nested backticks need escapes, which are not plain words.
        assert!(matches!(
            backticks("echo `echo \\`rm x\\``"),
            Backticks::Opaque(_)
        ));
        assert!(matches!(backticks("echo `a\nb`"), Backticks::Opaque(_)));
        assert!(matches!(backticks("echo `a;b`"), Backticks::Opaque(_)));
    }

    #[test]
    fn a_backslash_skips_any_character() {
        // `\\` is one escaped backslash: the backtick after it delimits.
        assert!(matches!(backticks("echo \\\\`rm x`"), Backticks::Simple(_)));
        assert_eq!(backticks("é`a`é"), Backticks::Simple(vec!["a"]));
    }
}
