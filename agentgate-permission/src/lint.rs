//! [`lint`]: the silent mistakes of last-match-wins rulesets, found before
//! they bite.
//!
//! - **Shadowed** rules can never decide anything: a later rule matches
//!   every request they match.
//! - **Specific before generic**: the same, but the later, more generic rule
//!   has a *different* action, so the specific rule the user wrote never takes
//!   effect (`bash rm * deny` followed by `bash * allow` allows `rm`). The fix
//!   is usually to swap them.
//! - **Unknown permissions**: a permission name (or pattern) that matches no
//!   known permission, typically a typo (`bsh`) or a tool name that is gated
//!   by another permission (`write` is gated by `edit`).
//!
//! ```
//! use agentgate_permission::{lint, Action, FindingKind, Layered, Rule, Ruleset, BUILTIN_PERMISSIONS};
//! let layers = Layered::new().with("user", Ruleset::from(vec![
//!     Rule::new("bash", "rm *", Action::Deny),
//!     Rule::new("bash", "*", Action::Allow),
//!     Rule::new("wirte", "*", Action::Deny),
//! ]));
//! let findings = lint(&layers, BUILTIN_PERMISSIONS);
//! assert_eq!(findings[0].kind, FindingKind::SpecificBeforeGeneric);
//! assert_eq!(findings[1].kind, FindingKind::UnknownPermission);
//! ```

use std::fmt;

use serde::Serialize;

use crate::layered::{Layered, RuleRef};
use crate::ruleset::tool_permission;
use crate::wildcard;

/// Permission names used by the built-in tools and the agent loop.
pub const BUILTIN_PERMISSIONS: &[&str] = &[
    "bash",
    "codesearch",
    "doom_loop",
    "edit",
    "external_directory",
    "glob",
    "grep",
    "list",
    "lsp",
    "plan_enter",
    "plan_exit",
    "question",
    "read",
    "skill",
    "task",
    "todowrite",
    "webfetch",
    "websearch",
];

/// What kind of problem a [`Finding`] reports.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A later rule with the same action covers this one: it is redundant.
    Shadowed,
    /// A later, more generic rule with a different action covers this one,
    /// so this rule never takes effect.
    SpecificBeforeGeneric,
    /// The rule's permission matches no known permission.
    UnknownPermission,
}

/// One lint finding.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The kind of problem.
    pub kind: FindingKind,
    /// The rule the finding is about.
    pub rule: RuleRef,
    /// The later rule that shadows it, for the shadowing kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<RuleRef>,
    /// A sentence that says what is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            FindingKind::Shadowed => "shadowed",
            FindingKind::SpecificBeforeGeneric => "specific-before-generic",
            FindingKind::UnknownPermission => "unknown-permission",
        };
        write!(f, "{kind}: {}: {}", self.rule, self.message)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    Lit(char),
    One,
    Many,
}

fn tokens(pattern: &str) -> Vec<Token> {
    pattern
        .chars()
        .map(|c| match c {
            '*' => Token::Many,
            '?' => Token::One,
            c => Token::Lit(wildcard::fold(c, wildcard::CASE_INSENSITIVE)),
        })
        .collect()
}

/// The plain patterns a wildcard stands for: a trailing `" *"` is optional,
/// so such a pattern is the union of its base and itself.
fn alternatives(pattern: &str) -> Vec<Vec<Token>> {
    match pattern.strip_suffix(" *") {
        Some(base) => vec![tokens(base), tokens(pattern)],
        None => vec![tokens(pattern)],
    }
}

/// Whether every string matched by `specific` is matched by `general`
/// (sound, not complete: a `false` may be a miss, a `true` never is).
fn plain_covers(general: &[Token], specific: &[Token]) -> bool {
    let (n, m) = (general.len(), specific.len());
    // covers[i][j]: general[i..] covers specific[j..]
    let mut table = vec![false; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    table[at(n, m)] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            let value = match general[i] {
                Token::Many => table[at(i + 1, j)] || (j < m && table[at(i, j + 1)]),
                Token::One => j < m && specific[j] != Token::Many && table[at(i + 1, j + 1)],
                Token::Lit(c) => j < m && specific[j] == Token::Lit(c) && table[at(i + 1, j + 1)],
            };
            table[at(i, j)] = value;
        }
    }
    table[at(0, 0)]
}

/// Whether every input matched by the wildcard `specific` is also matched
/// by the wildcard `general` (conservative: `true` is always right).
pub fn covers(general: &str, specific: &str) -> bool {
    if general == specific || general == "*" {
        return true;
    }
    let general = alternatives(general);
    alternatives(specific)
        .iter()
        .all(|s| general.iter().any(|g| plain_covers(g, s)))
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions
/// and transpositions of neighbours (the usual typos) each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// Tool ids that users write as permission names, though another
/// permission gates them.
const TOOL_ALIASES: &[&str] = &["write", "apply_patch", "multiedit", "patch"];

fn gated_by(name: &str) -> &str {
    match name {
        "multiedit" | "patch" => "edit",
        other => tool_permission(other),
    }
}

fn unknown_permission_message(permission: &str, known: &[&str]) -> String {
    let gate = gated_by(permission);
    if gate != permission {
        return format!(
            "\"{permission}\" is a tool, not a permission: it is gated by \"{gate}\"; write the rule for \"{gate}\""
        );
    }
    let closest = known
        .iter()
        .chain(TOOL_ALIASES)
        .map(|k| (edit_distance(permission, k), *k))
        .filter(|(d, k)| *d <= 2 && *d < k.chars().count())
        .min();
    match closest {
        Some((_, suggestion)) if gated_by(suggestion) != suggestion => format!(
            "permission \"{permission}\" matches no known permission; did you mean \"{}\" (the {suggestion} tool is gated by it)?",
            gated_by(suggestion)
        ),
        Some((_, suggestion)) => format!(
            "permission \"{permission}\" matches no known permission; did you mean \"{suggestion}\"?"
        ),
        None => format!(
            "permission \"{permission}\" matches no known permission (known: {}); unless it names an MCP or custom tool, this rule never applies — if it does, declare that tool as a known permission",
            known.join(", ")
        ),
    }
}

/// Lints a layered ruleset. `known_permissions` are the permission names
/// requests can carry (for example [`BUILTIN_PERMISSIONS`] plus the MCP
/// tools a host registers). Findings come in rule order.
pub fn lint(layered: &Layered, known_permissions: &[&str]) -> Vec<Finding> {
    let rules: Vec<RuleRef> = layered.rule_refs().collect();
    let mut findings = Vec::new();
    for (i, current) in rules.iter().enumerate() {
        let rule = &current.rule;
        let shadow = rules[i + 1..].iter().find(|later| {
            covers(&later.rule.permission, &rule.permission)
                && covers(&later.rule.pattern, &rule.pattern)
        });
        if let Some(later) = shadow {
            let (kind, message) = if later.rule.action == rule.action {
                (
                    FindingKind::Shadowed,
                    format!(
                        "can never decide: the later rule {} matches everything it matches with the same action; remove it",
                        later.rule
                    ),
                )
            } else {
                (
                    FindingKind::SpecificBeforeGeneric,
                    format!(
                        "never takes effect: the later rule {} matches everything it matches and decides {}; the last matching rule wins, so move this rule after it",
                        later.rule, later.rule.action
                    ),
                )
            };
            findings.push(Finding {
                kind,
                rule: current.clone(),
                related: Some(later.clone()),
                message,
            });
        }
        let known = known_permissions
            .iter()
            .any(|k| wildcard::matches(k, &rule.permission));
        if !known {
            findings.push(Finding {
                kind: FindingKind::UnknownPermission,
                rule: current.clone(),
                related: None,
                message: unknown_permission_message(&rule.permission, known_permissions),
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage() {
        assert!(covers("*", "anything"));
        assert!(covers("git *", "git commit *"));
        assert!(covers("git *", "git"));
        assert!(!covers("git commit *", "git *"));
        assert!(covers("src/*", "src/?.rs"));
        assert!(!covers("src/?.rs", "src/*"));
        assert!(covers("*.env*", "*.env"));
        assert!(!covers("*.env", "*.env.*"));
        assert!(covers("ls *", "ls"));
        assert!(!covers("ls", "ls *"));
        assert!(covers("a?c", "abc"));
    }

    #[test]
    fn tool_names_get_a_hint() {
        let msg = unknown_permission_message("write", BUILTIN_PERMISSIONS);
        assert!(msg.contains("gated by \"edit\""), "{msg}");
        let msg = unknown_permission_message("bsh", BUILTIN_PERMISSIONS);
        assert!(msg.contains("did you mean \"bash\""), "{msg}");
        let msg = unknown_permission_message("wirte", BUILTIN_PERMISSIONS);
        assert!(
            msg.contains("did you mean \"edit\" (the write tool"),
            "{msg}"
        );
        let msg = unknown_permission_message("raed", BUILTIN_PERMISSIONS);
        assert!(msg.contains("did you mean \"read\""), "{msg}");
        let msg = unknown_permission_message("zzzzzz", BUILTIN_PERMISSIONS);
        assert!(msg.contains("never applies"), "{msg}");
    }
}
