//! Properties of the edit replacer cascade on arbitrary text: it never
//! panics (multi-byte characters, `\r`, blank lines), an exact unique
//! occurrence is replaced exactly, and a successful replacement always
//! contains the new text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentgate_tools::{EditError, replace};
use proptest::prelude::*;

/// Text from a small alphabet with the characters the fuzzy replacers care
/// about: spaces, tabs, newlines, `\r`, backslashes, `$` and multi-byte ones.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("b"),
            Just(" "),
            Just("\t"),
            Just("\n"),
            Just("\r\n"),
            Just("\\n"),
            Just("$&"),
            Just("é"),
            Just("😀"),
            Just("  x  "),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn never_panics(content in text(), old in text(), new in text(), all in any::<bool>()) {
        let _ = replace(&content, &old, &new, all);
    }

    #[test]
    fn unique_exact_occurrence_is_replaced(
        before in text(), old in text(), after in text(), new in text()
    ) {
        let content = format!("{before}{old}{after}");
        prop_assume!(!old.is_empty() && old != new);
        // Unique as opencode tests it (indexOf == lastIndexOf), which also
        // rules out overlapping occurrences that `str::matches` would not count.
        prop_assume!(content.find(old.as_str()) == content.rfind(old.as_str()));
        let got = replace(&content, &old, &new, false).unwrap();
        prop_assert_eq!(got, format!("{before}{new}{after}"));
    }

    #[test]
    fn success_contains_the_new_text(
        content in text(),
        old in text(),
        // No `$`: replacement patterns (`$&`) may legitimately rewrite it.
        new in text().prop_map(|t| t.replace('$', "")),
    ) {
        match replace(&content, &old, &new, false) {
            Ok(result) => prop_assert!(result.contains(&new)),
            Err(EditError::NotFound | EditError::MultipleMatches
                | EditError::DisproportionateSpan | EditError::Identical
                | EditError::EmptyOldString) => {}
            Err(other) => prop_assert!(false, "unexpected error: {other:?}"),
        }
    }
}
