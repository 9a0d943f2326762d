//! The built-in agents (§9.1, §9.2): the shared default rules, each
//! agent's own rules, and the table of names, modes and descriptions.

use agentgate_permission::{Action, Rule, Ruleset};

use super::agent::{Agent, AgentMode};
use super::environment::AgentEnvironment;

fn rule(permission: &str, pattern: &str, action: Action) -> Rule {
    Rule::new(permission, pattern, action)
}

/// The shared defaults every built-in agent starts from (§9.1), in order.
pub fn default_permission(env: &AgentEnvironment) -> Ruleset {
    let mut rules = vec![
        rule("*", "*", Action::Allow),
        rule("doom_loop", "*", Action::Ask),
        rule("external_directory", "*", Action::Ask),
    ];
    rules.extend(
        env.whitelist()
            .iter()
            .map(|d| rule("external_directory", d, Action::Allow)),
    );
    rules.extend([
        rule("question", "*", Action::Deny),
        rule("plan_enter", "*", Action::Deny),
        rule("plan_exit", "*", Action::Deny),
        rule("read", "*", Action::Allow),
        rule("read", "*.env", Action::Ask),
        rule("read", "*.env.*", Action::Ask),
        rule("read", "*.env.example", Action::Allow),
    ]);
    Ruleset::from(rules)
}

/// `path.relative(from, to)` for absolute POSIX-style paths.
pub fn relative_path(from: &str, to: &str) -> String {
    let parts = |p: &str| -> Vec<String> {
        p.replace('\\', "/")
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_string)
            .collect()
    };
    let (from, to) = (parts(from), parts(to));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(to[common..].iter().map(String::as_str));
    out.join("/")
}

fn own_rules(name: &str, env: &AgentEnvironment) -> Ruleset {
    let rules = match name {
        "build" => vec![
            rule("question", "*", Action::Allow),
            rule("plan_enter", "*", Action::Allow),
        ],
        "plan" => {
            let plans = format!("{}/plans", env.data_dir);
            vec![
                rule("question", "*", Action::Allow),
                rule("plan_exit", "*", Action::Allow),
                rule("task", "general", Action::Deny),
                rule("external_directory", &format!("{plans}/*"), Action::Allow),
                rule("edit", "*", Action::Deny),
                rule("edit", ".opencode/plans/*.md", Action::Allow),
                rule(
                    "edit",
                    &relative_path(&env.worktree, &format!("{plans}/*.md")),
                    Action::Allow,
                ),
            ]
        }
        "general" => vec![rule("todowrite", "*", Action::Deny)],
        "explore" => {
            let mut rules = vec![rule("*", "*", Action::Deny)];
            rules.extend(
                [
                    "grep",
                    "glob",
                    "list",
                    "bash",
                    "webfetch",
                    "websearch",
                    "read",
                ]
                .map(|p| rule(p, "*", Action::Allow)),
            );
            rules.push(rule("external_directory", "*", Action::Ask));
            rules.extend(
                env.whitelist()
                    .iter()
                    .map(|d| rule("external_directory", d, Action::Allow)),
            );
            rules
        }
        _ => vec![rule("*", "*", Action::Deny)],
    };
    Ruleset::from(rules)
}

const BUILTIN: &[(&str, AgentMode, bool, &str)] = &[
    (
        "build",
        AgentMode::Primary,
        false,
        "The default agent. Executes tools based on configured permissions.",
    ),
    (
        "plan",
        AgentMode::Primary,
        false,
        "Plan mode. Disallows all edit tools.",
    ),
    (
        "general",
        AgentMode::Subagent,
        false,
        "General-purpose agent for researching complex questions and executing multi-step tasks. Use this agent to execute multiple units of work in parallel.",
    ),
    (
        "explore",
        AgentMode::Subagent,
        false,
        "Fast agent specialized for exploring codebases. Use this when you need to quickly find files by patterns, search code for keywords, or answer questions about the codebase.",
    ),
    ("compaction", AgentMode::Primary, true, ""),
    ("title", AgentMode::Primary, true, ""),
    ("summary", AgentMode::Primary, true, ""),
];

/// The own system prompt of a built-in agent, if it has one (the others
/// use their model family's prompt).
pub fn builtin_prompt(name: &str) -> Option<&'static str> {
    Some(match name {
        "explore" => EXPLORE_PROMPT,
        "compaction" => COMPACTION_PROMPT,
        "title" => TITLE_PROMPT,
        "summary" => SUMMARY_AGENT_PROMPT,
        _ => return None,
    })
}

const EXPLORE_PROMPT: &str = "\
You explore codebases quickly and report what you find. You are read-only: search with glob and \
grep, read files, list directories, and run only commands that change nothing. Start broad, then \
narrow down; run independent searches in parallel. Answer the question you were given with the \
relevant paths (as `path:line`), the facts that matter and nothing else. If you could not find \
something, say where you looked.";

const COMPACTION_PROMPT: &str = "\
You write the working summary of a coding session so that it can continue without the earlier \
messages. Keep every fact, decision, instruction and open task that still matters, with exact \
names, paths and commands; drop what is obsolete. Do not call tools and do not continue the task \
yourself.";

const TITLE_PROMPT: &str = "\
You write the title of a conversation: at most 50 characters, in the language of the user's first \
message, naming its main topic. No quotes, no trailing punctuation, no explanation: reply with the \
title only.";

const SUMMARY_AGENT_PROMPT: &str = "\
You summarise what was done in a coding session for the user: two or three sentences on what \
changed and why, written as a commit message body would be. Reply with the summary only.";

/// The built-in agents, each ruleset = `defaults` + own rules + `user`, in
/// table order.
pub(super) fn builtin_agents(
    env: &AgentEnvironment,
    defaults: &Ruleset,
    user: &Ruleset,
) -> Vec<Agent> {
    BUILTIN
        .iter()
        .map(|(name, mode, hidden, description)| {
            let description = (!description.is_empty()).then_some(*description);
            let permission: Ruleset = defaults
                .iter()
                .chain(own_rules(name, env).iter())
                .chain(user.iter())
                .cloned()
                .collect();
            let mut agent = Agent::native(name, *mode, description, permission);
            agent.hidden = *hidden;
            if *name == "title" {
                agent.temperature = Some(0.5);
            }
            agent.prompt = builtin_prompt(name).map(str::to_string);
            agent
        })
        .collect()
}

/// Appends the tool-output allow rule unless an `external_directory` deny
/// rule names exactly that pattern (§9.2, last paragraph). The defaults'
/// whitelist holds the same rule; this copy comes after the user's rules,
/// so that their `external_directory` deny does not cut an agent off its
/// own truncated output. opencode has both, and so do the `agent_defaults`
/// vectors.
pub(super) fn finish_permission(permission: &mut Ruleset, env: &AgentEnvironment) {
    let glob = env.truncate_glob();
    let denied = permission.iter().any(|r| {
        r.permission == "external_directory" && r.pattern == glob && r.action == Action::Deny
    });
    if !denied {
        permission.push(rule("external_directory", &glob, Action::Allow));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path("/home/u/proj", "/home/u/.local/share/x/plans/*.md"),
            "../.local/share/x/plans/*.md"
        );
        assert_eq!(relative_path("/a/b", "/a/b/c"), "c");
    }
}
