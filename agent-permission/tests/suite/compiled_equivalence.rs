//! `CompiledRuleset` must answer exactly like `evaluate` on any input.

use agent_permission::{Action, CompiledRuleset, Rule, Ruleset, find_last};
use proptest::prelude::*;

/// Wildcard-ish strings over a small alphabet, so that matches are common
/// and every special case (`*`, `?`, trailing `" *"`, backslash, non-ASCII)
/// shows up.
fn pattern() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("*"),
            Just("?"),
            Just(" "),
            Just(" *"),
            Just("a"),
            Just("b"),
            Just("/"),
            Just("\\"),
            Just("é"),
            Just("😀"),
            Just("ls"),
            Just("git"),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn input() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just(" "),
            Just("a"),
            Just("b"),
            Just("/"),
            Just("\\"),
            Just("é"),
            Just("😀"),
            Just("ls"),
            Just("git"),
            Just("*"),
            Just("\n"),
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![Just(Action::Allow), Just(Action::Deny), Just(Action::Ask)]
}

fn rule() -> impl Strategy<Value = Rule> {
    (
        prop_oneof![
            Just("bash".to_string()),
            Just("edit".to_string()),
            Just("*".to_string()),
            Just("e*".to_string()),
            Just("b?sh".to_string()),
            pattern(),
        ],
        pattern(),
        action(),
    )
        .prop_map(|(permission, pattern, action)| Rule::new(permission, pattern, action))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn compiled_answers_like_evaluate(
        sets in proptest::collection::vec(proptest::collection::vec(rule(), 0..24), 1..3),
        permission in prop_oneof![Just("bash".to_string()), Just("edit".to_string()), input()],
        request in input(),
    ) {
        let sets: Vec<Ruleset> = sets.into_iter().map(Ruleset::from).collect();
        let refs: Vec<&Ruleset> = sets.iter().collect();
        let compiled = CompiledRuleset::new(&refs);
        let expected = find_last(&permission, &request, &refs);
        let got = compiled.evaluate(&permission, &request);
        prop_assert_eq!(got.rule, expected);
        prop_assert_eq!(got.action, expected.map_or(Action::Ask, |r| r.action));
        prop_assert_eq!(
            agent_permission::evaluate(&permission, &request, &refs).action,
            got.action
        );
    }
}

#[test]
fn index_points_into_the_flattened_rules() {
    let first = Ruleset::from(vec![Rule::new("bash", "*", Action::Allow)]);
    let second = Ruleset::from(vec![
        Rule::new("bash", "rm *", Action::Deny),
        Rule::new("edit", "*", Action::Deny),
    ]);
    let compiled = CompiledRuleset::new(&[&first, &second]);
    let decision = compiled.evaluate("bash", "rm -rf /");
    assert_eq!(decision.index, Some(1));
    assert_eq!(decision.action, Action::Deny);
    assert_eq!(compiled.evaluate("bash", "ls").index, Some(0));
    assert_eq!(compiled.evaluate("read", "x").index, None);
}

/// More permission patterns match one request than the evaluation sorts on
/// its stack buffer: the fallback path must answer the same.
#[test]
fn many_matching_permission_groups() {
    let permissions = [
        "*", "b*", "ba*", "bas*", "bash*", "*h", "*sh", "*ash", "b?sh", "?ash", "ba?h", "bas?",
        "b*h", "*a*", "*s*", "b*s*", "?a?h", "??sh", "b??h", "*b*", "bash",
    ];
    let patterns = ["*", "git *", "git push *", "*.rs", "rm *", "?", "ls", "* *"];
    let actions = [Action::Allow, Action::Deny, Action::Ask];
    let mut rules = Vec::new();
    for (i, permission) in permissions.iter().enumerate() {
        for (j, pattern) in patterns.iter().enumerate() {
            if (i + j) % 3 != 0 {
                rules.push(Rule::new(*permission, *pattern, actions[(i * 7 + j) % 3]));
            }
        }
    }
    let rules = Ruleset::from(rules);
    let compiled = CompiledRuleset::new(&[&rules]);
    for request in [
        "git push origin",
        "git status",
        "main.rs",
        "rm -rf /",
        "x",
        "ls",
        "a b",
        "",
    ] {
        for permission in ["bash", "bsh", "edit", "bash\\x"] {
            let expected = find_last(permission, request, &[&rules]);
            let got = compiled.evaluate(permission, request);
            assert_eq!(got.rule, expected, "{permission} {request:?}");
        }
    }
}
