//! `CompiledRuleset::evaluate` against `evaluate` (opencode's last-match
//! algorithm) on rulesets and queries built from the input: same action,
//! and the same rule. Permissions and patterns are drawn from a small
//! alphabet rich in `*`, `?`, spaces, slashes and backslashes so that
//! matches are frequent, in up to three rulesets.
#![no_main]

use agentgate_permission::{Action, CompiledRuleset, Rule, Ruleset, evaluate};
use libfuzzer_sys::fuzz_target;

const ALPHABET: &[char] = &['a', 'b', '*', '?', ' ', '/', '\\', '.', '-', 'é', '\n'];

fn word(bytes: &mut std::slice::Iter<'_, u8>) -> String {
    let len = bytes.next().map_or(0, |b| (b % 8) as usize);
    (0..len)
        .filter_map(|_| bytes.next())
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()])
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter();
    let groups = bytes.next().map_or(1, |b| 1 + (b % 3) as usize);
    let mut rulesets = Vec::new();
    for _ in 0..groups {
        let count = bytes.next().map_or(0, |b| (b % 24) as usize);
        let mut rules = Vec::new();
        for _ in 0..count {
            let action = match bytes.next().map_or(0, |b| b % 3) {
                0 => Action::Allow,
                1 => Action::Deny,
                _ => Action::Ask,
            };
            rules.push(Rule::new(word(&mut bytes), word(&mut bytes), action));
        }
        rulesets.push(Ruleset::from(rules));
    }
    let refs: Vec<&Ruleset> = rulesets.iter().collect();
    let compiled = CompiledRuleset::new(&refs);
    while bytes.len() > 0 {
        let (permission, pattern) = (word(&mut bytes), word(&mut bytes));
        let plain = evaluate(&permission, &pattern, &refs);
        let fast = compiled.evaluate(&permission, &pattern);
        assert_eq!(
            plain.action, fast.action,
            "{permission:?} {pattern:?} on {rulesets:?}"
        );
        if let Some(rule) = fast.rule {
            assert_eq!(&plain, rule, "{permission:?} {pattern:?} on {rulesets:?}");
        }
    }
});
