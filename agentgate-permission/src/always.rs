//! What an "always" answer stores, said the same way everywhere a person
//! answers: [`PermissionRequest::always_choices`] lists each "always"
//! answer a request offers with exactly the rules the gate will store for
//! it, a short label naming those rules (an ACP option's name, a button)
//! and the same in plain words (the approval page, `agent attach`).
//!
//! The label is made from the stored rules themselves, so what is shown is
//! what is stored: `Always allow bash "rm *"` stores `bash "rm *" allow`,
//! and where that is wider than the asked command the exact choice
//! (`Always allow bash exactly "rm -f src/a.txt"`) stores only the asked
//! patterns.

use serde::{Deserialize, Serialize};

use crate::request::{PermissionRequest, ReplyKind};
use crate::rule::Ruleset;

/// One "always" answer a request offers, with what it stores and how to
/// say so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AlwaysChoice {
    /// The answer that picks it: [`ReplyKind::Always`] or
    /// [`ReplyKind::AlwaysExact`].
    pub kind: ReplyKind,
    /// Exactly the rules the gate adds to the project's approvals when
    /// this answer is given.
    pub rules: Ruleset,
    /// A short name that carries the rules: the permission and each
    /// pattern quoted (Rust string escapes, so control characters show as
    /// escapes), with a plain explanation of a bare `*` in parentheses:
    /// `Always allow bash "rm *"`, `Always allow bash exactly "rm -f a"`,
    /// `Always allow edit "*" (every file edit in this project)`.
    pub label: String,
    /// The same in words, for a page or a terminal: what each pattern
    /// covers and for how long (`every "rm" command, with any arguments:
    /// allowed without asking from now on, in every session of this
    /// project`).
    pub meaning: String,
}

impl PermissionRequest {
    /// The "always" answers this request offers ([`answers`](Self::answers)
    /// lists their kinds), each with the rules it stores, a label naming
    /// them and their meaning in words. Empty when "always" would store
    /// nothing.
    ///
    /// ```
    /// use agentgate_permission::{PermissionRequest, ReplyKind};
    /// let request = PermissionRequest {
    ///     id: "per_1".into(),
    ///     session_id: "s".into(),
    ///     permission: "bash".into(),
    ///     patterns: vec!["rm -f src/a.txt".into()],
    ///     always: vec!["rm *".into()],
    ///     metadata: serde_json::json!({}),
    ///     tool: None,
    /// };
    /// let choices = request.always_choices();
    /// assert_eq!(choices[0].kind, ReplyKind::Always);
    /// assert_eq!(choices[0].label, r#"Always allow bash "rm *""#);
    /// assert_eq!(choices[1].kind, ReplyKind::AlwaysExact);
    /// assert_eq!(choices[1].label, r#"Always allow bash exactly "rm -f src/a.txt""#);
    /// assert_eq!(choices[1].rules, request.exact_rules());
    /// ```
    pub fn always_choices(&self) -> Vec<AlwaysChoice> {
        let answers = self.answers();
        let mut choices = Vec::new();
        if answers.contains(&ReplyKind::Always) {
            choices.push(choice(ReplyKind::Always, self.always_rules(), ""));
        }
        if answers.contains(&ReplyKind::AlwaysExact) {
            choices.push(choice(
                ReplyKind::AlwaysExact,
                self.exact_rules(),
                "exactly ",
            ));
        }
        choices
    }
}

/// The choice storing `rules` (all under one permission).
fn choice(kind: ReplyKind, rules: Ruleset, exactly: &str) -> AlwaysChoice {
    let permission = rules.first().map_or("", |rule| rule.permission.as_str());
    let quoted: Vec<String> = rules.iter().map(|rule| quote(&rule.pattern)).collect();
    let notes: Vec<String> = rules
        .iter()
        .filter(|rule| rule.pattern == "*")
        .map(|rule| everything(&rule.permission))
        .collect();
    let mut label = format!("Always allow {permission} {exactly}{}", quoted.join(", "));
    if !notes.is_empty() {
        label.push_str(&format!(" ({})", notes.join("; ")));
    }
    let covered: Vec<String> = rules
        .iter()
        .map(|rule| describe_pattern(&rule.permission, &rule.pattern))
        .collect();
    let meaning = format!(
        "{}: allowed without asking from now on, in every session of this project",
        covered.join("; ")
    );
    AlwaysChoice {
        kind,
        rules,
        label,
        meaning,
    }
}

/// `text` in double quotes with Rust's string escapes (so `"`, `\`,
/// control characters and invisible format characters show as escapes).
fn quote(text: &str) -> String {
    format!("{text:?}")
}

/// What a bare `*` allows, per permission (the permissions of the built-in
/// tools; any other is named as it is).
const EVERYTHING: &[(&str, &str)] = &[
    ("edit", "every file edit in this project"),
    ("read", "reading every file in this project"),
    ("bash", "every command"),
    ("webfetch", "fetching every URL"),
    ("websearch", "every web search"),
    ("codesearch", "every code search"),
    ("grep", "every content search"),
    ("glob", "every file-name search"),
    ("list", "listing every folder"),
    ("todowrite", "every change to the todo list"),
    ("todoread", "every read of the todo list"),
    ("task", "starting every kind of sub-agent"),
    ("skill", "loading every skill"),
    ("external_directory", "every folder outside this project"),
    ("doom_loop", "repeating every tool call"),
];

/// The plain words for a bare `*` under `permission` (an MCP tool's
/// permission is its name: every call of it).
fn everything(permission: &str) -> String {
    EVERYTHING
        .iter()
        .find(|(name, _)| *name == permission)
        .map_or_else(
            || format!("every {} call", quote(permission)),
            |(_, words)| words.to_string(),
        )
}

/// What an allow rule `permission` / `pattern` covers, in words.
///
/// ```
/// use agentgate_permission::describe_pattern;
/// assert_eq!(describe_pattern("edit", "*"), "every file edit in this project");
/// assert_eq!(describe_pattern("bash", "rm *"), r#"every "rm" command, with any arguments"#);
/// assert_eq!(describe_pattern("external_directory", "/etc/*"), r#"everything under "/etc/", at any depth"#);
/// assert_eq!(describe_pattern("bash", "git status"), r#"exactly "git status""#);
/// ```
pub fn describe_pattern(permission: &str, pattern: &str) -> String {
    if pattern == "*" {
        return everything(permission);
    }
    if let Some(base) = pattern.strip_suffix(" *")
        && !base.contains(['*', '?'])
    {
        return if permission == "bash" {
            format!("every {} command, with any arguments", quote(base))
        } else {
            format!("{} alone or followed by anything", quote(base))
        };
    }
    if let Some(base) = pattern.strip_suffix('*')
        && !base.contains(['*', '?'])
    {
        return if base.ends_with('/') {
            format!("everything under {}, at any depth", quote(base))
        } else {
            format!("everything that starts with {}", quote(base))
        };
    }
    if pattern.contains(['*', '?']) {
        return format!("everything matching {}", quote(pattern));
    }
    format!("exactly {}", quote(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::{Action, Rule};

    fn request(permission: &str, patterns: &[&str], always: &[&str]) -> PermissionRequest {
        PermissionRequest {
            id: "per_1".into(),
            session_id: "s".into(),
            permission: permission.into(),
            patterns: patterns.iter().map(|s| s.to_string()).collect(),
            always: always.iter().map(|s| s.to_string()).collect(),
            metadata: serde_json::json!({}),
            tool: None,
        }
    }

    #[test]
    fn every_permission_in_the_table_is_named_once() {
        for (i, (name, words)) in EVERYTHING.iter().enumerate() {
            assert!(!words.is_empty());
            assert!(
                EVERYTHING[..i].iter().all(|(other, _)| other != name),
                "{name}"
            );
            assert_eq!(describe_pattern(name, "*"), *words);
        }
        assert_eq!(
            describe_pattern("mcp_docs_search", "*"),
            r#"every "mcp_docs_search" call"#
        );
    }

    #[test]
    fn a_bare_star_is_explained_in_the_label() {
        let choices = request("edit", &["src/a.rs"], &["*"]).always_choices();
        assert_eq!(
            choices[0].label,
            r#"Always allow edit "*" (every file edit in this project)"#
        );
        assert!(
            choices[0]
                .meaning
                .starts_with("every file edit in this project: ")
        );
        assert_eq!(choices[1].label, r#"Always allow edit exactly "src/a.rs""#);
        assert_eq!(
            choices[1].rules,
            Ruleset::from(vec![Rule::new("edit", "src/a.rs", Action::Allow)])
        );
    }

    #[test]
    fn no_exact_choice_when_always_is_no_wider_or_the_ask_has_wildcards() {
        let same = request("external_directory", &["/etc/*"], &["/etc/*"]);
        assert_eq!(same.always_choices().len(), 1);
        let globbed = request("bash", &["ls *.rs"], &["ls *"]);
        assert!(globbed.exact_rules().is_empty());
        assert_eq!(globbed.always_choices().len(), 1);
        // A backslash matches `/` too: not exact.
        let slashed = request("bash", &["rm a\\b"], &["rm *"]);
        assert!(slashed.exact_rules().is_empty());
        assert_eq!(slashed.always_choices().len(), 1);
        let none = request("bash", &["rm -rf x"], &[]);
        assert!(none.always_choices().is_empty());
    }

    #[test]
    fn control_characters_are_escaped_in_labels() {
        let choices = request("bash", &["echo \u{1b}[8m"], &["echo *"]).always_choices();
        assert!(choices.iter().all(|c| !c.label.contains('\u{1b}')));
        assert!(choices[1].label.contains(r"\u{1b}"));
    }
}
