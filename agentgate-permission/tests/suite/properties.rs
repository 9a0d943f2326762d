//! Properties of the pure engine: no panics on any input, `covers` is sound,
//! `explain` agrees with `evaluate`, config round-trips keep order.

use agentgate_permission::{
    Action, BUILTIN_PERMISSIONS, Layered, PermissionConfig, Rule, Ruleset, arity, covers, evaluate,
    from_config_with_home, lint, wildcard,
};
use proptest::prelude::*;

fn small() -> impl Strategy<Value = String> {
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
            Just("."),
            Just("["),
        ],
        0..6,
    )
    .prop_map(|p| p.concat())
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![Just(Action::Allow), Just(Action::Deny), Just(Action::Ask)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn matching_never_panics(input in any::<String>(), pattern in any::<String>()) {
        let _ = wildcard::matches(&input, &pattern);
        let _ = wildcard::matches_with(&input, &pattern, true);
        let _ = wildcard::literal_prefix(&pattern);
    }

    #[test]
    fn literal_prefix_is_a_prefix_of_every_match(input in small(), pattern in small()) {
        if wildcard::matches(&input, &pattern) {
            let prefix = wildcard::literal_prefix(&pattern).replace('\\', "/");
            prop_assert!(input.replace('\\', "/").starts_with(&prefix));
        }
    }

    #[test]
    fn literal_suffix_is_a_suffix_of_every_match(input in small(), pattern in small()) {
        if wildcard::matches(&input, &pattern) {
            let suffix = wildcard::literal_suffix(&pattern).replace('\\', "/");
            prop_assert!(input.replace('\\', "/").ends_with(&suffix));
        }
    }

    #[test]
    fn compiled_pattern_agrees_with_matches(input in small(), pattern in small()) {
        prop_assert_eq!(
            wildcard::Pattern::new(&pattern).matches(&input),
            wildcard::matches(&input, &pattern)
        );
    }

    #[test]
    fn covers_is_sound(general in small(), specific in small(), input in small()) {
        if covers(&general, &specific) && wildcard::matches(&input, &specific) {
            prop_assert!(wildcard::matches(&input, &general),
                "{general:?} claims to cover {specific:?} but {input:?} matches only the latter");
        }
    }

    #[test]
    fn explain_agrees_with_evaluate(
        a in proptest::collection::vec((small(), small(), action()), 0..6),
        b in proptest::collection::vec((small(), small(), action()), 0..6),
        permission in small(),
        pattern in small(),
    ) {
        let to_set = |v: Vec<(String, String, Action)>| -> Ruleset {
            v.into_iter().map(|(p, q, x)| Rule::new(p, q, x)).collect()
        };
        let (a, b) = (to_set(a), to_set(b));
        let layers = Layered::new().with("a", a.clone()).with("b", b.clone());
        let why = layers.explain(&permission, &pattern);
        let rule = evaluate(&permission, &pattern, &[&a, &b]);
        prop_assert_eq!(why.action, rule.action);
        if let Some(decided) = &why.decided_by {
            prop_assert_eq!(&decided.rule, &rule);
            for earlier in &why.overridden {
                prop_assert!(earlier.rule.matches(&permission, &pattern));
            }
        }
        // lint never panics and every shadow claim is a later rule.
        for finding in lint(&layers, BUILTIN_PERMISSIONS) {
            if let Some(related) = finding.related {
                prop_assert!((related.layer_index, related.index) > (finding.rule.layer_index, finding.rule.index));
            }
        }
    }

    #[test]
    fn arity_never_panics_and_returns_a_prefix(tokens in proptest::collection::vec(any::<String>(), 0..6)) {
        let prefix = arity::prefix(&tokens);
        prop_assert!(prefix.len() <= tokens.len());
        prop_assert_eq!(prefix, &tokens[..prefix.len()]);
        prop_assert!(tokens.is_empty() || !prefix.is_empty());
    }

    #[test]
    fn config_parsing_never_panics(text in any::<String>()) {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
            && let Ok(config) = PermissionConfig::from_value(&value, "permission")
        {
            let _ = from_config_with_home(&config, "/h");
        }
    }
}

#[test]
fn config_order_survives_deserialisation() {
    let config: PermissionConfig = serde_json::from_str(
        r#"{"zeta": "allow", "alpha": {"b": "deny", "a": "ask"}, "*": "ask"}"#,
    )
    .unwrap();
    let rules = from_config_with_home(&config, "/h");
    let seen: Vec<(&str, &str)> = rules
        .iter()
        .map(|r| (r.permission.as_str(), r.pattern.as_str()))
        .collect();
    assert_eq!(
        seen,
        [("zeta", "*"), ("alpha", "b"), ("alpha", "a"), ("*", "*")]
    );
    // Serialising keeps the order too.
    let back = serde_json::to_string(&config).unwrap();
    assert_eq!(
        back,
        r#"{"zeta":"allow","alpha":{"b":"deny","a":"ask"},"*":"ask"}"#
    );
}

#[test]
fn malformed_config_is_rejected_with_a_path() {
    let err = serde_json::from_str::<PermissionConfig>(r#"{"bash": {"git *": "sometimes"}}"#)
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("permission.bash[\"git *\"]"), "{text}");
    assert!(text.contains("\"allow\", \"deny\" or \"ask\""), "{text}");
}
