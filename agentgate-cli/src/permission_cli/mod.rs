//! The `agent permission` commands: `check`, `rules`, `lint` and `eval`.
//!
//! The functions here return the text to print, so they can be tested
//! without running the binary; `args.rs` parses the arguments and
//! `dispatch.rs` prints.

pub mod agents;
pub mod config;
pub mod eval;
mod eval_request;
pub mod project;

use std::path::PathBuf;

use agentgate_permission::{ApprovalStore, Finding, Layered, LintOptions, Ruleset, Severity};
use agentgate_tools::mcp::{McpConfig, sanitize_name};

pub use config::ProjectError;
pub use project::Project;

/// The agent whose rules `check` uses when `--agent` is not given.
pub const DEFAULT_AGENT: &str = "build";

/// Where to look for configuration and how to expand `~`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// `--config FILE`, if given.
    pub config: Option<PathBuf>,
    /// The directory searched for `opencode.json(c)` without `--config`.
    pub dir: PathBuf,
    /// The home directory for `~` and `$HOME` in patterns.
    pub home: String,
}

impl Context {
    /// A context for the current process: its working directory and `$HOME`.
    pub fn from_env(config: Option<PathBuf>) -> Result<Self, ProjectError> {
        let dir = std::env::current_dir()
            .map_err(|e| ProjectError(format!("cannot read the current directory: {e}")))?;
        Ok(Context {
            config,
            dir,
            home: config::home()?,
        })
    }
}

/// The layers a request is checked against. With an agent: its built-in
/// rules as `agent:<name>`, the config's `permission` as `user:<file>`,
/// the agent's own config (`agent.<name>` in the config file and/or a
/// markdown agent file, `permission` appended by opencode) as
/// `user:<files>:agent.<name>`, and the tool-output allow opencode appends
/// last as `agent:<name>:final`. Without: only the config's `permission`.
pub fn layers(project: &Project, agent: Option<&str>) -> Result<Layered, ProjectError> {
    let ctx = &project.ctx;
    let mut layered = Layered::new();
    match agent {
        Some(name) => {
            let env = agents::environment(&ctx.dir, &ctx.home);
            for layer in agents::agent_layers(name, project, &env)? {
                layered.push(layer.name, layer.source, layer.rules);
            }
        }
        None => {
            if let Some(config) = &project.config
                && let Some(permission) = config.permission()?
            {
                layered.push(
                    format!("user:{}", config.display_name()),
                    Some(config.source()),
                    agentgate_permission::from_config_with_home(&permission, &ctx.home),
                );
            }
        }
    }
    Ok(layered)
}

/// `agent permission check`: the decision for `permission` and `pattern`
/// and why, as text or as JSON. For `bash` the pattern is a command line,
/// judged as the bash tool judges it: every request it would make
/// ([`agentgate_tools::bash_requests`]: directories, each command or
/// `bash_opaque`, the files the read rules cover), each explained, and the
/// decision the gate would reach over all of them.
pub fn check(
    project: &Project,
    agent: Option<&str>,
    permission: &str,
    pattern: &str,
    json: bool,
) -> Result<String, ProjectError> {
    let agent = agent.unwrap_or(DEFAULT_AGENT);
    let layered = layers(project, Some(agent))?;
    let directory = project.ctx.dir.display().to_string();
    let approved = crate::workspace::approval_store()
        .map_err(ProjectError)?
        .list(&directory)
        .map_err(|e| ProjectError(format!("cannot read the remembered approvals: {e}")))?;
    let approved_layer = (
        format!("\"always\" approvals remembered for {directory} (agent approvals list)"),
        approved,
    );
    if permission == agentgate_tools::BASH {
        return check_command(project, &layered, &approved_layer, pattern, json);
    }
    let explanation = explain_as_gate(&layered, &approved_layer, permission, pattern);
    if json {
        pretty(&explanation)
    } else {
        let mut text = explanation.to_string();
        let note = set_aside_note(project);
        if !note.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Ok(text + &note)
    }
}

/// The project rules set aside because the project is not trusted, as
/// lines after a decision (nothing when there are none).
fn set_aside_note(project: &Project) -> String {
    if project.set_aside.is_empty() {
        return String::new();
    }
    let mut text =
        String::from("  set aside, the project is not trusted (`agent trust` enables them):\n");
    for line in &project.set_aside {
        text.push_str(&format!("    - {line}\n"));
    }
    text
}

/// As the gate decides: the agent's rules alone first (a deny is final,
/// an allow needs nothing more); only what they leave to ask is matched
/// against the "always" approvals remembered for the directory.
fn explain_as_gate(
    layered: &Layered,
    (source, approved): &(String, Ruleset),
    permission: &str,
    pattern: &str,
) -> agentgate_permission::Explanation {
    let explanation = layered.explain(permission, pattern);
    if explanation.action != agentgate_permission::Action::Ask || approved.is_empty() {
        return explanation;
    }
    let mut with_approvals = layered.clone();
    with_approvals.push("approved", Some(source.clone()), approved.clone());
    with_approvals.explain(permission, pattern)
}

/// `layered` with only the rules that name `permission` exactly: how
/// `bash_opaque` is judged (an allow for every permission does not
/// answer it).
fn naming(layered: &Layered, permission: &str) -> Layered {
    let mut named = Layered::new();
    for layer in layered.layers() {
        named.push(
            layer.name.clone(),
            layer.source.clone(),
            layer
                .rules
                .iter()
                .filter(|rule| rule.permission == permission)
                .cloned()
                .collect(),
        );
    }
    named
}

/// One request of a command line, explained pattern by pattern.
#[derive(Debug, serde::Serialize)]
struct CheckedRequest {
    permission: String,
    /// Why the scan could not see through the line (`bash_opaque`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reasons: Vec<String>,
    patterns: Vec<agentgate_permission::Explanation>,
}

/// The decision for a command line, and every request behind it.
#[derive(Debug, serde::Serialize)]
struct CheckedCommand {
    permission: String,
    pattern: String,
    action: agentgate_permission::Action,
    decided_by: Option<agentgate_permission::RuleRef>,
    overridden: Vec<agentgate_permission::RuleRef>,
    requests: Vec<CheckedRequest>,
}

/// `check bash COMMAND`: see [`check`]. The command runs in the working
/// directory, the project being that directory in its worktree.
fn check_command(
    project: &Project,
    layered: &Layered,
    approved: &(String, Ruleset),
    command: &str,
    json: bool,
) -> Result<String, ProjectError> {
    use agentgate_permission::Action;
    let dir = &project.ctx.dir;
    let worktree = agentgate_core::ConfigLoader::new(dir).resolved_worktree();
    let requests = agentgate_tools::bash_requests(
        command,
        dir,
        dir,
        &worktree,
        &layered.flatten(),
        &approved.1,
    )
    .map_err(|e| ProjectError(format!("the bash tool would refuse this command: {e}")))?;
    let mut checked = Vec::new();
    for request in requests {
        let judged_by = if request.permission == agentgate_tools::bash_scan::BASH_OPAQUE {
            naming(layered, &request.permission)
        } else {
            layered.clone()
        };
        let reasons = request.metadata["reasons"]
            .as_array()
            .map(|reasons| {
                reasons
                    .iter()
                    .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let patterns = request
            .patterns
            .iter()
            .map(|pattern| explain_as_gate(&judged_by, approved, &request.permission, pattern))
            .collect();
        checked.push(CheckedRequest {
            permission: request.permission,
            reasons,
            patterns,
        });
    }
    // The gate: any deny denies, else anything not allowed asks.
    let all: Vec<&agentgate_permission::Explanation> =
        checked.iter().flat_map(|r| &r.patterns).collect();
    let deciding = all
        .iter()
        .find(|e| e.action == Action::Deny)
        .or_else(|| all.iter().find(|e| e.action == Action::Ask))
        .or_else(|| all.last())
        .copied();
    let result = CheckedCommand {
        permission: agentgate_tools::BASH.to_string(),
        pattern: command.to_string(),
        action: deciding.map_or(Action::Allow, |e| e.action),
        decided_by: deciding.and_then(|e| e.decided_by.clone()),
        overridden: deciding.map(|e| e.overridden.clone()).unwrap_or_default(),
        requests: checked,
    };
    if json {
        return pretty(&result);
    }
    let mut text = command_text(&result);
    text.push_str(&set_aside_note(project));
    Ok(text)
}

/// What `check bash COMMAND` prints: the decision, then each request the
/// bash tool would make with how the rules judge each of its patterns.
fn command_text(result: &CheckedCommand) -> String {
    let mut text = format!("bash {:?} → {}\n", result.pattern, result.action);
    match result.requests.len() {
        0 => text.push_str("  the bash tool asks nothing for this line: it runs\n"),
        n => text.push_str(&format!(
            "  the bash tool asks {n} request{} for this line, in order (any deny denies; anything not allowed asks):\n",
            if n == 1 { "" } else { "s" }
        )),
    }
    for request in &result.requests {
        if !request.reasons.is_empty() {
            text.push_str(&format!(
                "  {} (judged only by rules naming it): {}\n",
                request.permission,
                request.reasons.join("; ")
            ));
        }
        for explanation in &request.patterns {
            for line in explanation.to_string().lines() {
                text.push_str("    ");
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// `agent permission rules`: the config's ruleset (preceded by the agent's
/// built-in rules when `agent` is given) as pretty JSON.
pub fn rules(project: &Project, agent: Option<&str>) -> Result<String, ProjectError> {
    let rules: Ruleset = layers(project, agent)?.flatten();
    pretty(&rules)
}

/// The outcome of `agent permission lint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintReport {
    /// What to print.
    pub text: String,
    /// The findings (the exit status is 1 when there are any, warnings
    /// included).
    pub findings: Vec<Finding>,
}

/// `agent permission lint`: findings on the rules the user wrote — the
/// config's `permission` and every agent's own (config or markdown) — each
/// linted in its agent's layers, so a built-in rule that overrides a user
/// rule is seen, while the built-in rules themselves are never a finding.
/// With `agent`, only that agent's layers. `known` adds permission names to
/// the built-in ones, besides those of the config's MCP servers
/// (`<server>_*`) and of the custom tools in the `.opencode` directories.
pub fn lint(
    project: &Project,
    agent: Option<&str>,
    known: &[String],
    json: bool,
) -> Result<LintReport, ProjectError> {
    let mut options = LintOptions::new();
    for name in known.iter().cloned().chain(configured_tools(project)) {
        options = options.known(name);
    }
    let env = agents::environment(&project.ctx.dir, &project.ctx.home);
    let names = match agent {
        Some(name) => vec![name.to_string()],
        None => agents_to_lint(project, &env)?,
    };
    let mut findings: Vec<Finding> = Vec::new();
    let mut user_layers: Vec<(String, usize)> = Vec::new();
    for name in &names {
        let mut layered = Layered::new();
        let mut options = options.clone();
        for layer in agents::agent_layers(name, project, &env)? {
            if layer.builtin {
                options = options.builtin_layer(layer.name.clone());
            } else if !user_layers.iter().any(|(n, _)| *n == layer.name) {
                user_layers.push((layer.name.clone(), layer.rules.len()));
            }
            layered.push(layer.name, layer.source, layer.rules);
        }
        // The config's own layer is in every agent's stack: one finding
        // per rule and kind, not one per agent.
        for finding in agentgate_permission::lint_with(&layered, &options) {
            let seen = findings.iter().any(|f| {
                f.kind == finding.kind
                    && f.rule.layer == finding.rule.layer
                    && f.rule.index == finding.rule.index
            });
            if !seen {
                findings.push(finding);
            }
        }
    }
    let text = if json {
        pretty(&findings)?
    } else if agent.is_none() && user_layers.is_empty() && project.config.is_none() {
        format!(
            "no rules to lint: no --config given and no {} in {}\n",
            config::DEFAULT_FILES.join(" or "),
            project.ctx.dir.display()
        )
    } else {
        let mut text = String::new();
        for finding in &findings {
            text.push_str(&finding.to_string());
            text.push('\n');
        }
        let rules: usize = user_layers.iter().map(|(_, n)| n).sum();
        let warnings = findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        let counted = match findings.len() {
            0 => format!("no findings in {rules} rules"),
            1 => format!("1 finding in {rules} rules"),
            n => format!("{n} findings in {rules} rules"),
        };
        text.push_str(&match warnings {
            0 => format!("{counted}\n"),
            1 => format!("{counted} (1 warning)\n"),
            n => format!("{counted} ({n} warnings)\n"),
        });
        text
    };
    Ok(LintReport { text, findings })
}

/// The agents whose layers `lint` reads without `--agent`: the default
/// agent (else `build`, else the first), whose stack holds the config's
/// `permission`, then every agent the config or a markdown file configures
/// (a disabled one is left out).
fn agents_to_lint(
    project: &Project,
    env: &agentgate_core::AgentEnvironment,
) -> Result<Vec<String>, ProjectError> {
    let all = agents::project_agents(project, env)?;
    // A default agent that does not resolve is `run`'s error to report;
    // lint still needs one agent whose stack holds the config's rules.
    let default = all
        .default_agent()
        .ok()
        .or_else(|| all.get(DEFAULT_AGENT))
        .or_else(|| all.iter().next())
        .map(|a| a.name.clone());
    let mut names: Vec<String> = default.into_iter().collect();
    for name in project.agents.keys() {
        if all.get(name).is_some() && !names.contains(name) {
            names.push(name.clone());
        }
    }
    Ok(names)
}

/// Permission names the project's configuration adds: `<server>_*` for
/// every server of the config's `mcp` key (its tools are named
/// `<server>_<tool>`), and for every custom tool file of the `.opencode`
/// directories (`tool/` or `tools/`, `.ts` or `.js`, as opencode loads them)
/// its name and `<name>_*` (a file exporting several tools names them
/// `<file>_<export>`).
fn configured_tools(project: &Project) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(config) = &project.config {
        let value = serde_json::Value::Object(config.value.clone());
        for server in McpConfig::from_opencode(&value).servers.keys() {
            names.push(format!("{}_*", sanitize_name(server)));
        }
    }
    for dir in &project.markdown_dirs {
        for folder in ["tool", "tools"] {
            let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let script = path.extension().is_some_and(|e| e == "ts" || e == "js");
                if let (true, Some(stem)) = (script, path.file_stem()) {
                    let stem = stem.to_string_lossy();
                    names.push(stem.to_string());
                    names.push(format!("{stem}_*"));
                }
            }
        }
    }
    names
}

fn pretty<T: serde::Serialize>(value: &T) -> Result<String, ProjectError> {
    serde_json::to_string_pretty(value)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| ProjectError(format!("cannot encode the output as JSON: {e}")))
}
