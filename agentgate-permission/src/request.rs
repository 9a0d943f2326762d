//! What a permission request and its answer look like (§1, §6).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rule::{Action, Rule, Ruleset};
use crate::wildcard::is_literal;

/// The tool call a request was made for, so a UI can show it next to the call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolCallRef {
    /// The assistant message that holds the call.
    pub message_id: String,
    /// The provider's id of the tool call.
    pub call_id: String,
}

/// What a caller (a tool, through its context) hands to
/// `PermissionGate::ask`: the request plus the ruleset to evaluate it against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AskRequest {
    /// Request id; a fresh `per_…` id is generated when `None`.
    pub id: Option<String>,
    /// The session asking.
    pub session_id: String,
    /// The permission name (`bash`, `edit`, `external_directory` ...).
    pub permission: String,
    /// The concrete patterns to check (commands, relative paths, URLs ...).
    pub patterns: Vec<String>,
    /// The patterns an "always" answer approves from then on.
    pub always: Vec<String>,
    /// Free-form data for the approval UI (a diff, the command ...).
    pub metadata: serde_json::Value,
    /// The tool call this request belongs to, if any.
    pub tool: Option<ToolCallRef>,
    /// The caller's rules, usually `merge(agent.permission, session.permission)`.
    pub ruleset: Ruleset,
    /// Rulesets that bound this one: each pattern gets the stricter answer
    /// of `ruleset` and every ceiling (`deny` over `ask` over `allow`). The
    /// task tool sets the rules of the sessions above a sub-agent here, so
    /// a child never has more power than its parents (a deliberate
    /// difference from opencode, `subagent_ceiling` in `docs/deviations.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<Ruleset>,
    /// Fail with `Rejected` when no answer came within this time. `None`
    /// (the default) waits forever, as opencode does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
}

impl AskRequest {
    /// A request for `permission` on `patterns` from `session_id`, with an
    /// empty `always` list, no metadata and an empty ruleset.
    pub fn new<I, S>(
        session_id: impl Into<String>,
        permission: impl Into<String>,
        patterns: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AskRequest {
            session_id: session_id.into(),
            permission: permission.into(),
            patterns: patterns.into_iter().map(Into::into).collect(),
            metadata: serde_json::Value::Object(Default::default()),
            ..Default::default()
        }
    }

    /// Sets the patterns an "always" answer approves.
    pub fn always<I, S>(mut self, always: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always = always.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the ruleset the request is evaluated against.
    pub fn ruleset(mut self, ruleset: Ruleset) -> Self {
        self.ruleset = ruleset;
        self
    }

    /// Sets the rulesets that bound [`ruleset`](Self::ruleset) (see
    /// [`AskRequest::ceilings`]).
    pub fn ceilings(mut self, ceilings: Vec<Ruleset>) -> Self {
        self.ceilings = ceilings;
        self
    }

    /// Sets the request id (otherwise one is generated).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the metadata shown to the approval UI.
    pub fn metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the tool call reference.
    pub fn tool(mut self, message_id: impl Into<String>, call_id: impl Into<String>) -> Self {
        self.tool = Some(ToolCallRef {
            message_id: message_id.into(),
            call_id: call_id.into(),
        });
        self
    }

    /// Sets a timeout after which the ask fails with `Rejected`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// The kinds of answer a host can give, without feedback text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ReplyKind {
    /// Allow this request only.
    Once,
    /// Allow this request and remember its `always` patterns.
    Always,
    /// Allow this request and remember exactly its asked patterns
    /// ([`PermissionRequest::exact_rules`]), offered where "always" would
    /// remember more than was asked.
    #[serde(rename = "always_exact")]
    AlwaysExact,
    /// Refuse it (with optional feedback).
    Reject,
    /// Allow this request once and grant the directories it names to the
    /// OS sandbox for this call (offered only where
    /// [`PermissionRequest::offers_grant`]).
    Grant,
}

/// The metadata key (`true`) by which a tool says a request's directories
/// can be granted to its OS sandbox with [`Reply::Grant`].
pub const SANDBOX_GRANT_KEY: &str = "sandbox_grant";

/// How an allowed request was allowed ([`PermissionGate::ask_answer`](crate::PermissionGate::ask_answer)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Allowed {
    /// By the rules or an earlier "always" approval, without a prompt.
    ByRules,
    /// By a `once` answer (an approver that allows everything answers so).
    Once,
    /// By an `always` answer, or the cascade of one.
    Always,
    /// By a [`Reply::Grant`]: allowed once, and the host granted the
    /// request's directories to the OS sandbox for this call.
    Grant,
}

/// A pending request as published to hosts (`permission.asked`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    /// Unique id (`per_…` unless the caller chose one).
    pub id: String,
    /// The session asking.
    pub session_id: String,
    /// The permission name.
    pub permission: String,
    /// The patterns that need approval.
    pub patterns: Vec<String>,
    /// The patterns an "always" answer approves.
    pub always: Vec<String>,
    /// Free-form data for the approval UI.
    pub metadata: serde_json::Value,
    /// The tool call this request belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolCallRef>,
}

impl PermissionRequest {
    /// The answers that mean something for this request: `always` is only
    /// offered when the request has `always` patterns, because otherwise it
    /// would approve nothing beyond this one call; `always_exact` only next
    /// to `always`, when the `always` rules are wider than the asked
    /// patterns and every asked pattern can be stored as itself
    /// ([`exact_rules`](Self::exact_rules)).
    /// `grant` is offered only when the request
    /// [offers it](Self::offers_grant).
    pub fn answers(&self) -> Vec<ReplyKind> {
        let mut answers = vec![ReplyKind::Once];
        if self.offers_grant() {
            answers.push(ReplyKind::Grant);
        }
        if self.always.iter().any(|p| is_storable_always_pattern(p)) {
            answers.push(ReplyKind::Always);
            if self.offers_exact() {
                answers.push(ReplyKind::AlwaysExact);
            }
        }
        answers.push(ReplyKind::Reject);
        answers
    }

    /// Whether a [`Reply::Grant`] means something for this request: its
    /// tool put `"sandbox_grant": true` in the metadata
    /// ([`SANDBOX_GRANT_KEY`]; the bash tool does for the
    /// `external_directory` requests of a sandboxed command). A grant to a
    /// request that does not offer one counts as `once`.
    pub fn offers_grant(&self) -> bool {
        self.metadata.get(SANDBOX_GRANT_KEY) == Some(&serde_json::Value::Bool(true))
    }

    /// The rules an "always" answer would add to the approved list: one
    /// `allow` rule per `always` pattern, under this request's permission,
    /// leaving out the patterns [`is_storable_always_pattern`] refuses (so
    /// glob characters that came from a command cannot widen an approval).
    pub fn always_rules(&self) -> Ruleset {
        self.always
            .iter()
            .filter(|pattern| is_storable_always_pattern(pattern))
            .map(|pattern| Rule::new(self.permission.as_str(), pattern.as_str(), Action::Allow))
            .collect()
    }

    /// The rules a [`Reply::AlwaysExact`] answer would add: one `allow`
    /// rule per asked pattern, matching that pattern and nothing else. Empty
    /// when an asked pattern contains `*` or `?` (the wildcard language has
    /// no escape, so such a pattern cannot be stored as itself) or a
    /// backslash (matching takes it for `/`, so `rm a\b` would also allow
    /// `rm a/b`), or there are no patterns.
    pub fn exact_rules(&self) -> Ruleset {
        let exact = |p: &String| is_literal(p) && !p.contains('\\');
        if self.patterns.is_empty() || !self.patterns.iter().all(exact) {
            return Ruleset::new();
        }
        let mut rules = Ruleset::new();
        for pattern in &self.patterns {
            let rule = Rule::new(self.permission.as_str(), pattern.as_str(), Action::Allow);
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
        rules
    }

    /// Whether [`Reply::AlwaysExact`] is worth offering: the asked patterns
    /// can be stored as themselves, and the `always` rules would allow
    /// something beyond them.
    pub fn offers_exact(&self) -> bool {
        let exact = self.exact_rules();
        !exact.is_empty() && self.always_rules().iter().any(|rule| !exact.contains(rule))
    }
}

/// Whether an "always" pattern may become a stored approval: it has at most
/// one wildcard, a `*` as its last character (`*`, `git push *`,
/// `/srv/data/*`, `mcp:docs:*`), or none at all (`my-skill`).
///
/// Tools build "always" patterns from what the model sent (a command's
/// first words, a directory), and the wildcard language has no escape, so
/// a `*` or `?` inside those words would approve far more than the request
/// showed: "always" on `git * x` would store `git * *`, which allows
/// `git push --force`. Such patterns are refused, and "always" on them
/// approves only the request at hand (a deviation from opencode, which
/// stores them).
///
/// ```
/// use agentgate_permission::is_storable_always_pattern;
/// assert!(is_storable_always_pattern("git push *"));
/// assert!(is_storable_always_pattern("*"));
/// assert!(!is_storable_always_pattern("git * *"));
/// assert!(!is_storable_always_pattern("/tmp/a?/*"));
/// ```
pub fn is_storable_always_pattern(pattern: &str) -> bool {
    let fixed = pattern.strip_suffix('*').unwrap_or(pattern);
    !fixed.contains(['*', '?'])
}

/// A host's answer to a pending request (§6.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Reply {
    /// Allow this request only; nothing is remembered.
    Once,
    /// Allow this request and approve its `always` patterns for every
    /// session of the project; pending siblings they cover are resolved too.
    Always,
    /// Allow this request and approve exactly its asked patterns for every
    /// session of the project ([`PermissionRequest::exact_rules`]), not the
    /// wider `always` patterns: "always" on `rm -f src/a.txt` then allows
    /// that command only, not `rm -rf src`. Counts as `once` for a request
    /// whose patterns cannot be stored as themselves (they contain `*` or
    /// `?`); pending siblings the new rules cover are resolved too.
    #[serde(rename = "always_exact")]
    AlwaysExact,
    /// Allow this request once **and** grant the directories it names to
    /// the tool's OS sandbox for this one call (write access under
    /// `workspace-write`). Only a person should answer this, as a choice
    /// separate from `once`: approvers that answer by themselves (an
    /// `--auto` mode, `AllowAll`) answer `once`, which
    /// never widens a sandbox. Counts as `once` for a request that does
    /// not [offer a grant](PermissionRequest::offers_grant); nothing is
    /// remembered.
    Grant,
    /// Refuse this request and every other pending request of its session.
    /// Non-empty feedback turns this request's error into `Corrected`.
    Reject {
        /// Feedback for the model; `None` or empty means a plain rejection.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
}

impl Reply {
    /// A rejection without feedback.
    pub fn reject() -> Self {
        Reply::Reject { feedback: None }
    }

    /// A rejection with feedback for the model.
    pub fn correct(feedback: impl Into<String>) -> Self {
        Reply::Reject {
            feedback: Some(feedback.into()),
        }
    }

    /// The kind of this reply.
    pub fn kind(&self) -> ReplyKind {
        match self {
            Reply::Once => ReplyKind::Once,
            Reply::Always => ReplyKind::Always,
            Reply::AlwaysExact => ReplyKind::AlwaysExact,
            Reply::Reject { .. } => ReplyKind::Reject,
            Reply::Grant => ReplyKind::Grant,
        }
    }
}
