//! [`PermissionPreset`]: named permission defaults an embedder picks with
//! [`EngineSetup::preset`](super::EngineSetup::preset) (in the facade,
//! `agentgate::CodingAgentBuilder::permission_preset`).
//!
//! The built-in agents start from opencode's defaults, which allow nearly
//! everything (`"*": "allow"`; only `doom_loop`, paths outside the project
//! and `.env` files ask). An `Approver` is then never called unless the
//! configuration says `ask`. A preset is a layer of rules placed right after
//! those shared defaults, so that everything above it keeps its meaning:
//! each agent's own rules (plan still denies edits), then the user's
//! configuration (a project's `"git status": "allow"` still allows), then
//! the agent's configured rules and the session's.

use agentgate_permission::{Action, Rule, Ruleset, decide};

use crate::agents::{AgentEnvironment, Agents, default_permission};

/// Permission defaults for the agents an engine built with
/// [`EngineBuilder::from_config`](super::EngineBuilder::from_config) runs.
///
/// ```
/// use agentgate_core::PermissionPreset;
/// use agentgate_permission::{Action, evaluate};
///
/// let rules = PermissionPreset::AskBeforeSideEffects.rules();
/// let base = agentgate_permission::Ruleset::from(vec![
///     agentgate_permission::Rule::new("*", "*", Action::Allow),
/// ]);
/// let ask = |permission: &str| evaluate(permission, "*", &[&base, &rules]).action;
/// assert_eq!(ask("edit"), Action::Ask);
/// assert_eq!(ask("github_create_issue"), Action::Ask); // an MCP tool
/// assert_eq!(ask("grep"), Action::Allow);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionPreset {
    /// opencode's defaults, unchanged (the default): every tool is allowed
    /// except what the configuration restricts; `doom_loop`, paths outside
    /// the project and `.env` files ask.
    #[default]
    OpencodeDefaults,
    /// Ask before every side effect, as the Claude Agent SDK's `default`
    /// permission mode does: edits (`edit`, which gates write and patch
    /// too), commands (`bash`), the network (`webfetch`, `websearch`,
    /// `codesearch`), MCP tools and custom tools (any permission not listed
    /// here) ask. Reading and searching (`read`, `glob`, `grep`, `list`,
    /// `lsp`), the todo list, skills and sub-agents (whose own tools ask in
    /// turn) do not. Rules of the configuration still decide over the
    /// preset, and deny rules stay denies.
    AskBeforeSideEffects,
}

/// Permissions the [`PermissionPreset::AskBeforeSideEffects`] preset leaves
/// allowed: they read or organise, and change nothing outside the session.
const QUIET: &[&str] = &["glob", "grep", "list", "lsp", "todowrite", "skill", "task"];

/// The built-in permissions with side effects; an agent's own rules that
/// allow them (explore allows `bash` and `webfetch`) are made to ask again.
const SIDE_EFFECTS: &[&str] = &["edit", "bash", "webfetch", "websearch", "codesearch"];

impl PermissionPreset {
    /// The preset's layer: the rules placed right after the shared
    /// defaults' first rule, `"*": "allow"` (empty for
    /// [`OpencodeDefaults`](Self::OpencodeDefaults)).
    pub fn rules(self) -> Ruleset {
        match self {
            PermissionPreset::OpencodeDefaults => Ruleset::default(),
            PermissionPreset::AskBeforeSideEffects => {
                std::iter::once(Rule::new("*", "*", Action::Ask))
                    .chain(QUIET.iter().map(|p| Rule::new(*p, "*", Action::Allow)))
                    .collect()
            }
        }
    }

    /// Layers the preset into every agent's ruleset: [`rules`](Self::rules)
    /// after the shared defaults' `"*": "allow"` (the rest of the defaults
    /// still follow: `.env` reads ask, `question` and the plan tools stay
    /// denied where they were), and, after a built-in agent's own rules,
    /// an ask for each side-effect permission those rules allow.
    pub(crate) fn apply(self, agents: &mut Agents, env: &AgentEnvironment) {
        let layer = self.rules();
        if layer.is_empty() {
            return;
        }
        let defaults = default_permission(env);
        let builtin = Agents::builtin(env, &agentgate_permission::PermissionConfig::default());
        agents.map_permissions(|agent| {
            let rules = &agent.permission;
            // Every agent's ruleset starts with the shared defaults; one that
            // does not (never built by `Agents`) gets the layer first, where
            // everything else still overrides it.
            let at = if rules.0.starts_with(&defaults.0) {
                1
            } else {
                0
            };
            // The end of a built-in agent's own rules: its ruleset without a
            // user configuration, less the final tool-output allow.
            let own_end = builtin
                .get(&agent.name)
                .filter(|_| agent.native)
                .map(|b| b.permission.len().saturating_sub(1))
                .filter(|end| {
                    *end >= at && rules.0.get(..*end) == builtin_prefix(&builtin, &agent.name, *end)
                })
                .unwrap_or(at);
            let mut out: Vec<Rule> = rules.0[..at].to_vec();
            out.extend(layer.iter().cloned());
            out.extend(rules.0[at..own_end].iter().cloned());
            let so_far = Ruleset::from(out.clone());
            out.extend(
                SIDE_EFFECTS
                    .iter()
                    .filter(|p| decide(p, "*", &[&so_far]) == Action::Allow)
                    .map(|p| Rule::new(*p, "*", Action::Ask)),
            );
            out.extend(rules.0[own_end..].iter().cloned());
            Ruleset::from(out)
        });
    }
}

/// The first `end` rules of built-in agent `name` without user rules.
fn builtin_prefix<'a>(builtin: &'a Agents, name: &str, end: usize) -> Option<&'a [Rule]> {
    builtin.get(name).and_then(|b| b.permission.0.get(..end))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use agentgate_permission::PermissionConfig;
    use indexmap::IndexMap;

    fn agents(user: &str) -> (Agents, AgentEnvironment) {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let user: PermissionConfig = serde_json::from_str(user).unwrap();
        let mut agents = Agents::from_config(&env, &user, &IndexMap::new(), None);
        PermissionPreset::AskBeforeSideEffects.apply(&mut agents, &env);
        (agents, env)
    }

    #[test]
    fn build_asks_before_side_effects_only() {
        let (agents, _) = agents("{}");
        let build = agents.get("build").unwrap();
        for (permission, pattern) in [
            ("edit", "src/lib.rs"),
            ("bash", "ls"),
            ("webfetch", "https://example.com"),
            ("websearch", "rust"),
            ("codesearch", "tokio"),
            ("github_create_issue", "*"),
            ("deploy", "*"),
            ("read", ".env"),
        ] {
            assert_eq!(
                build.decide(permission, pattern),
                Action::Ask,
                "{permission}"
            );
        }
        for (permission, pattern) in [
            ("read", "src/lib.rs"),
            ("glob", "**/*.rs"),
            ("grep", "fn main"),
            ("list", "src"),
            ("todowrite", "*"),
            ("task", "explore"),
            ("question", "*"),
            ("external_directory", "/d/tool-output/x"),
        ] {
            assert_eq!(
                build.decide(permission, pattern),
                Action::Allow,
                "{permission}"
            );
        }
    }

    #[test]
    fn agents_own_denies_stay_and_their_allows_ask() {
        let (agents, _) = agents("{}");
        let plan = agents.get("plan").unwrap();
        assert_eq!(plan.decide("edit", "src/lib.rs"), Action::Deny);
        assert_eq!(plan.decide("edit", ".opencode/plans/p.md"), Action::Allow);
        let explore = agents.get("explore").unwrap();
        assert_eq!(explore.decide("bash", "ls"), Action::Ask);
        assert_eq!(explore.decide("webfetch", "https://x"), Action::Ask);
        assert_eq!(explore.decide("edit", "a.rs"), Action::Deny);
        assert_eq!(explore.decide("grep", "x"), Action::Allow);
        let general = agents.get("general").unwrap();
        assert_eq!(general.decide("question", "*"), Action::Deny);
        assert_eq!(general.decide("todowrite", "*"), Action::Deny);
        assert_eq!(general.decide("plan_enter", "*"), Action::Deny);
    }

    #[test]
    fn the_configuration_decides_over_the_preset() {
        let (agents, _) = agents(
            r#"{"bash": {"git status*": "allow", "rm *": "deny"}, "edit": {"*.md": "allow"}}"#,
        );
        let build = agents.get("build").unwrap();
        assert_eq!(build.decide("bash", "git status"), Action::Allow);
        assert_eq!(build.decide("bash", "rm -rf x"), Action::Deny);
        assert_eq!(build.decide("bash", "cargo test"), Action::Ask);
        assert_eq!(build.decide("edit", "README.md"), Action::Allow);
        assert_eq!(build.decide("edit", "src/lib.rs"), Action::Ask);
    }

    #[test]
    fn opencode_defaults_change_nothing() {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let plain = Agents::builtin(&env, &PermissionConfig::default());
        let mut agents = plain.clone();
        PermissionPreset::OpencodeDefaults.apply(&mut agents, &env);
        assert_eq!(agents, plain);
        assert_eq!(
            plain.get("build").unwrap().decide("bash", "rm -rf /"),
            Action::Allow
        );
    }
}
