//! Functions over rulesets: `merge`, `evaluate` and `disabled` (opencode §4 and §5).

use std::collections::BTreeSet;

use crate::rule::{Action, Rule, Ruleset};
use crate::wildcard;

/// Concatenates rulesets in argument order (§4.1). No de-duplication, no sorting.
pub fn merge<'a, I>(rulesets: I) -> Ruleset
where
    I: IntoIterator<Item = &'a Ruleset>,
{
    rulesets
        .into_iter()
        .flat_map(|r| r.iter().cloned())
        .collect()
}

/// The last rule, across `rulesets` flattened in order, whose permission
/// and pattern both match; `None` when no rule matches. Never allocates.
pub fn find_last<'a>(
    permission: &str,
    pattern: &str,
    rulesets: &[&'a Ruleset],
) -> Option<&'a Rule> {
    rulesets
        .iter()
        .rev()
        .flat_map(|set| set.iter().rev())
        .find(|rule| rule.matches(permission, pattern))
}

/// The action the rulesets decide for `permission` and `pattern`: the
/// action of the last matching rule, or [`Action::Ask`]. Never allocates.
pub fn decide(permission: &str, pattern: &str, rulesets: &[&Ruleset]) -> Action {
    find_last(permission, pattern, rulesets).map_or(Action::Ask, |rule| rule.action)
}

/// opencode's `evaluate` (§4.2): the last matching rule over the flattened
/// rulesets, or the synthetic rule `{permission, "*", ask}` when none
/// matches.
///
/// ```
/// use agentgate_permission::{evaluate, Action, Rule, Ruleset};
/// let rules = Ruleset::from(vec![
///     Rule::new("bash", "rm *", Action::Deny),
///     Rule::new("bash", "*", Action::Allow),
/// ]);
/// // Last match wins: the generic rule placed later beats the specific one.
/// assert_eq!(evaluate("bash", "rm -rf /", &[&rules]).action, Action::Allow);
/// assert_eq!(evaluate("edit", "a.rs", &[&rules]).action, Action::Ask);
/// ```
pub fn evaluate(permission: &str, pattern: &str, rulesets: &[&Ruleset]) -> Rule {
    match find_last(permission, pattern, rulesets) {
        Some(rule) => rule.clone(),
        None => Rule::new(permission, "*", Action::Ask),
    }
}

/// The permission a tool id is gated by (§5): `edit`, `write` and
/// `apply_patch` share `edit`; the MCP resource tools share `read`; every
/// other tool is gated by its own id.
pub fn tool_permission(tool: &str) -> &str {
    match tool {
        "edit" | "write" | "apply_patch" => "edit",
        "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => "read",
        other => other,
    }
}

/// Whether `tool` vanishes from the model's tool list under `ruleset` (§5):
/// the last rule whose permission matches the tool's permission has the
/// literal pattern `*` and action `deny`.
pub fn is_disabled(tool: &str, ruleset: &Ruleset) -> bool {
    let permission = tool_permission(tool);
    ruleset
        .iter()
        .rev()
        .find(|rule| wildcard::matches(permission, &rule.permission))
        .is_some_and(|rule| rule.pattern == "*" && rule.action == Action::Deny)
}

/// The tools of `tools` that vanish from the model's tool list (§5), as a
/// sorted set of tool ids.
///
/// ```
/// use agentgate_permission::{disabled, Action, Rule, Ruleset};
/// let rules = Ruleset::from(vec![
///     Rule::new("*", "*", Action::Deny),
///     Rule::new("read", "*", Action::Allow),
/// ]);
/// let hidden = disabled(["read", "edit", "write"], &rules);
/// assert_eq!(hidden.into_iter().collect::<Vec<_>>(), ["edit", "write"]);
/// ```
pub fn disabled<I, S>(tools: I, ruleset: &Ruleset) -> BTreeSet<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    tools
        .into_iter()
        .filter(|tool| is_disabled(tool.as_ref(), ruleset))
        .map(|tool| tool.as_ref().to_string())
        .collect()
}
