//! The data model: [`Action`], [`Rule`] and [`Ruleset`] (opencode §1).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a rule decides for a matching request.
///
/// Serialised in lowercase (`"allow"`, `"deny"`, `"ask"`), as in opencode.
/// The default is [`Action::Ask`], the answer when no rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The request proceeds without a prompt.
    Allow,
    /// The request fails with a denied error.
    Deny,
    /// The host is asked before the request proceeds.
    #[default]
    Ask,
}

impl Action {
    /// The stricter of two answers: `deny` over `ask` over `allow`. A task
    /// child's request is decided by the stricter of its own rules and its
    /// parents' (see [`AskRequest::ceilings`](crate::AskRequest::ceilings)).
    pub fn stricter(self, other: Action) -> Action {
        match (self, other) {
            (Action::Deny, _) | (_, Action::Deny) => Action::Deny,
            (Action::Ask, _) | (_, Action::Ask) => Action::Ask,
            _ => Action::Allow,
        }
    }

    /// The lowercase name used in configuration files: `allow`, `deny` or `ask`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error returned when a string is not `allow`, `deny` or `ask`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action {0:?}: expected \"allow\", \"deny\" or \"ask\"")]
pub struct ParseActionError(pub String);

impl FromStr for Action {
    type Err = ParseActionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Action::Allow),
            "deny" => Ok(Action::Deny),
            "ask" => Ok(Action::Ask),
            other => Err(ParseActionError(other.to_string())),
        }
    }
}

/// One rule: when the requested permission matches `permission` and the
/// requested pattern matches `pattern` (both wildcards, see
/// [`crate::wildcard`]), the rule decides `action`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    /// Wildcard matched against the permission name (`bash`, `edit`, `mcp_*`, `*`).
    pub permission: String,
    /// Wildcard matched against the request pattern (a command, a path, a URL ...).
    pub pattern: String,
    /// The decision when both match.
    pub action: Action,
}

impl Rule {
    /// Builds a rule from its three parts.
    pub fn new(permission: impl Into<String>, pattern: impl Into<String>, action: Action) -> Self {
        Rule {
            permission: permission.into(),
            pattern: pattern.into(),
            action,
        }
    }

    /// Whether this rule applies to `permission` and `pattern`.
    pub fn matches(&self, permission: &str, pattern: &str) -> bool {
        crate::wildcard::matches(permission, &self.permission)
            && crate::wildcard::matches(pattern, &self.pattern)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?} {}", self.permission, self.pattern, self.action)
    }
}

/// An ordered list of rules. Order is the only precedence: the **last**
/// matching rule wins.
///
/// Serialises transparently as a JSON array of rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Ruleset(pub Vec<Rule>);

impl Ruleset {
    /// An empty ruleset.
    pub fn new() -> Self {
        Ruleset(Vec::new())
    }

    /// Appends a rule at the end (where it has the highest precedence).
    pub fn push(&mut self, rule: Rule) {
        self.0.push(rule);
    }

    /// The rules in order.
    pub fn rules(&self) -> &[Rule] {
        &self.0
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over the rules in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Rule> {
        self.0.iter()
    }
}

impl From<Vec<Rule>> for Ruleset {
    fn from(rules: Vec<Rule>) -> Self {
        Ruleset(rules)
    }
}

impl FromIterator<Rule> for Ruleset {
    fn from_iter<I: IntoIterator<Item = Rule>>(iter: I) -> Self {
        Ruleset(iter.into_iter().collect())
    }
}

impl Extend<Rule> for Ruleset {
    fn extend<I: IntoIterator<Item = Rule>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl IntoIterator for Ruleset {
    type Item = Rule;
    type IntoIter = std::vec::IntoIter<Rule>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Ruleset {
    type Item = &'a Rule;
    type IntoIter = std::slice::Iter<'a, Rule>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl std::ops::Deref for Ruleset {
    type Target = [Rule];

    fn deref(&self) -> &[Rule] {
        &self.0
    }
}
