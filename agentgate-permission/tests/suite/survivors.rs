//! Tests for mutants that survived the crate's own tests (found with
//! `scripts/mutation.sh`): each pins down behaviour no other test checked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentgate_permission::{
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

#[test]
fn config_errors_name_plain_keys_with_dots_and_others_quoted() {
    let value = serde_json::json!({"bash": {"git *": "maybe"}});
    let error = PermissionConfig::from_value(&value, "permission").unwrap_err();
    assert_eq!(error.path, r#"permission.bash["git *"]"#);
    let value = serde_json::json!({"my_tool-2": 5});
    let error = PermissionConfig::from_value(&value, "permission").unwrap_err();
    assert_eq!(error.path, "permission.my_tool-2");
    let value = serde_json::json!({"": 5});
    let error = PermissionConfig::from_value(&value, "permission").unwrap_err();
    assert_eq!(error.path, r#"permission[""]"#);
}

/// JavaScript iterates array-index keys first, in ascending order, and
/// `"0"` is one of them (`"01"` is not).
#[test]
fn config_keys_zero_and_single_digits_are_array_indices() {
    let config: PermissionConfig =
        serde_json::from_str(r#"{"x": "allow", "01": "ask", "1": "deny", "0": "allow"}"#).unwrap();
    let order: Vec<String> = from_config_with_home(&config, "/h")
        .rules()
        .iter()
        .map(|rule| rule.permission.clone())
        .collect();
    assert_eq!(order, ["0", "1", "x", "01"]);
}

#[test]
fn compiled_rulesets_report_their_rules() {
    let rules = Ruleset::from(vec![
        Rule::new("bash", "*", Action::Ask),
        Rule::new("bash", "git *", Action::Allow),
    ]);
    let compiled = agentgate_permission::CompiledRuleset::from_ruleset(&rules);
    assert_eq!(compiled.rules(), rules.rules());
    assert_eq!(compiled.len(), 2);
    assert!(!compiled.is_empty());
    let empty = agentgate_permission::CompiledRuleset::new(&[]);
    assert_eq!(empty.len(), 0);
    assert!(empty.is_empty());
    assert!(empty.rules().is_empty());
}

/// `home_dir` reads `HOME`, then `USERPROFILE`, skipping empty values. Each
/// case runs in a child copy of this test binary with its own environment,
/// so no other test sees a changed `HOME`.
#[test]
fn home_dir_reads_home_then_userprofile_and_skips_empty_values() {
    const CASE: &str = "AGENT_PERMISSION_HOME_CASE";
    if let Ok(expected) = std::env::var(CASE) {
        let expected = (expected != "<none>").then_some(expected);
        assert_eq!(home_dir(), expected);
        return;
    }
    let name = format!(
        "{}::home_dir_reads_home_then_userprofile_and_skips_empty_values",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[("HOME", "/home/u")], "/home/u"),
        (&[("HOME", "/home/u"), ("USERPROFILE", "C:/u")], "/home/u"),
        (&[("HOME", ""), ("USERPROFILE", "C:/u")], "C:/u"),
        (&[("USERPROFILE", "C:/u")], "C:/u"),
        (&[("HOME", ""), ("USERPROFILE", "")], "<none>"),
        (&[], "<none>"),
    ];
    for (env, expected) in cases {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args(["--exact", &name, "--test-threads=1"])
            .env_remove("HOME")
            .env_remove("USERPROFILE")
            .env(CASE, expected);
        for (key, value) in env {
            child.env(key, value);
        }
        let out = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{env:?}: {stdout}");
        assert!(
            stdout.contains("1 passed"),
            "the case did not run: {stdout}"
        );
    }
}

/// The gate's `Debug` output is what a host logs when something hangs: the
/// project and the counts must be in it.
#[cfg(feature = "gate")]
#[test]
fn the_gate_and_its_builder_show_their_state_in_debug_output() {
    use agentgate_permission::{MemoryStore, PermissionGate};
    use std::sync::Arc;

    let builder = PermissionGate::builder()
        .store(Arc::new(MemoryStore::new()), "proj-a")
        .event_capacity(7);
    let shown = format!("{builder:?}");
    assert!(shown.contains("proj-a"), "{shown}");
    assert!(shown.contains("event_capacity: 7"), "{shown}");
    assert!(shown.contains("approver: false"), "{shown}");
    let gate = builder.build().unwrap();
    assert_eq!(gate.project(), "proj-a");
    let shown = format!("{gate:?}");
    for part in [
        "proj-a",
        "pending: 0",
        "approved: 0",
        "approver: false",
        "shut_down: false",
    ] {
        assert!(shown.contains(part), "{part} missing from {shown}");
    }
    gate.shutdown();
    assert!(format!("{gate:?}").contains("shut_down: true"));
}

/// The literal ends of a pattern, public in `wildcard` for indexes like
/// `CompiledRuleset`'s: every matching input starts with the prefix and
/// ends with the suffix.
#[test]
fn literal_ends_and_literal_patterns() {
    use agentgate_permission::wildcard::{is_literal, literal_prefix, literal_suffix};
    assert_eq!(literal_suffix("*.rs"), ".rs");
    assert_eq!(literal_suffix("src/*/mod.rs"), "/mod.rs");
    assert_eq!(literal_suffix("a?b"), "b");
    assert_eq!(literal_suffix("git *"), "");
    assert_eq!(literal_suffix("ls"), "ls");
    assert_eq!(literal_suffix("*"), "");
    assert_eq!(literal_prefix("git push *"), "git push");
    assert_eq!(literal_prefix("src/*.rs"), "src/");
    assert!(is_literal("git status"));
    assert!(!is_literal("git *"));
    assert!(!is_literal("a?"));
}

#[test]
fn a_compiled_pattern_keeps_its_source() {
    let pattern = wildcard::Pattern::new("git push *");
    assert_eq!(pattern.as_str(), "git push *");
    assert_eq!(wildcard::Pattern::new("").as_str(), "");
}
