//! An "always" approval never overrides a configured deny, and an "always"
//! pattern cannot widen through glob characters taken from a command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use agentgate_permission::{
    Action, AskRequest, MemoryStore, PermissionError, PermissionGate, PermissionRequest, Reply,
    ReplyKind, Rule, Ruleset, arity, is_storable_always_pattern,
};

use super::common::{ask_pending, finished, within};

/// The host's configuration: everything asks, `git push` is denied.
fn config() -> Ruleset {
    Ruleset::from(vec![
        Rule::new("bash", "*", Action::Ask),
        Rule::new("bash", "git push *", Action::Deny),
    ])
}

#[tokio::test(start_paused = true)]
async fn an_approval_never_overrides_a_configured_deny() {
    // An approval that covers everything, as "always" on `*` would store.
    let store = Arc::new(MemoryStore::with_approved(
        "p",
        Ruleset::from(vec![Rule::new("bash", "*", Action::Allow)]),
    ));
    let permissions = PermissionGate::with_store(store, "p").unwrap();
    let denied = within(
        "a denied ask",
        permissions.ask(AskRequest::new("s", "bash", ["git push origin main"]).ruleset(config())),
    )
    .await;
    match denied {
        Err(PermissionError::Denied { rules }) => assert_eq!(rules, config()),
        other => panic!("expected Denied, got {other:?}"),
    }
    // What the configuration leaves at `ask`, the approval still allows.
    assert_eq!(
        within(
            "an approved ask",
            permissions.ask(AskRequest::new("s", "bash", ["git status"]).ruleset(config())),
        )
        .await,
        Ok(())
    );
    assert!(permissions.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_on_a_command_then_a_denied_one_is_still_denied() {
    let permissions = PermissionGate::new();
    let task = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git status"])
            .always(["git *"])
            .ruleset(config())
            .id("a"),
    )
    .await;
    permissions.reply("a", Reply::Always).unwrap();
    assert_eq!(finished(task).await, Ok(()));
    assert_eq!(
        permissions.approved().rules(),
        [Rule::new("bash", "git *", Action::Allow)]
    );
    let outcome = within(
        "ask after always",
        permissions.ask(AskRequest::new("t", "bash", ["git push --force"]).ruleset(config())),
    )
    .await;
    assert!(
        matches!(outcome, Err(PermissionError::Denied { .. })),
        "{outcome:?}"
    );
}

#[test]
fn only_patterns_with_at_most_a_final_star_are_storable() {
    for good in [
        "*",
        "git push *",
        "/srv/data/*",
        "mcp:docs:*",
        "my-skill",
        "ls *",
        "",
    ] {
        assert!(is_storable_always_pattern(good), "{good:?}");
    }
    for bad in [
        "git * *",
        "* *",
        "ls* *",
        "a?b",
        "/tmp/x*/*",
        "git ? *",
        "*.env",
        "**",
    ] {
        assert!(!is_storable_always_pattern(bad), "{bad:?}");
    }
}

#[test]
fn a_glob_in_the_command_makes_no_always_rule_and_no_always_answer() {
    // What a bash tool derives for `git * x`: opencode's arity pattern.
    let tokens = ["git", "*", "x"];
    let always = arity::always_pattern(&tokens);
    assert_eq!(always, "git * *");
    let request = PermissionRequest {
        id: "per_1".into(),
        session_id: "s".into(),
        permission: "bash".into(),
        patterns: vec!["git * x".into()],
        always: vec![always],
        metadata: serde_json::json!({}),
        tool: None,
    };
    assert!(request.always_rules().is_empty());
    assert_eq!(request.answers(), [ReplyKind::Once, ReplyKind::Reject]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_on_a_globbed_command_approves_that_call_only() {
    let permissions = PermissionGate::new();
    let rules = Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]);
    let task = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git * x"])
            .always(["git * *", "ls *"])
            .ruleset(rules.clone())
            .id("a"),
    )
    .await;
    permissions.reply("a", Reply::Always).unwrap();
    assert_eq!(finished(task).await, Ok(()));
    // Only the narrow pattern was stored.
    assert_eq!(
        permissions.approved().rules(),
        [Rule::new("bash", "ls *", Action::Allow)]
    );
    // `git push` is not approved by it: it asks again.
    let again = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git push origin"])
            .ruleset(rules)
            .id("b"),
    )
    .await;
    permissions.reply("b", Reply::reject()).unwrap();
    assert_eq!(finished(again).await, Err(PermissionError::Rejected));
}
