//! From the parsed command line to the commands: each arm reads what the
//! command needs (the configuration, the prompt, the current directory),
//! calls it and prints what it returns; the exit status follows from it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::args::{
    ApprovalsCommand, Cli, Command, DebugCommand, McpCommand, PermissionCommand, RunArgs,
    SessionsCommand,
};
use crate::permission_cli::{self, Context, Project, eval};
use crate::run_cli::{self, RunOptions};
use crate::{agents_cli, chat_cli, debug_cli, mcp_cli, sessions_cli};

/// Prints text that holds what the model, the project or a server wrote
/// (session titles and transcripts, remembered patterns), terminal-safe:
/// see [`terminal_safe`](crate::terminal_text::terminal_safe).
fn print_shown(text: &str) -> Result<(), String> {
    print(&crate::terminal_text::terminal_safe(text))
}

/// Prints a command's output (tables naming the project's agents,
/// commands, MCP servers and rules; JSON) with every control character
/// written as a `\uXXXX` escape: visible to a person, and the same value
/// to a JSON reader.
fn print(text: &str) -> Result<(), String> {
    let text = crate::terminal_text::json_safe(text);
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
        eprintln!(
            "agent: warning: {}",
            crate::terminal_text::Untrusted::new(warning)
        );
    }
    Ok(project)
}

/// The prompt: the arguments, followed by piped stdin when there is some
/// (as `opencode run` joins them: `git diff | agent run "review this"`);
/// with no arguments (or `-`), stdin alone.
fn prompt(words: Vec<String>) -> Result<String, String> {
    use std::io::IsTerminal;
    let joined = words.join(" ");
    let stdin = std::io::stdin();
    let from_args = !joined.trim().is_empty() && joined != "-";
    if stdin.is_terminal() {
        if from_args {
            return Ok(joined);
        }
        eprintln!(
            "agent: reading the prompt from stdin (end it with Ctrl-D, or pass it as an argument)"
        );
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdin.lock(), &mut text)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    match (from_args, text.trim().is_empty()) {
        (true, true) => Ok(joined),
        (true, false) => Ok(format!("{joined}\n{text}")),
        (false, false) => Ok(text),
        (false, true) => Err("no prompt: pass one as an argument or on stdin".into()),
    }
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

fn run_prompt(mut args: RunArgs) -> Result<ExitCode, String> {
    let words = std::mem::take(&mut args.prompt);
    // A command's arguments are the words as given (none is fine).
    let prompt = if args.command.is_some() {
        words.join(" ")
    } else {
        prompt(words)?
    };
    let options = args.into_options(prompt);
    let runtime = runtime()?;
    let status = runtime.block_on(run_cli::run(options));
    // An interrupted run may leave a blocking task behind (a config read,
    // a tool's thread): exit without waiting for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(ExitCode::from(status?))
}

pub(crate) fn run(cli: Cli) -> Result<ExitCode, String> {
    let command = match cli.command {
        Command::Run(args) => return run_prompt(args),
        Command::Chat(args) => {
            let options = RunOptions::from(args);
            let runtime = runtime()?;
            let status = runtime.block_on(chat_cli::chat(options));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            return Ok(ExitCode::from(status?));
        }
        Command::Acp(args) => {
            let runtime = runtime()?;
            let served = runtime.block_on(crate::acp_cli::serve(args.into()));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            served?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Serve(args) => {
            let runtime = runtime()?;
            let served = runtime.block_on(crate::serve_cli::serve(args.into()));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            served?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Attach(args) => {
            let options = crate::attach_cli::AttachOptions {
                url: args.url,
                session: args.session,
                auto: args.auto,
                format: args.format,
                prompt: prompt(args.prompt)?,
            };
            let runtime = runtime()?;
            let status = runtime.block_on(crate::attach_cli::attach(options));
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            return Ok(ExitCode::from(status?));
        }
        Command::Permission(command) => command,
        Command::Agents { config, json } => {
            let project = project(config.config)?;
            print(&agents_cli::list(&project, json).map_err(|e| e.to_string())?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Commands { json } => {
            print(&crate::commands_cli::list(&current_dir()?, json)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Sessions(command) => {
            let dir = current_dir()?;
            // `export` is JSON (its strings already escape control
            // characters); everything else is shown to a person.
            let json = matches!(command, SessionsCommand::Export { .. });
            let text = runtime()?.block_on(async {
                match command {
                    SessionsCommand::List => sessions_cli::list(&dir).await,
                    SessionsCommand::Show { id } => sessions_cli::show(&id).await,
                    SessionsCommand::Export { id } => sessions_cli::export(&id).await,
                    SessionsCommand::Delete { id } => sessions_cli::delete(&id).await,
                    SessionsCommand::Rename { id, title } => {
                        sessions_cli::rename(&id, &title.join(" ")).await
                    }
                    SessionsCommand::Fork { id, message } => {
                        sessions_cli::fork(&id, message.as_deref()).await
                    }
                }
            })?;
            if json {
                print(&text)?
            } else {
                print_shown(&text)?
            }
            return Ok(ExitCode::SUCCESS);
        }
        Command::Approvals(ApprovalsCommand::List) => {
            print_shown(&sessions_cli::approvals(&current_dir()?)?)?;
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
                    "agent: no approval {} \"{}\" (see `agent approvals list`)",
                    crate::terminal_text::Untrusted::new(&permission),
                    crate::terminal_text::Untrusted::new(&pattern)
                );
                Ok(ExitCode::FAILURE)
            };
        }
        Command::Trust(args) => {
            let text = if args.list {
                crate::trust_cli::list()?
            } else if let Some(dir) = args.revoke {
                crate::trust_cli::revoke(&dir)?
            } else {
                crate::trust_cli::trust(&crate::trust_cli::directory(args.dir)?)?
            };
            print(&text)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Debug(DebugCommand::Config { json }) => {
            print(&debug_cli::config(&current_dir()?, json)?)?;
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
