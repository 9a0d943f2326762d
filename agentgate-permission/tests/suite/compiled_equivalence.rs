//! `CompiledRuleset` must answer exactly like `evaluate` on any input.

use agentgate_permission::{Action, CompiledRuleset, Rule, Ruleset, find_last};
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
            agentgate_permission::evaluate(&permission, &request, &refs).action,
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

/// More wildcard permission groups fit one request than the evaluator sorts
/// on the stack (16), so it visits them in tree order: the answer must not
/// change (a deny placed last must still win).
#[test]
fn many_matching_permission_groups_still_answer_like_evaluate() {
    let permissions = [
        "*", "**", "m*", "mc*", "mcp*", "mcp_*", "mcp_**", "m*x", "mc*x", "*x", "m?p_x", "?cp_x",
        "mcp?x", "m**x", "*p_x", "*_x", "mcp_x*", "mcp_x**", "mcp_?", "m*_x",
    ];
    let mut rules: Vec<Rule> = Vec::new();
    for (i, permission) in permissions.iter().enumerate() {
        let action = if i % 2 == 0 {
            Action::Allow
        } else {
            Action::Ask
        };
        rules.push(Rule::new(*permission, "*", action));
        rules.push(Rule::new(*permission, format!("tool{i} *"), Action::Allow));
    }
    rules.push(Rule::new("m*_x", "rm *", Action::Deny));
    rules.push(Rule::new("*", "*.env", Action::Deny));
    let rules = Ruleset::from(rules);
    let compiled = CompiledRuleset::new(&[&rules]);
    for (permission, pattern) in [
        ("mcp_x", "rm -rf /"),
        ("mcp_x", "ls"),
        ("mcp_x", "tool3 run"),
        ("mcp_x", "a/.env"),
        ("mcp_y", "rm -rf /"),
        ("other", "tool0 x"),
        ("mcp_x", "tool19"),
    ] {
        let expected = find_last(permission, pattern, &[&rules]);
        let got = compiled.evaluate(permission, pattern);
        assert_eq!(got.rule, expected, "{permission} {pattern}");
    }
    assert_eq!(compiled.decide("mcp_x", "rm -rf /"), Action::Deny);
}

/// Few wildcard groups (the evaluator tests them one by one) and literal
/// permissions (answered through their own index) agree with `evaluate`.
#[test]
fn views_and_few_groups_answer_like_evaluate() {
    let rules = Ruleset::from(vec![
        Rule::new("*", "*", Action::Ask),
        Rule::new("bash", "*", Action::Allow),
        Rule::new("b?sh", "rm *", Action::Deny),
        Rule::new("bash", "git *", Action::Allow),
        Rule::new("ba*", "git push *", Action::Deny),
        Rule::new("edit", "*.lock", Action::Deny),
        Rule::new("e*", "src\\*", Action::Allow),
        Rule::new("mcp_*", "*", Action::Deny),
        Rule::new("bash", "git push --dry-run *", Action::Allow),
        Rule::new("*", "*.env", Action::Deny),
    ]);
    let compiled = CompiledRuleset::new(&[&rules]);
    for permission in ["bash", "edit", "eval", "mcp_x", "b?sh", "basher", "x", ""] {
        for pattern in [
            "rm -rf /",
            "git push origin",
            "git push --dry-run x",
            "git status",
            "Cargo.lock",
            "src/a.rs",
            "src\\a.rs",
            "a/.env",
            "",
        ] {
            let expected = find_last(permission, pattern, &[&rules]);
            assert_eq!(
                compiled.evaluate(permission, pattern).rule,
                expected,
                "{permission:?} {pattern:?}"
            );
        }
    }
}

/// Many permission patterns that all match the asked permission, none of
/// them spelling it out: more candidate groups than the compiled evaluator
/// collects on its stack (its overflow path), several of them under one
/// literal prefix (`b`). Deterministic (xorshift), 3,000 rulesets.
#[test]
fn many_wildcard_permissions_overflowing_the_candidate_buffer() {
    const PERMISSIONS: &[&str] = &[
        "*", "b*", "ba*", "bas*", "?ash", "b?sh", "ba?h", "bas?", "*h", "*sh", "*ash", "b*h",
        "b*sh", "ba*h", "*a*", "?a?h", "b??h", "??sh", "*s*", "b*s*", "?*", "b*x", "git", "*u*",
    ];
    const PATTERNS: &[&str] = &["*", "git *", "rm *", "ls", "zzz", "git push", "* *", "l?"];
    const ACTIONS: [Action; 3] = [Action::Allow, Action::Deny, Action::Ask];
    const QUERIES: &[(&str, &str)] = &[
        ("bash", "git push"),
        ("bash", "ls"),
        ("bash", "rm -rf /"),
        ("bush", "git status"),
        ("bash", "cat x"),
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    for case in 0..3000 {
        let count = 17 + next(30);
        let rules: Ruleset = (0..count)
            .map(|_| {
                Rule::new(
                    PERMISSIONS[next(PERMISSIONS.len())],
                    PATTERNS[next(PATTERNS.len())],
                    ACTIONS[next(3)],
                )
            })
            .collect();
        let compiled = CompiledRuleset::new(&[&rules]);
        for &(permission, pattern) in QUERIES {
            let expected = find_last(permission, pattern, &[&rules]);
            let decision = compiled.evaluate(permission, pattern);
            assert_eq!(
                decision.rule,
                expected,
                "case {case}: {permission} {pattern:?} over {:?}",
                rules.rules()
            );
        }
    }
}
