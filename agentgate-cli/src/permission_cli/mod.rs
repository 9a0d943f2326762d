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

use agentgate_permission::{BUILTIN_PERMISSIONS, Finding, Layered, Ruleset};

pub use config::CliError;
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
    pub fn from_env(config: Option<PathBuf>) -> Result<Self, CliError> {
        let dir = std::env::current_dir()
            .map_err(|e| CliError(format!("cannot read the current directory: {e}")))?;
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
pub fn layers(project: &Project, agent: Option<&str>) -> Result<Layered, CliError> {
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
/// and why, as text or as JSON.
pub fn check(
    project: &Project,
    agent: Option<&str>,
    permission: &str,
    pattern: &str,
    json: bool,
) -> Result<String, CliError> {
    let agent = agent.unwrap_or(DEFAULT_AGENT);
    let layered = layers(project, Some(agent))?;
    let explanation = layered.explain(permission, pattern);
    if json {
        pretty(&explanation)
    } else {
        Ok(explanation.to_string())
    }
}

/// `agent permission rules`: the config's ruleset (preceded by the agent's
/// built-in rules when `agent` is given) as pretty JSON.
pub fn rules(project: &Project, agent: Option<&str>) -> Result<String, CliError> {
    let rules: Ruleset = layers(project, agent)?.flatten();
    pretty(&rules)
}

/// The outcome of `agent permission lint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintReport {
    /// What to print.
    pub text: String,
    /// The findings (the exit status is 1 when there are any).
    pub findings: Vec<Finding>,
}

/// `agent permission lint`: findings on the user's rules (and on the
/// agent's built-in rules too when `agent` is given). `known` adds
/// permission names (e.g. MCP tools) to the built-in ones.
pub fn lint(
    project: &Project,
    agent: Option<&str>,
    known: &[String],
    json: bool,
) -> Result<LintReport, CliError> {
    let layered = layers(project, agent)?;
    let mut names: Vec<&str> = BUILTIN_PERMISSIONS.to_vec();
    names.extend(known.iter().map(String::as_str));
    let findings = agentgate_permission::lint(&layered, &names);
    let text = if json {
        pretty(&findings)?
    } else if layered.layers().is_empty() {
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
        let rules: usize = layered.layers().iter().map(|l| l.rules.len()).sum();
        text.push_str(&match findings.len() {
            0 => format!("no findings in {rules} rules\n"),
            1 => format!("1 finding in {rules} rules\n"),
            n => format!("{n} findings in {rules} rules\n"),
        });
        text
    };
    Ok(LintReport { text, findings })
}

fn pretty<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| CliError(format!("cannot encode the output as JSON: {e}")))
}
