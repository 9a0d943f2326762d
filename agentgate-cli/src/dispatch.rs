//! From the parsed command line to the commands: each arm reads what the
//! command needs (the configuration, the prompt, the current directory),
//! calls it and prints what it returns; the exit status follows from it.
//! The async commands run on the process's one tokio runtime
//! ([`on_runtime`]); what fails is a [`CliError`].

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::args::{
    ApprovalsCommand, AttachArgs, Cli, Command, DebugCommand, McpCommand, PermissionCommand,
    RunArgs, SessionsCommand, TrustArgs, TuiArgs,
};
use crate::cli_error::CliError;
use crate::permission_cli::{self, Context, Project, eval};
use crate::run_cli::{self, RunOptions};
use crate::{agents_cli, chat_cli, debug_cli, mcp_cli, sessions_cli};

/// Prints text that holds what the model, the project or a server wrote
/// (session titles and transcripts, remembered patterns), terminal-safe:
/// see [`terminal_safe`](crate::terminal_text::terminal_safe).
fn print_shown(text: &str) -> Result<(), CliError> {
    print(&crate::terminal_text::terminal_safe(text))
}

/// Prints a command's output (tables naming the project's agents,
/// commands, MCP servers and rules; JSON) with every control character
/// written as a `\uXXXX` escape: visible to a person, and the same value
/// to a JSON reader.
fn print(text: &str) -> Result<(), CliError> {
    let text = crate::terminal_text::json_safe(text);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::Stdout)
}

/// Loads the configuration and prints a warning for every markdown agent
/// file that had to be skipped.
fn project(config: Option<PathBuf>) -> Result<Project, CliError> {
    let ctx = Context::from_env(config)?;
    let project = Project::load(&ctx)?;
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
fn prompt(words: Vec<String>) -> Result<String, CliError> {
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
    std::io::Read::read_to_string(&mut stdin.lock(), &mut text).map_err(CliError::Stdin)?;
    match (from_args, text.trim().is_empty()) {
        (true, true) => Ok(joined),
        (true, false) => Ok(format!("{joined}\n{text}")),
        (false, false) => Ok(text),
        (false, true) => Err(CliError::NoPrompt),
    }
}

/// The directory the command was run from.
fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(CliError::CurrentDir)
}

/// Runs `future` on the process's one tokio runtime (multi-threaded, IO
/// and time enabled), built here and only here: each invocation of
/// `agent` runs one command. When the command is done the runtime is shut
/// down without waiting long for what it leaves behind (an interrupted
/// run may leave a blocking task: a config read, a tool's thread).
fn on_runtime<F: Future>(future: F) -> Result<F::Output, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let output = runtime.block_on(future);
    // Every decision of the gate is on disk before `agent` exits, and
    // the database's log is folded in.
    runtime.block_on(crate::workspace::close_database());
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(output)
}

/// [`on_runtime`], with the command's spans exported where the
/// `OTEL_EXPORTER_OTLP_*` variables say (nothing when unset), flushed
/// before the runtime stops.
fn on_traced_runtime<F: Future>(future: F) -> Result<F::Output, CliError> {
    on_runtime(async move {
        let telemetry = crate::telemetry_cli::start();
        let output = future.await;
        telemetry.finish().await;
        output
    })
}

/// `agent run`: the prompt from the arguments and stdin, or a command's
/// arguments.
fn run_prompt(mut args: RunArgs) -> Result<ExitCode, CliError> {
    let words = std::mem::take(&mut args.prompt);
    // A command's arguments are the words as given (none is fine).
    let prompt = if args.command.is_some() {
        words.join(" ")
    } else {
        prompt(words)?
    };
    let options = args.into_options(prompt);
    Ok(ExitCode::from(on_traced_runtime(run_cli::run(options))??))
}

/// Runs the command `cli` names and says how `agent` exits.
pub(crate) fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Run(args) => run_prompt(args),
        Command::Chat(args) => {
            let options = RunOptions::from(args);
            Ok(ExitCode::from(on_traced_runtime(chat_cli::chat(options))??))
        }
        Command::Acp(args) => {
            on_traced_runtime(crate::acp_cli::serve(args.into()))??;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(args) => {
            on_traced_runtime(crate::serve_cli::serve(args.into()))??;
            Ok(ExitCode::SUCCESS)
        }
        Command::Attach(args) => attach(args),
        Command::Tui(args) => tui(args),
        Command::Permission(command) => permission(command),
        Command::Agents { config, json } => {
            let project = project(config.config)?;
            print(&agents_cli::list(&project, json)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Commands { json } => {
            print(&crate::commands_cli::list(&current_dir()?, json)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Sessions(command) => sessions(command),
        Command::Approvals(command) => approvals(command),
        Command::Trust(args) => trust(args),
        Command::Audit(args) => {
            let options = crate::audit_cli::AuditOptions {
                session: args.session,
                since: args.since,
                verify: args.verify,
                json: args.json,
            };
            let (text, ok) = on_runtime(crate::audit_cli::audit(options))??;
            print(&text)?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Debug(command) => debug(command),
        Command::Mcp(McpCommand::List { config, json }) => {
            let project = project(config.config)?;
            print(&on_runtime(mcp_cli::list(&project, json))?)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `agent tui`: the full-screen interface, on an agent here or attached
/// to a server.
pub(crate) fn tui(args: TuiArgs) -> Result<ExitCode, CliError> {
    crate::tui::set_theme(args.theme.map(|theme| theme.name()));
    if let Some(url) = args.attach.clone() {
        let session = args.session.clone();
        return Ok(ExitCode::from(on_runtime(crate::tui::attach(
            url, session,
        ))??));
    }
    let options = RunOptions::from(args);
    Ok(ExitCode::from(on_runtime(crate::tui::tui(options))??))
}

/// `agent attach`: a turn on a running `agent serve`.
fn attach(args: AttachArgs) -> Result<ExitCode, CliError> {
    let options = crate::attach_cli::AttachOptions {
        url: args.url,
        session: args.session,
        auto: args.auto,
        format: args.format,
        prompt: prompt(args.prompt)?,
    };
    Ok(ExitCode::from(on_runtime(crate::attach_cli::attach(
        options,
    ))??))
}

/// `agent sessions …`: the stored sessions of this directory.
fn sessions(command: SessionsCommand) -> Result<ExitCode, CliError> {
    let dir = current_dir()?;
    // `export` is JSON (its strings already escape control characters);
    // everything else is shown to a person.
    let json = matches!(command, SessionsCommand::Export { .. });
    let text = on_runtime(async {
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
            SessionsCommand::Revert {
                id,
                message,
                part,
                force,
            } => crate::undo_cli::revert(&id, &message, part.as_deref(), force).await,
            SessionsCommand::Unrevert { id, force } => crate::undo_cli::unrevert(&id, force).await,
            SessionsCommand::Diff { id, message, stat } => {
                crate::undo_cli::diff(&id, message.as_deref(), stat).await
            }
        }
    })??;
    if json {
        print(&text)?
    } else {
        print_shown(&text)?
    }
    Ok(ExitCode::SUCCESS)
}

/// `agent approvals list | revoke`: the remembered "always" answers.
fn approvals(command: ApprovalsCommand) -> Result<ExitCode, CliError> {
    match command {
        ApprovalsCommand::List => {
            print_shown(&sessions_cli::approvals(&current_dir()?)?)?;
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Answer { id, reply, message } => {
            let reply = match (reply.as_str(), message) {
                ("once", _) => agentgate_permission::Reply::Once,
                ("always", _) => agentgate_permission::Reply::Always,
                (_, Some(feedback)) => agentgate_permission::Reply::correct(feedback),
                (_, None) => agentgate_permission::Reply::reject(),
            };
            let text = on_runtime(crate::pending_asks_cli::answer(&id, reply))??;
            print_shown(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Pending { json } => {
            let text = on_runtime(crate::pending_asks_cli::pending(json))??;
            if json {
                print(&text)?
            } else {
                print_shown(&text)?
            }
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Revoke {
            permission,
            pattern,
        } => {
            if sessions_cli::revoke(&current_dir()?, &permission, &pattern)? {
                print(&format!("revoked {permission} {pattern:?}\n"))?;
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "agent: no approval {} \"{}\" (see `agent approvals list`)",
                    crate::terminal_text::Untrusted::new(&permission),
                    crate::terminal_text::Untrusted::new(&pattern)
                );
                Ok(ExitCode::FAILURE)
            }
        }
    }
}

/// `agent trust [--list | --revoke DIR | DIR]`.
fn trust(args: TrustArgs) -> Result<ExitCode, CliError> {
    let text = if args.list {
        crate::trust_cli::list()?
    } else if let Some(dir) = args.revoke {
        let text = crate::trust_cli::revoke(&dir)?;
        record_trust(&dir, "revoked");
        text
    } else {
        let dir = crate::trust_cli::directory(args.dir)?;
        let text = crate::trust_cli::trust(&dir)?;
        record_trust(&dir, "trusted");
        text
    };
    // The trust decision is on disk before `agent` exits.
    on_runtime(async {})?;
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Records a trust decision in the audit log; a log that cannot be
/// opened is a warning, not a failed `agent trust`.
fn record_trust(dir: &std::path::Path, decision: &str) {
    let entry = agentgate_permission::AuditEntry::Trust {
        directory: dir.display().to_string(),
        decision: decision.to_string(),
        decided_by: "terminal".to_string(),
    };
    if let Err(error) = crate::workspace::record_audit(entry) {
        eprintln!(
            "agent: warning: the trust decision is not in the audit log: {}",
            crate::terminal_text::terminal_safe(&error.to_string())
        );
    }
}

/// `agent debug config | prompt | agent`.
fn debug(command: DebugCommand) -> Result<ExitCode, CliError> {
    let text = match command {
        DebugCommand::Config { json } => debug_cli::config(&current_dir()?, json)?,
        DebugCommand::Prompt { agent, model } => {
            debug_cli::prompt(&current_dir()?, &agent, model.as_deref())?
        }
        DebugCommand::Agent { config, name } => {
            let project = project(config.config)?;
            agents_cli::debug_agent(&project, &name)?
        }
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `agent permission check | rules | lint | eval`.
fn permission(command: PermissionCommand) -> Result<ExitCode, CliError> {
    match command {
        PermissionCommand::Check {
            config,
            agent,
            json,
            permission,
            pattern,
        } => {
            let project = project(config.config)?;
            print(&permission_cli::check(
                &project,
                Some(&agent),
                &permission,
                &pattern,
                json,
            )?)?;
            Ok(ExitCode::SUCCESS)
        }
        PermissionCommand::Rules { config, agent } => {
            let project = project(config.config)?;
            print(&permission_cli::rules(&project, agent.as_deref())?)?;
            Ok(ExitCode::SUCCESS)
        }
        PermissionCommand::Lint {
            config,
            agent,
            known,
            json,
        } => {
            let project = project(config.config)?;
            let report = permission_cli::lint(&project, agent.as_deref(), &known, json)?;
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
            let summary = eval::run(stdin, stdout).map_err(CliError::Eval)?;
            Ok(if summary.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

#[cfg(test)]
mod tests {
    /// The code of every source file of the CLI (test modules left out),
    /// by file name.
    fn sources() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![root];
        let mut out = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && path.file_name().is_some_and(|n| n != "tests.rs")
                {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    out.push((name.unwrap_or_default(), code));
                }
            }
        }
        out
    }

    #[test]
    fn one_runtime_is_built_and_only_here() {
        let sources = sources();
        assert!(sources.len() > 20, "the scan finds the sources");
        let builds: Vec<(String, usize)> = sources
            .iter()
            .map(|(name, code)| {
                let count = [
                    "Runtime::new(",
                    "Builder::new_multi_thread(",
                    "Builder::new_current_thread(",
                ]
                .iter()
                .map(|call| code.matches(call).count())
                .sum();
                (name.clone(), count)
            })
            .filter(|(_, count)| *count > 0)
            .collect();
        assert_eq!(
            builds,
            [("dispatch.rs".to_string(), 1)],
            "tokio runtimes built"
        );
    }
}
