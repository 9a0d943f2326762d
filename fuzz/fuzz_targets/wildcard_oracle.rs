//! `agentgate_permission::wildcard::matches` against opencode's own algorithm
//! (§2): the pattern escaped into a regular expression, `*` → `.*`, `?` →
//! `.`, a trailing `" *"` made optional as `( .*)?`, anchored, dot-all,
//! backslashes turned into slashes on both sides; here with the `regex`
//! crate. Input: `input \0 pattern`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fn oracle(input: &str, pattern: &str) -> Option<bool> {
    let input = input.replace('\\', "/");
    let pattern = pattern.replace('\\', "/");
    let mut escaped = String::from("(?s)^");
    for c in pattern.chars() {
        match c {
            '*' => escaped.push_str(".*"),
            '?' => escaped.push('.'),
            c => escaped.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    if pattern.ends_with(" *") {
        escaped.truncate(escaped.len() - 3);
        escaped.push_str("( .*)?");
    }
    escaped.push('$');
    let re = regex::RegexBuilder::new(&escaped)
        .size_limit(1 << 22)
        .build()
        .ok()?;
    Some(re.is_match(&input))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some((input, pattern)) = text.split_once('\0') else {
        return;
    };
    if input.len() > 256 || pattern.len() > 64 {
        return;
    }
    // JavaScript's `.` (no `u` flag) matches one UTF-16 unit, so `?` and a
    // character outside the BMP disagree by design in opencode itself.
    if pattern.contains('?') && input.chars().any(|c| c.len_utf16() == 2) {
        return;
    }
    let Some(expected) = oracle(input, pattern) else {
        return;
    };
    let got = agentgate_permission::wildcard::matches(input, pattern);
    assert_eq!(
        got, expected,
        "wildcard::matches({input:?}, {pattern:?}) = {got}, opencode's regex says {expected}"
    );
});
