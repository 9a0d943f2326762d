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
//!   by another permission (`write` is gated by `edit`). Known names may be
//!   wildcards: `github_*` for the tools of an MCP server called `github`.
//! - **Bash allow-all with denies** (a warning): `"bash": {"*": "allow",
//!   "rm *": "deny"}` looks safe, but a deny list only stops the spellings it
//!   names; the repository's `docs/security.md` advises an allow list.
//!
//! [`lint_with`] takes [`LintOptions`]: the known permissions, and which
//! layers are built in. Findings about rules of a built-in layer are left
//! out (the user cannot change those rules), but built-in rules still count
//! when they override a user's rule.
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
use crate::rule::Action;
use crate::ruleset::tool_permission;
use crate::wildcard;

/// Permission names used by the built-in tools and the agent loop
/// (`bash_opaque` is what the bash tool asks for a command line it cannot
/// see through).
pub const BUILTIN_PERMISSIONS: &[&str] = &[
    "bash",
    "bash_opaque",
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
    /// `bash * allow` followed by bash deny rules: a deny list on top of an
    /// allow-all, which misses every spelling it does not name.
    BashAllowAllWithDeny,
}

impl FindingKind {
    /// How serious findings of this kind are.
    pub fn severity(self) -> Severity {
        match self {
            FindingKind::BashAllowAllWithDeny => Severity::Warning,
            FindingKind::Shadowed
            | FindingKind::SpecificBeforeGeneric
            | FindingKind::UnknownPermission => Severity::Error,
        }
    }

    fn label(self) -> &'static str {
        match self {
            FindingKind::Shadowed => "shadowed",
            FindingKind::SpecificBeforeGeneric => "specific-before-generic",
            FindingKind::UnknownPermission => "unknown-permission",
            FindingKind::BashAllowAllWithDeny => "bash-allow-all-with-deny",
        }
    }
}

/// How serious a [`Finding`] is.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The rules do not do what they say: a rule never applies, or names
    /// no permission.
    Error,
    /// The rules do what they say, but the pattern is a known risk.
    Warning,
}

/// One lint finding.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The kind of problem.
    pub kind: FindingKind,
    /// How serious it is (the kind's [`FindingKind::severity`]).
    pub severity: Severity,
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
        let warning = match self.severity {
            Severity::Warning => "warning: ",
            Severity::Error => "",
        };
        write!(
            f,
            "{warning}{}: {}: {}",
            self.kind.label(),
            self.rule,
            self.message
        )
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
            "permission \"{permission}\" matches no known permission (known: {}); unless it names an MCP or custom tool, this rule never applies — if it does, declare that tool as a known permission (`LintOptions::known`; `agent permission lint --known NAME`; an MCP server in the config's `mcp` key is known already)",
            known.join(", ")
        ),
    }
}

/// What [`lint_with`] knows besides the rules themselves.
///
/// ```
/// use agentgate_permission::{lint_with, Action, Layered, LintOptions, Rule, Ruleset};
/// let layers = Layered::new()
///     .with("agent:build", Ruleset::from(vec![
///         Rule::new("question", "*", Action::Deny),
///         Rule::new("question", "*", Action::Allow),
///     ]))
///     .with("user", Ruleset::from(vec![Rule::new("github_create_issue", "*", Action::Ask)]));
/// let options = LintOptions::new().builtin_layer("agent:build").known("github_*");
/// // The built-in layer's own overlap is not the user's to fix, and the
/// // MCP server's tools are known.
/// assert!(lint_with(&layers, &options).is_empty());
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintOptions {
    /// Permission names requests can carry, or wildcards over them
    /// (`github_*` for an MCP server's tools).
    pub known: Vec<String>,
    /// Names of the layers that are built in rather than written by the
    /// user: their rules are never the subject of a finding.
    pub builtin_layers: Vec<String>,
}

impl Default for LintOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl LintOptions {
    /// [`BUILTIN_PERMISSIONS`] as the known permissions, no built-in layers.
    pub fn new() -> Self {
        LintOptions {
            known: BUILTIN_PERMISSIONS.iter().map(|k| k.to_string()).collect(),
            builtin_layers: Vec::new(),
        }
    }

    /// Exactly `known` as the known permissions (no built-in ones added).
    pub fn with_known<S: AsRef<str>>(known: &[S]) -> Self {
        LintOptions {
            known: known.iter().map(|k| k.as_ref().to_string()).collect(),
            builtin_layers: Vec::new(),
        }
    }

    /// Adds a known permission name or wildcard (an MCP server's
    /// `<server>_*`, a custom tool's name).
    pub fn known(mut self, name: impl Into<String>) -> Self {
        self.known.push(name.into());
        self
    }

    /// Marks the layer called `name` as built in.
    pub fn builtin_layer(mut self, name: impl Into<String>) -> Self {
        self.builtin_layers.push(name.into());
        self
    }

    fn is_builtin(&self, rule: &RuleRef) -> bool {
        self.builtin_layers.contains(&rule.layer)
    }

    /// Whether some known permission can carry a rule for `permission`.
    fn knows(&self, permission: &str) -> bool {
        self.known
            .iter()
            .any(|k| wildcard::matches(k, permission) || covers(k, permission))
    }
}

/// Lints a layered ruleset. `known_permissions` are the permission names
/// requests can carry (for example [`BUILTIN_PERMISSIONS`] plus the MCP
/// tools a host registers). Findings come in rule order. Every layer counts
/// as the user's; [`lint_with`] can mark some as built in.
pub fn lint(layered: &Layered, known_permissions: &[&str]) -> Vec<Finding> {
    lint_with(layered, &LintOptions::with_known(known_permissions))
}

/// Lints a layered ruleset with [`LintOptions`]. Findings come in rule
/// order, and only rules of layers that are not built in are their subject.
pub fn lint_with(layered: &Layered, options: &LintOptions) -> Vec<Finding> {
    let rules: Vec<RuleRef> = layered.rule_refs().collect();
    let known: Vec<&str> = options.known.iter().map(String::as_str).collect();
    let mut findings = Vec::new();
    for (i, current) in rules.iter().enumerate() {
        if options.is_builtin(current) {
            continue;
        }
        let rule = &current.rule;
        let later_rules = &rules[i + 1..];
        let shadow = later_rules.iter().find(|later| shadows(later, current));
        if let Some(later) = shadow {
            let kind = if later.rule.action == rule.action {
                FindingKind::Shadowed
            } else {
                FindingKind::SpecificBeforeGeneric
            };
            let message = shadow_message(kind, later, options.is_builtin(later));
            findings.push(finding(kind, current, Some(later), message));
        } else if let Some(message) = allow_all_with_deny(current, later_rules, options) {
            findings.push(finding(
                FindingKind::BashAllowAllWithDeny,
                current,
                None,
                message,
            ));
        }
        if !options.knows(&rule.permission) {
            findings.push(finding(
                FindingKind::UnknownPermission,
                current,
                None,
                unknown_permission_message(&rule.permission, &known),
            ));
        }
    }
    findings
}

fn finding(
    kind: FindingKind,
    rule: &RuleRef,
    related: Option<&RuleRef>,
    message: String,
) -> Finding {
    Finding {
        kind,
        severity: kind.severity(),
        rule: rule.clone(),
        related: related.cloned(),
        message,
    }
}

/// Whether `later` matches every request `earlier` matches.
fn shadows(later: &RuleRef, earlier: &RuleRef) -> bool {
    covers(&later.rule.permission, &earlier.rule.permission)
        && covers(&later.rule.pattern, &earlier.rule.pattern)
}

fn shadow_message(kind: FindingKind, later: &RuleRef, builtin: bool) -> String {
    match (kind, builtin) {
        (FindingKind::Shadowed, false) => format!(
            "can never decide: the later rule {} matches everything it matches with the same action; remove it",
            later.rule
        ),
        (FindingKind::Shadowed, true) => format!(
            "can never decide: the built-in rule {}, which comes after the config's rules, matches everything it matches with the same action; remove it",
            later.rule
        ),
        (_, false) => format!(
            "never takes effect: the later rule {} matches everything it matches and decides {}; the last matching rule wins, so move this rule after it",
            later.rule, later.rule.action
        ),
        (_, true) => format!(
            "never takes effect: the built-in rule {}, which comes after the config's rules, matches everything it matches and decides {}",
            later.rule, later.rule.action
        ),
    }
}

/// For a user's `bash * allow` followed by bash deny rules, the warning;
/// `None` for any other rule.
fn allow_all_with_deny(
    current: &RuleRef,
    later_rules: &[RuleRef],
    options: &LintOptions,
) -> Option<String> {
    let rule = &current.rule;
    if rule.permission != "bash" || rule.pattern != "*" || rule.action != Action::Allow {
        return None;
    }
    // Only the denies that take effect: one a later rule overrides is
    // reported as such already.
    let denies: Vec<&RuleRef> = later_rules
        .iter()
        .enumerate()
        .filter(|(j, deny)| {
            !options.is_builtin(deny)
                && deny.rule.action == Action::Deny
                && wildcard::matches("bash", &deny.rule.permission)
                && !later_rules[j + 1..].iter().any(|l| shadows(l, deny))
        })
        .map(|(_, deny)| deny)
        .collect();
    let first = denies.first()?;
    let count = match denies.len() {
        1 => "1 later bash rule".to_string(),
        n => format!("{n} later bash rules"),
    };
    Some(format!(
        "allows every command except those denied by {count} (first: {}); a deny list only stops the spellings it names, and the same effect has many (`command rm`, `find -delete`, a script the command writes and runs): keep bash \"*\" at ask and allow the commands you need by name (see docs/security.md)",
        first.rule
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rule, Ruleset};

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

    fn rules(list: &[(&str, &str, Action)]) -> Ruleset {
        list.iter().map(|(p, q, a)| Rule::new(*p, *q, *a)).collect()
    }

    fn kinds(findings: &[Finding]) -> Vec<(FindingKind, String, usize)> {
        findings
            .iter()
            .map(|f| (f.kind, f.rule.layer.clone(), f.rule.index))
            .collect()
    }

    #[test]
    fn builtin_layers_are_never_the_subject() {
        use Action::*;
        let layers = Layered::new()
            .with(
                "agent:build",
                rules(&[
                    ("*", "*", Allow),
                    ("question", "*", Deny),
                    ("question", "*", Allow),
                ]),
            )
            .with(
                "user",
                rules(&[
                    ("external_directory", "/d/tool-output/*", Allow),
                    ("bsh", "*", Deny),
                ]),
            )
            .with(
                "agent:build:final",
                rules(&[("external_directory", "/d/tool-output/*", Allow)]),
            );
        let options = LintOptions::new()
            .builtin_layer("agent:build")
            .builtin_layer("agent:build:final");
        let findings = lint_with(&layers, &options);
        // The user's rule that the final built-in rule repeats is still
        // reported, with a message that does not ask to move a built-in rule.
        assert_eq!(
            kinds(&findings),
            [
                (FindingKind::Shadowed, "user".to_string(), 0),
                (FindingKind::UnknownPermission, "user".to_string(), 1),
            ]
        );
        assert!(
            findings[0].message.contains("the built-in rule"),
            "{}",
            findings[0].message
        );
        // Without the options every layer is the user's, as before.
        assert_eq!(lint(&layers, BUILTIN_PERMISSIONS).len(), 3);
    }

    #[test]
    fn wildcard_known_names_cover_mcp_tools() {
        let options = LintOptions::new().known("github_*");
        assert!(options.knows("github_create_issue"));
        assert!(options.knows("github_*"));
        assert!(options.knows("*"));
        assert!(!options.knows("gitlab_*"));
        assert!(!options.knows("github"));
    }

    #[test]
    fn bash_allow_all_with_denies_is_a_warning() {
        use Action::*;
        let user = |r: &[(&str, &str, Action)]| Layered::new().with("user", rules(r));
        let findings = lint(
            &user(&[
                ("bash", "*", Allow),
                ("bash", "rm *", Deny),
                ("bash", "git push *", Deny),
            ]),
            BUILTIN_PERMISSIONS,
        );
        assert_eq!(
            kinds(&findings),
            [(FindingKind::BashAllowAllWithDeny, "user".to_string(), 0)]
        );
        assert_eq!(findings[0].severity, Severity::Warning);
        let text = findings[0].to_string();
        assert!(
            text.starts_with("warning: bash-allow-all-with-deny: "),
            "{text}"
        );
        assert!(
            text.contains("denied by 2 later bash rules") && text.contains("docs/security.md"),
            "{text}"
        );

        // An allow list, a deny that never takes effect (reported as such),
        // and a deny-all that overrides the allow are not this warning.
        for case in [
            &[
                ("bash", "*", Ask),
                ("bash", "git *", Allow),
                ("bash", "git push *", Deny),
            ][..],
            &[("bash", "rm *", Deny), ("bash", "*", Allow)][..],
            &[
                ("bash", "*", Allow),
                ("bash", "rm *", Deny),
                ("bash", "rm *", Allow),
            ][..],
            &[("bash", "*", Allow), ("edit", "*.env", Deny)][..],
        ] {
            let findings = lint(&user(case), BUILTIN_PERMISSIONS);
            assert!(
                findings
                    .iter()
                    .all(|f| f.kind != FindingKind::BashAllowAllWithDeny),
                "{case:?}: {findings:?}"
            );
        }
        // The built-in `* allow` of the defaults is not the user's allow-all.
        let layers = Layered::new()
            .with("agent:build", rules(&[("*", "*", Allow)]))
            .with("user", rules(&[("bash", "rm *", Deny)]));
        let options = LintOptions::new().builtin_layer("agent:build");
        assert!(lint_with(&layers, &options).is_empty());
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
        assert!(LintOptions::new().knows("bash_opaque"));
        let msg = unknown_permission_message("zzzzzz", BUILTIN_PERMISSIONS);
        assert!(msg.contains("never applies"), "{msg}");
    }
}
