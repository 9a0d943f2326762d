//! Permissions of sub-agent sessions (§10.1, §10.2 step 5).

use crate::rule::{Action, Rule, Ruleset};

fn names_permission(ruleset: &Ruleset, permission: &str) -> bool {
    ruleset.iter().any(|rule| rule.permission == permission)
}

/// opencode's `deriveSubagentSessionPermission` (§10.1): the rules a new
/// child session gets, in order:
///
/// 1. every rule of the **parent session's** permission list whose
///    permission is exactly `external_directory` or whose action is `deny`;
/// 2. `{todowrite, *, deny}` unless the subagent's ruleset has a rule whose
///    permission is literally `todowrite`;
/// 3. `{task, *, deny}` unless it has a rule whose permission is literally `task`.
///
/// The parent *agent's* rules are not inherited. At ask time the child's
/// ruleset is `merge(subagent, derived)`, so parent denies act as ceilings.
///
/// ```
/// use agentgate_permission::{derive_subagent_permission, Action, Rule, Ruleset};
/// let parent = Ruleset::from(vec![Rule::new("bash", "*", Action::Deny)]);
/// let explorer = Ruleset::from(vec![Rule::new("bash", "*", Action::Allow)]);
/// let derived = derive_subagent_permission(&parent, &explorer);
/// assert_eq!(derived.len(), 3); // bash deny, todowrite deny, task deny
/// ```
pub fn derive_subagent_permission(parent_session: &Ruleset, subagent: &Ruleset) -> Ruleset {
    let mut rules: Ruleset = parent_session
        .iter()
        .filter(|rule| rule.permission == "external_directory" || rule.action == Action::Deny)
        .cloned()
        .collect();
    if !names_permission(subagent, "todowrite") {
        rules.push(Rule::new("todowrite", "*", Action::Deny));
    }
    if !names_permission(subagent, "task") {
        rules.push(Rule::new("task", "*", Action::Deny));
    }
    rules
}

/// The full permission list the task tool stores on a new child session
/// (§10.2 step 5): [`derive_subagent_permission`], then the `todowrite` and
/// `task` denies (same literal test) and one `{tool, *, deny}` per entry of
/// `primary_tools`, each skipped when an identical rule is already present.
pub fn task_child_permission<S: AsRef<str>>(
    parent_session: &Ruleset,
    subagent: &Ruleset,
    primary_tools: &[S],
) -> Ruleset {
    let mut rules = derive_subagent_permission(parent_session, subagent);
    let mut extra = Vec::new();
    if !names_permission(subagent, "todowrite") {
        extra.push(Rule::new("todowrite", "*", Action::Deny));
    }
    if !names_permission(subagent, "task") {
        extra.push(Rule::new("task", "*", Action::Deny));
    }
    extra.extend(
        primary_tools
            .iter()
            .map(|tool| Rule::new(tool.as_ref(), "*", Action::Deny)),
    );
    for rule in extra {
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}
