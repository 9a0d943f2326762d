//! The `agent` reference CLI.
//!
//! ```text
//! agent run [--agent NAME] [--model PROVIDER/MODEL] [--auto] [--continue | --session ID]
//!           [--format text|json] [--sandbox MODE] [PROMPT]
//! agent chat [--agent NAME] [--model PROVIDER/MODEL] [--continue | --session ID] [--sandbox MODE]
//! agent sessions [list | show ID | export ID]
//! agent approvals [list | revoke PERMISSION PATTERN]
//! agent debug config
//! agent debug prompt AGENT [--model PROVIDER/MODEL]
//! agent permission check [--config FILE] [--agent NAME] [--json] PERMISSION PATTERN
//! agent permission rules [--config FILE] [--agent NAME]
//! agent permission lint  [--config FILE] [--agent NAME] [--known NAME]... [--json]
//! agent permission eval  < requests.jsonl > answers.jsonl
//! agent agents [--config FILE] [--json]
//! agent debug agent NAME [--config FILE]
//! agent mcp list [--config FILE] [--json]
//! ```

//!
//! The modules, one per command or output format:
//!
//! - `permission_cli`: `agent permission check | rules | lint | eval`, and
//!   the config loading every command shares (`permission_cli::Project`:
//!   `opencode.json(c)` plus markdown agents under `.opencode/`);
//! - `agents_cli`: `agent agents` and `agent debug agent NAME`;
//! - `run_cli`: `agent run`, on `model_choice` (which model, the offline
//!   `agent_core::demo::DemoModel` when none is configured), `render`
//!   (printing a turn's events) and `workspace` (the data directory, its
//!   session and approval stores);
//! - `chat_cli`: `agent chat`, with `line_reader` (the line editor) and
//!   `spinner` (the progress line);
//! - `sessions_cli`: `agent sessions` and `agent approvals`;
//! - `debug_cli`: `agent debug config` and `agent debug prompt`;
//! - `mcp_cli`: `agent mcp list`.

mod agents_cli;
mod chat_cli;
mod debug_cli;
mod line_reader;
mod mcp_cli;
mod model_choice;
mod permission_cli;
mod render;
mod run_cli;
mod sessions_cli;
mod spinner;
mod workspace;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use agent_tools::SandboxMode;
use clap::{Args, Parser, Subcommand};
use permission_cli::{Context, Project, eval};
use render::Format;
use run_cli::RunOptions;

/// A reference CLI for the agent SDK.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one prompt non-interactively: the answer streams to stdout, tool
    /// activity to stderr. Asks are rejected with a warning unless --auto;
    /// deny rules always deny. With no provider configured and no API key
    /// set, an offline demo model runs. Exit status 1 when the turn failed
    /// or a rejection stopped it.
    Run(RunArgs),
    /// An interactive session: a line editor with history, a progress line,
    /// asks answered once / always / reject / reject with feedback, Ctrl-C
    /// cancelling the turn; /agent NAME, /model PROVIDER/MODEL, /sessions,
    /// /exit.
    Chat(ChatArgs),
    /// The stored sessions of this directory.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// The remembered "always" approvals of this directory.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Decide, explain and lint permission rules (opencode-compatible).
    #[command(subcommand)]
    Permission(PermissionCommand),
    /// List the agents (built-in, the config's `agent` map, markdown agents
    /// in .opencode/agent(s)/ and .opencode/mode(s)/): the default agent
    /// first, the rest by name, with mode, origin (native or custom), hidden
    /// flag and description.
    Agents {
        #[command(flatten)]
        config: ConfigArg,
        /// Print a JSON array of {name, mode, native, hidden, description}.
        #[arg(long)]
        json: bool,
    },
    /// Inspect how the configuration is resolved.
    #[command(subcommand)]
    Debug(DebugCommand),
    /// MCP servers of the config's `mcp` key.
    #[command(subcommand)]
    Mcp(McpCommand),
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Start every configured MCP server and print its status (connected,
    /// disabled, failed with the error and stderr tail) and its tools.
    List {
        #[command(flatten)]
        config: ConfigArg,
        /// Print a JSON array of {name, status, error?, tools}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The agent to run (see `agent agents`).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The model, as provider/model (anthropic/..., openai/..., google/...,
    /// ollama/..., or a provider entry of the config).
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// Allow every ask once (deny rules still deny).
    #[arg(long, visible_alias = "dangerously-skip-permissions", alias = "yolo")]
    auto: bool,
    /// Continue the latest session of this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    continue_last: bool,
    /// Continue session ID (see `agent sessions list`).
    #[arg(long, short, value_name = "ID")]
    session: Option<String>,
    /// text: the answer on stdout; json: one JSON event per line.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The OS sandbox bash commands run in: read-only, workspace-write
    /// (the default, or the config's `sandbox` key) or danger-full-access.
    #[arg(long, value_name = "MODE")]
    sandbox: Option<SandboxMode>,
    /// The prompt; read from stdin when absent (or `-`).
    prompt: Vec<String>,
}

#[derive(Debug, Args)]
struct ChatArgs {
    /// The agent to run (see `agent agents`).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The model, as provider/model.
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// Continue the latest session of this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    continue_last: bool,
    /// Continue session ID.
    #[arg(long, short, value_name = "ID")]
    session: Option<String>,
    /// Run bash commands in a sandbox (see `agent run --help`).
    #[arg(long, value_name = "MODE")]
    sandbox: Option<SandboxMode>,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// id, agent, message count and first prompt of each session.
    List,
    /// A session's transcript.
    Show {
        /// The session id.
        id: String,
    },
    /// A session and its messages as JSON.
    Export {
        /// The session id.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// The remembered rules.
    List,
    /// Forget the approval of PERMISSION on PATTERN.
    Revoke {
        /// e.g. bash.
        permission: String,
        /// e.g. "git status *".
        pattern: String,
    },
}

#[derive(Debug, Subcommand)]
enum DebugCommand {
    /// Each top-level setting of the configuration and the file it came from.
    Config,
    /// The system prompt AGENT would be sent (on --model, else the chosen model).
    Prompt {
        /// The agent's name.
        agent: String,
        /// The model, as provider/model.
        #[arg(long, short, value_name = "PROVIDER/MODEL")]
        model: Option<String>,
    },
    /// Print agent NAME as JSON (permission rules in order, model, prompt,
    /// ...) plus `tools: {id: enabled}`: whether its rules leave each
    /// built-in tool visible to the model.
    Agent {
        #[command(flatten)]
        config: ConfigArg,
        /// The agent's name (see `agent agents`).
        name: String,
    },
}

#[derive(Debug, Args)]
struct ConfigArg {
    /// opencode config file (JSON or JSONC) whose `permission` key holds the
    /// user's rules. Default: opencode.jsonc and opencode.json in the current
    /// directory, if present; else no user rules. Markdown agents are read
    /// from .opencode/ in the current directory and, with this option, from
    /// .opencode/ next to FILE.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum PermissionCommand {
    /// Print the decision for PERMISSION and PATTERN, the rule that decided
    /// it (with its layer) and the earlier matching rules it overrode.
    ///
    /// Layers, lowest precedence first: the agent's built-in rules
    /// (`agent:<name>`), the config's `permission` (`user:<file>`), and the
    /// config's `agent.<name>.permission` (`user:<file>:agent.<name>`).
    Check {
        #[command(flatten)]
        config: ConfigArg,
        /// Agent whose rules come first: build, plan, general, explore,
        /// compaction, title, summary, or one the config or a markdown file
        /// defines.
        #[arg(long, value_name = "NAME", default_value = permission_cli::DEFAULT_AGENT)]
        agent: String,
        /// Print the explanation as JSON.
        #[arg(long)]
        json: bool,
        /// The permission asked for: bash, edit, read, webfetch, ...
        permission: String,
        /// The request pattern: a command, a path, a URL ...
        pattern: String,
    },
    /// Print the ruleset of the config's `permission` key as JSON.
    Rules {
        #[command(flatten)]
        config: ConfigArg,
        /// Also include this built-in agent's rules, first, as opencode does.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Report rules that can never decide, specific-before-generic ordering
    /// mistakes and unknown permission names. Exit status 1 when there are
    /// findings.
    Lint {
        #[command(flatten)]
        config: ConfigArg,
        /// Also lint this built-in agent's rules together with the config's.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// A permission name to accept besides the built-in ones (e.g. an
        /// MCP tool); repeatable.
        #[arg(long, value_name = "NAME")]
        known: Vec<String>,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Answer JSON-line requests on stdin, one JSON line each on stdout.
    #[command(long_about = eval::HELP)]
    Eval,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("agent: {message}");
            ExitCode::from(2)
        }
    }
}

fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

/// Loads the configuration and prints a warning for every markdown agent
/// file that had to be skipped.
fn project(config: Option<PathBuf>) -> Result<Project, String> {
    let ctx = Context::from_env(config).map_err(|e| e.to_string())?;
    let project = Project::load(&ctx).map_err(|e| e.to_string())?;
    for warning in &project.warnings {
        eprintln!("agent: warning: {warning}");
    }
    Ok(project)
}

/// The prompt from the arguments, else from stdin.
fn prompt(words: Vec<String>) -> Result<String, String> {
    let joined = words.join(" ");
    if !joined.trim().is_empty() && joined != "-" {
        return Ok(joined);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    if text.trim().is_empty() {
        return Err("no prompt: pass one as an argument or on stdin".into());
    }
    Ok(text)
}

fn current_dir() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| format!("no current directory: {e}"))
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

fn run_prompt(args: RunArgs) -> Result<ExitCode, String> {
    let options = RunOptions {
        agent: args.agent,
        model: args.model,
        auto: args.auto,
        continue_last: args.continue_last,
        session: args.session,
        format: args.format,
        sandbox: args.sandbox,
        prompt: prompt(args.prompt)?,
        directory: None,
    };
    let status = runtime()?.block_on(run_cli::run(options))?;
    Ok(ExitCode::from(status))
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    let command = match cli.command {
        Command::Run(args) => return run_prompt(args),
        Command::Chat(args) => {
            let options = RunOptions {
                agent: args.agent,
                model: args.model,
                continue_last: args.continue_last,
                session: args.session,
                sandbox: args.sandbox,
                ..RunOptions::default()
            };
            let status = runtime()?.block_on(chat_cli::chat(options))?;
            return Ok(ExitCode::from(status));
        }
        Command::Permission(command) => command,
        Command::Agents { config, json } => {
            let project = project(config.config)?;
            print(&agents_cli::list(&project, json).map_err(|e| e.to_string())?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Sessions(command) => {
            let dir = current_dir()?;
            let text = runtime()?.block_on(async {
                match command {
                    SessionsCommand::List => sessions_cli::list(&dir).await,
                    SessionsCommand::Show { id } => sessions_cli::show(&id).await,
                    SessionsCommand::Export { id } => sessions_cli::export(&id).await,
                }
            })?;
            print(&text)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Approvals(ApprovalsCommand::List) => {
            print(&sessions_cli::approvals(&current_dir()?)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Approvals(ApprovalsCommand::Revoke {
            permission,
            pattern,
        }) => {
            return if sessions_cli::revoke(&current_dir()?, &permission, &pattern)? {
                print(&format!("revoked {permission} {pattern:?}\n"))?;
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "agent: no approval {permission} {pattern:?} (see `agent approvals list`)"
                );
                Ok(ExitCode::FAILURE)
            };
        }
        Command::Debug(DebugCommand::Config) => {
            print(&debug_cli::config(&current_dir()?)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Debug(DebugCommand::Prompt { agent, model }) => {
            print(&debug_cli::prompt(
                &current_dir()?,
                &agent,
                model.as_deref(),
            )?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Mcp(McpCommand::List { config, json }) => {
            let project = project(config.config)?;
            let runtime = tokio::runtime::Runtime::new()
                .map_err(|e| format!("cannot start the async runtime: {e}"))?;
            print(&runtime.block_on(mcp_cli::list(&project, json)))?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Debug(DebugCommand::Agent { config, name }) => {
            let project = project(config.config)?;
            print(&agents_cli::debug_agent(&project, &name).map_err(|e| e.to_string())?)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    match command {
        PermissionCommand::Check {
            config,
            agent,
            json,
            permission,
            pattern,
        } => {
            let project = project(config.config)?;
            let text = permission_cli::check(&project, Some(&agent), &permission, &pattern, json)
                .map_err(|e| e.to_string())?;
            print(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        PermissionCommand::Rules { config, agent } => {
            let project = project(config.config)?;
            let text =
                permission_cli::rules(&project, agent.as_deref()).map_err(|e| e.to_string())?;
            print(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        PermissionCommand::Lint {
            config,
            agent,
            known,
            json,
        } => {
            let project = project(config.config)?;
            let report = permission_cli::lint(&project, agent.as_deref(), &known, json)
                .map_err(|e| e.to_string())?;
            print(&report.text)?;
            Ok(if report.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        PermissionCommand::Eval => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            let summary = eval::run(stdin, stdout).map_err(|e| format!("eval: {e}"))?;
            Ok(if summary.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
