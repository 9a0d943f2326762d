//! Tests for mutants that survived the crate's own tests (issue 14,
//! point 5): each pins down behaviour no other test checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_permission::{
    Action, PermissionConfig, Rule, Ruleset, expand_home, from_config, from_config_with_home,
    home_dir, task_child_permission, wildcard,
};

#[test]
fn home_expansion_covers_each_spelling_and_nothing_else() {
    assert_eq!(expand_home("~", "/h"), "/h");
    assert_eq!(expand_home("~/", "/h"), "/h/");
    assert_eq!(expand_home("~/.ssh/*", "/h"), "/h/.ssh/*");
    assert_eq!(expand_home("$HOME", "/h"), "/h");
    assert_eq!(expand_home("$HOME/x", "/h"), "/h/x");
    // Only at the start, and `~user` is not the home directory.
    assert_eq!(expand_home("a/~/b", "/h"), "a/~/b");
    assert_eq!(expand_home("~user/x", "/h"), "~user/x");
    assert_eq!(expand_home("x$HOME", "/h"), "x$HOME");
}

#[test]
fn from_config_expands_with_the_users_home() {
    let config: PermissionConfig =
        serde_json::from_str(r#"{"read": {"~/.ssh/*": "deny", "src/*": "allow"}}"#).unwrap();
    let rules = from_config(&config);
    match home_dir() {
        Some(home) => {
            assert_eq!(rules, from_config_with_home(&config, &home));
            assert_eq!(rules.rules()[0].pattern, format!("{home}/.ssh/*"));
        }
        None => assert_eq!(rules.rules()[0].pattern, "~/.ssh/*"),
    }
    assert_eq!(rules.rules()[1], Rule::new("read", "src/*", Action::Allow));
}

#[test]
fn a_task_child_keeps_the_todowrite_rules_its_subagent_names() {
    let parent = Ruleset::new();
    let subagent = Ruleset::from(vec![Rule::new("todowrite", "*", Action::Allow)]);
    let child = task_child_permission(&parent, &subagent, &["bash"]);
    assert!(
        !child.contains(&Rule::new("todowrite", "*", Action::Deny)),
        "{child:?}"
    );
    assert!(child.contains(&Rule::new("task", "*", Action::Deny)));
    assert!(child.contains(&Rule::new("bash", "*", Action::Deny)));

    let unnamed = task_child_permission(&parent, &Ruleset::new(), &[] as &[&str]);
    assert_eq!(
        unnamed.rules(),
        [
            Rule::new("todowrite", "*", Action::Deny),
            Rule::new("task", "*", Action::Deny),
        ]
    );
}

#[test]
fn overlapping_literal_ends_do_not_match_short_inputs() {
    // `ab*ba` needs at least four characters: "aba" starts with "ab" and
    // ends with "ba" but the two ends overlap.
    for (input, pattern, expected) in [
        ("aba", "ab*ba", false),
        ("abba", "ab*ba", true),
        ("abxba", "ab*ba", true),
        ("ab", "a*b*b", false),
        ("abb", "a*b*b", true),
        ("git", "git*git", false),
        ("gitgit", "git*git", true),
    ] {
        assert_eq!(
            wildcard::matches(input, pattern),
            expected,
            "{input} {pattern}"
        );
        assert_eq!(
            wildcard::Pattern::new(pattern).matches(input),
            expected,
            "{input} {pattern} (compiled)"
        );
    }
}
