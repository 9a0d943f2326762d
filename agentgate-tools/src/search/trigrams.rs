//! Which files a pattern cannot match, from the byte trigrams they hold:
//! a [`TrigramFilter`] per file (a one-hash Bloom filter of the three
//! bytes at every even offset), and the trigrams a pattern's matches must
//! contain ([`Required`], from the literals every match starts and ends
//! with).
//!
//! The filter answers "maybe" for every trigram it was given and for a
//! few it was not, never "no" for one it was given. Only even offsets are
//! given, which halves the cost of building it: a literal of four bytes or
//! more that the file holds at an even offset has its trigrams at the
//! literal's even offsets in the filter, and at an odd offset those at its
//! odd offsets, so a file lacking one of each holds no copy of it. The
//! literals come from `regex-syntax`'s extractor, which the matcher's own
//! crate family uses: every match of the pattern begins with one of its
//! prefix literals and ends with one of its suffix literals. So a file the
//! filter rules out holds no match
//! (`the_filter_never_rules_out_a_file_with_a_match`).

use regex_syntax::ParserBuilder;
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};

/// Fewest and most bits of a filter (32 bytes; 8 KiB, one bit per byte of
/// the largest file grep reads whole).
const MIN_BITS: usize = 256;
const MAX_BITS: usize = 64 * 1024;

/// The multiplier of the trigram hash (Knuth's, 2^32 / φ).
const HASH: u32 = 0x9E37_79B1;

/// The trigram at the start of `bytes` (at least 3 long), its first byte
/// lowest.
fn trigram(bytes: &[u8]) -> u32 {
    u32::from(bytes[0]) | (u32::from(bytes[1]) << 8) | (u32::from(bytes[2]) << 16)
}

/// The trigrams a file holds, with false positives: one bit per trigram
/// hash, about one bit per byte of the file.
#[derive(Debug, Clone)]
pub(crate) struct TrigramFilter {
    words: Box<[u64]>,
    /// `32 - log2(bits)`: the hash's top bits pick the bit.
    shift: u32,
}

impl TrigramFilter {
    /// The filter of the trigrams at `bytes`' even offsets.
    pub(crate) fn of(bytes: &[u8]) -> TrigramFilter {
        let bits = bytes.len().next_power_of_two().clamp(MIN_BITS, MAX_BITS);
        let shift = 32 - bits.trailing_zeros();
        let mut words = vec![0u64; bits / 64].into_boxed_slice();
        let mut at = 0;
        while let Some(three) = bytes.get(at..at + 3) {
            let bit = (trigram(three).wrapping_mul(HASH) >> shift) as usize;
            if let Some(word) = words.get_mut(bit >> 6) {
                *word |= 1 << (bit & 63);
            }
            at += 2;
        }
        TrigramFilter { words, shift }
    }

    /// Whether the file may hold `trigram` (always, when it does).
    pub(crate) fn may_contain(&self, trigram: u32) -> bool {
        let bit = (trigram.wrapping_mul(HASH) >> self.shift) as usize;
        self.words
            .get(bit >> 6)
            .is_some_and(|word| word & (1 << (bit & 63)) != 0)
    }

    /// The memory the filter holds, in bytes.
    pub(crate) fn size(&self) -> usize {
        self.words.len() * 8
    }
}

/// The trigrams a pattern's matches hold: every clause must be met, and a
/// clause is met by a file that may hold one of its literals. No clause:
/// nothing is known, every file may match.
#[derive(Debug, Clone, Default)]
pub(crate) struct Required {
    clauses: Vec<Vec<LiteralTrigrams>>,
}

/// A literal's trigrams at its even offsets and at its odd ones (both
/// non-empty: the literal has four bytes or more).
#[derive(Debug, Clone)]
struct LiteralTrigrams {
    even: Vec<u32>,
    odd: Vec<u32>,
}

impl LiteralTrigrams {
    /// Whether a filter holding the trigrams `may_contain` says may have
    /// been given a copy of the literal, at an even or an odd offset.
    fn may_be_in(&self, may_contain: &impl Fn(u32) -> bool) -> bool {
        self.even.iter().all(|&t| may_contain(t)) || self.odd.iter().all(|&t| may_contain(t))
    }
}

/// Most literals in a clause: more only cost time per file.
const MAX_LITERALS: usize = 64;

impl Required {
    /// What `pattern` requires, parsed as the line matcher parses it
    /// (`^` and `$` at line boundaries). A pattern the parser refuses, or
    /// whose literals are unknown or shorter than a trigram, requires
    /// nothing.
    pub(crate) fn of(pattern: &str) -> Required {
        let Ok(hir) = ParserBuilder::new().multi_line(true).build().parse(pattern) else {
            return Required::default();
        };
        let clauses = [ExtractKind::Prefix, ExtractKind::Suffix]
            .into_iter()
            .filter_map(|kind| {
                let mut extractor = Extractor::new();
                extractor.kind(kind);
                clause(&extractor.extract(&hir))
            })
            .collect();
        Required { clauses }
    }

    /// Whether the pattern requires anything (else a filter cannot rule a
    /// file out).
    pub(crate) fn is_useful(&self) -> bool {
        !self.clauses.is_empty()
    }

    /// Whether a file with these trigrams (as `may_contain` says) may hold
    /// a match.
    pub(crate) fn admits(&self, may_contain: impl Fn(u32) -> bool) -> bool {
        self.clauses.iter().all(|literals| {
            literals
                .iter()
                .any(|literal| literal.may_be_in(&may_contain))
        })
    }
}

/// The clause of one literal sequence: `None` when it says nothing (an
/// infinite or empty sequence, a literal shorter than four bytes, too
/// many literals).
fn clause(seq: &Seq) -> Option<Vec<LiteralTrigrams>> {
    let literals = seq.literals()?;
    if literals.is_empty() || literals.len() > MAX_LITERALS {
        return None;
    }
    literals
        .iter()
        .map(|literal| {
            let bytes = literal.as_bytes();
            if bytes.len() < 4 {
                return None;
            }
            let at = |parity: usize| {
                let mut trigrams: Vec<u32> = bytes
                    .windows(3)
                    .skip(parity)
                    .step_by(2)
                    .map(trigram)
                    .collect();
                trigrams.sort_unstable();
                trigrams.dedup();
                trigrams
            };
            Some(LiteralTrigrams {
                even: at(0),
                odd: at(1),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use grep_matcher::Matcher;
    use proptest::prelude::*;

    use super::*;
    use crate::search::grep::line_matcher;

    /// The trigrams a filter of `text` is given: at even offsets.
    fn exact(text: &[u8]) -> HashSet<u32> {
        text.windows(3).step_by(2).map(trigram).collect()
    }

    #[test]
    fn the_literals_of_a_pattern() {
        let required = Required::of("NEEDL[E]_[0-9]*307");
        assert!(required.is_useful());
        assert!(required.admits(|t| exact(b"x NEEDLE_1307 y").contains(&t)));
        assert!(!required.admits(|t| exact(b"x NEEDLE_1308 y").contains(&t)));
        assert!(!required.admits(|t| exact(b"x NEEDLX_1307 y").contains(&t)));
        // Alternation: either literal will do.
        let either = Required::of("(alpha|beta)_id");
        assert!(either.admits(|t| exact(b"beta_id").contains(&t)));
        assert!(!either.admits(|t| exact(b"gamma_id").contains(&t)));
        // At an odd offset too.
        assert!(required.admits(|t| exact(b"NEEDLE_307").contains(&t)));
        assert!(required.admits(|t| exact(b"xNEEDLE_307").contains(&t)));
        // Nothing known: every file.
        for pattern in [r"\w+", "a.b", "x*", "(", "ab|cdef", "abc"] {
            assert!(!Required::of(pattern).is_useful(), "{pattern}");
        }
    }

    #[test]
    fn case_folding_keeps_every_case() {
        let required = Required::of("(?i)needle");
        assert!(required.admits(|t| exact(b"NeEdLe").contains(&t)));
        // The Kelvin sign folds to k.
        let kelvin = Required::of("(?i)kelvin");
        assert!(kelvin.admits(|t| exact("\u{212A}elvin".as_bytes()).contains(&t)));
    }

    #[test]
    fn the_filter_holds_every_trigram_of_its_file() {
        let text = b"fn main() { println!(\"hello\"); }\n".repeat(40);
        let filter = TrigramFilter::of(&text);
        for t in exact(&text) {
            assert!(filter.may_contain(t));
        }
        let absent = (0..5000u32)
            .map(|i| i.wrapping_mul(0x01_0203) & 0xFF_FFFF)
            .filter(|t| !exact(&text).contains(t) && filter.may_contain(*t))
            .count();
        assert!(absent < 2500, "a filter that admits everything: {absent}");
        assert!(TrigramFilter::of(b"").size() == MIN_BITS / 8);
        assert!(!TrigramFilter::of(b"ab").may_contain(trigram(b"abc")));
    }

    /// A piece of a pattern over the small alphabet the haystacks use.
    fn piece() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            "[abAB_1 ]".prop_map(|s| regex_syntax::escape(&s)),
            Just("[ab]".to_string()),
            Just("[^a]".to_string()),
            Just(".".to_string()),
            Just(r"\w".to_string()),
            Just(r"\d".to_string()),
            Just(r"\b".to_string()),
            Just("^".to_string()),
            Just("$".to_string()),
        ];
        atom.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("(?:{a}|{b})")),
                inner.clone().prop_map(|a| format!("(?:{a})*")),
                inner.clone().prop_map(|a| format!("(?:{a})+")),
                inner.clone().prop_map(|a| format!("(?:{a})?")),
                inner.clone().prop_map(|a| format!("(?:{a}){{2,3}}")),
                inner.prop_map(|a| format!("(?i:{a})")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Soundness: whenever the line matcher finds a match, the file's
        /// exact trigram set and its filter both admit it.
        #[test]
        fn the_filter_never_rules_out_a_file_with_a_match(
            pieces in prop::collection::vec(piece(), 1..4),
            hay in "[abAB_1 \n]{0,80}",
        ) {
            let pattern = pieces.concat();
            let Ok(matcher) = line_matcher(&pattern) else { return Ok(()) };
            let matched = matcher.is_match(hay.as_bytes()).unwrap_or(false);
            if matched {
                let required = Required::of(&pattern);
                let set = exact(hay.as_bytes());
                prop_assert!(required.admits(|t| set.contains(&t)), "{pattern:?} in {hay:?}");
                let filter = TrigramFilter::of(hay.as_bytes());
                prop_assert!(required.admits(|t| filter.may_contain(t)));
            }
        }

        /// The same, on haystacks built around a string the pattern
        /// matches (so every case is a match).
        #[test]
        fn a_generated_match_is_never_ruled_out(
            (pattern, matching) in prop::collection::vec(piece(), 1..4).prop_flat_map(|pieces| {
                let pattern = pieces.concat();
                let strings = proptest::string::string_regex(&pattern)
                    .map(|s| s.boxed())
                    .unwrap_or_else(|_| Just(String::new()).boxed());
                (Just(pattern), strings)
            }),
            before in "[abAB_1 \n]{0,20}",
            after in "[abAB_1 \n]{0,20}",
        ) {
            let hay = format!("{before}{matching}{after}");
            let Ok(matcher) = line_matcher(&pattern) else { return Ok(()) };
            if matcher.is_match(hay.as_bytes()).unwrap_or(false) {
                let set = exact(hay.as_bytes());
                prop_assert!(Required::of(&pattern).admits(|t| set.contains(&t)), "{pattern:?} in {hay:?}");
            }
        }
    }
}
