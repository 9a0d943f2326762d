//! The command line as clap parses it: the commands, their flags and their
//! help texts, and nothing else. `dispatch` turns these into the plain
//! options and arguments the commands take.

use std::path::PathBuf;

use agentgate_tools::SandboxMode;
use clap::{Args, Parser, Subcommand};

use crate::permission_cli::{self, eval};
use crate::render::Format;
use crate::run_cli::RunOptions;

/// A reference CLI for the agent SDK.
#[derive(Debug, Parser)]
// The about line is the one `agent --help` always printed (it was the
// description of the package the binary came from).
#[command(
    name = "agent",
    version,
    about = "Reference command-line programs for the agent SDK (binary `agent`)."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    /// The full-screen terminal interface: a scrolling transcript (rendered
    /// markdown, highlighted code, tool calls with their output), a
    /// multi-line prompt editor with history, asks answered in a modal
    /// (o once, a always, r reject, f reject with feedback), a status line,
    /// the sessions panel and the / commands of `agent chat`. Ctrl-C
    /// cancels the turn, Ctrl-D or /exit quits. `agent` alone at a
    /// terminal opens it.
    Tui(TuiArgs),
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
    /// List the custom commands (the config's `command` map,
    /// .opencode/command(s)/**/*.md, the global config folder's, and each
    /// skill under its name) with description, agent and arguments. Run
    /// one with `agent run --command NAME [ARGS]` or `/NAME ARGS` in
    /// `agent chat`.
    Commands {
        /// Print a JSON array of {name, description, agent, model, subtask,
        /// source, path, arguments}.
        #[arg(long)]
        json: bool,
    },
    /// Trust a project's configuration: show what its opencode.json(c) and
    /// .opencode/ would do (start commands, connect to URLs, redirect a
    /// provider, allow what your rules ask) and record it as trusted. An
    /// untrusted project's configuration does none of that; when what it
    /// would do changes after trust, it is untrusted again.
    Trust(TrustArgs),
    /// The audit log of permission decisions: every ask, its answer and
    /// who gave it, every allow or deny by rule with the rule and layer,
    /// every trust decision. --verify checks the hash chain and names the
    /// first entry altered or removed (exit status 1).
    Audit(AuditArgs),
    /// Inspect how the configuration is resolved.
    #[command(subcommand)]
    Debug(DebugCommand),
    /// MCP servers of the config's `mcp` key.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed's
    /// `agent_servers`, other ACP clients; see docs/acp.md): asks become
    /// the editor's permission requests, sessions are stored as for
    /// `agent run`. stdout carries protocol messages only.
    Acp(AcpArgs),
    /// Serve opencode's HTTP API (routes, events and JSON of `opencode
    /// serve`; see docs/server.md) for web hosts and opencode's clients:
    /// asks wait for an HTTP reply. Loopback only unless --hostname says
    /// otherwise, and then with a password.
    Serve(ServeArgs),
    /// Run one prompt in a session of an `agent serve` (or `opencode
    /// serve`) server and answer its asks here: at the terminal, allowed
    /// once with --auto, otherwise rejected with a warning. Prints as
    /// `agent run` does; same exit status. The password comes from
    /// OPENCODE_SERVER_PASSWORD or AGENT_SERVER_PASSWORD.
    Attach(AttachArgs),
}

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// Only this session's entries.
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Only entries since TIME: 2025-01-31T12:00:00Z, 2025-01-31, or a
    /// span back from now (30m, 2h, 7d).
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,
    /// Verify the hash chain of the whole log.
    #[arg(long)]
    pub(crate) verify: bool,
    /// One JSON object per line (with --verify: the verdict as JSON).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The project directory (default: the current one; its worktree root
    /// is what is trusted).
    pub(crate) dir: Option<PathBuf>,
    /// List the trusted projects and what each may do.
    #[arg(long, conflicts_with_all = ["dir", "revoke"])]
    pub(crate) list: bool,
    /// Stop trusting DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    pub(crate) revoke: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct AttachArgs {
    /// The server's URL, e.g. http://127.0.0.1:4096.
    pub(crate) url: String,
    /// Continue this session (default: a new one).
    #[arg(long, short, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Allow every ask once (deny rules on the server still deny).
    #[arg(long)]
    pub(crate) auto: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// The prompt (read from stdin when absent or `-`).
    pub(crate) prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The port to listen on (0: any free one; the URL is printed).
    #[arg(long, default_value_t = agentgate::server::DEFAULT_PORT)]
    pub(crate) port: u16,
    /// The address to listen on. Anything but a loopback address needs a
    /// password: OPENCODE_SERVER_PASSWORD or AGENT_SERVER_PASSWORD (user
    /// `opencode`, or OPENCODE_SERVER_USERNAME), else one is generated and
    /// printed once on stderr.
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) hostname: String,
    /// An origin browsers may call the API from (repeatable); none by
    /// default.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) cors: Vec<String>,
    /// The model, as provider/model.
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// Run bash commands in a sandbox (see `agent run --help`).
    #[arg(long, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,
    /// Keep sessions, approvals and pending asks in this PostgreSQL
    /// database (postgres://user:password@host:port/database), shared by
    /// every `agent serve` given the same one: a session created on one is
    /// prompted on another, an ask raised on one is answered on another.
    /// Default: the data directory's SQLite database (asks kept there too,
    /// so they outlive the process).
    #[arg(long, value_name = "URL", env = "AGENT_DATABASE_URL")]
    pub(crate) database: Option<String>,
    /// The PostgreSQL schema for the tables (default `public`).
    #[arg(long, value_name = "NAME", requires = "database")]
    pub(crate) database_schema: Option<String>,
    /// Trust the project's configuration for this server (its MCP
    /// commands, provider URLs, allow rules), as `agent trust` would, without
    /// recording it. Without it, a project not trusted with `agent trust`
    /// is served with those parts set aside, and the page says so.
    #[arg(long)]
    pub(crate) trust_project: bool,
    /// Reject a permission ask nobody answered within SECONDS, saying so,
    /// and end its turn, so unattended work always ends (default: asks wait
    /// until answered).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) ask_deadline: Option<u64>,
    /// Drop a turn that has waited at an ask for SECONDS from memory (0:
    /// at once): the ask stays saved in the database, and its answer, on
    /// any server sharing it, resumes the turn there.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub(crate) park_asks_after: u64,
}

impl From<ServeArgs> for crate::serve_cli::ServeOptions {
    fn from(args: ServeArgs) -> Self {
        crate::serve_cli::ServeOptions {
            port: args.port,
            hostname: args.hostname,
            cors: args.cors,
            model: args.model,
            sandbox: args.sandbox,
            database: args.database,
            database_schema: args.database_schema,
            trust_project: args.trust_project,
            ask_deadline: args.ask_deadline.map(std::time::Duration::from_secs),
            park_asks_after: std::time::Duration::from_secs(args.park_asks_after),
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct AcpArgs {
    /// The agent new sessions start in (the editor's mode picker switches).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The model, as provider/model.
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// Run bash commands in a sandbox (see `agent run --help`).
    #[arg(long, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,
}

impl From<AcpArgs> for crate::acp_cli::AcpOptions {
    fn from(args: AcpArgs) -> Self {
        crate::acp_cli::AcpOptions {
            agent: args.agent,
            model: args.model,
            sandbox: args.sandbox,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
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
pub(crate) struct RunArgs {
    /// The agent to run (see `agent agents`).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The model, as provider/model (anthropic/..., openai/..., google/...,
    /// ollama/..., or a provider entry of the config).
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// Allow every ask once (deny rules still deny).
    #[arg(long, visible_alias = "dangerously-skip-permissions", alias = "yolo")]
    pub(crate) auto: bool,
    /// Continue the latest session of this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub(crate) continue_last: bool,
    /// Continue session ID (see `agent sessions list`).
    #[arg(long, short, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// text: the answer on stdout; json: one JSON event per line.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Also show each command's output and each edit's diff on stderr
    /// (the last 40 lines of each), as `opencode run` does.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    /// The OS sandbox bash commands run in: read-only, workspace-write
    /// (the default, or the config's `sandbox` key) or danger-full-access.
    #[arg(long, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,
    /// End the turn with an error (exit 1) when it runs longer than this
    /// many seconds (model calls, retries and tools together).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub(crate) max_time: Option<std::time::Duration>,
    /// Retry a failed model call at most N times (default 8, or the
    /// config's `retry.max_retries`); 0 never retries.
    #[arg(long, value_name = "N")]
    pub(crate) max_retries: Option<u32>,
    /// Run custom command NAME (see `agent commands`) with the words
    /// after the flags as its arguments. Its `!`cmd`` lines ask `bash`
    /// permission like a model's call (rejected without --auto, and then
    /// nothing is sent); an `@file` the read rules refuse is left out.
    #[arg(long, value_name = "NAME")]
    pub(crate) command: Option<String>,
    /// The final answer must be JSON valid against the JSON schema in
    /// FILE: the model is told the schema, an answer that breaks it is sent
    /// back with what failed (twice at most), and the validated JSON is
    /// printed on stdout; exit 1 if no answer validates.
    #[arg(long, value_name = "FILE")]
    pub(crate) output_schema: Option<std::path::PathBuf>,
    /// Write the final assistant message to FILE.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output_last_message: Option<std::path::PathBuf>,
    /// Title the new session TITLE (with no value: the prompt's first 50
    /// characters); a session given a title gets no generated one.
    #[arg(long, value_name = "TITLE", num_args = 0..=1, default_missing_value = "")]
    pub(crate) title: Option<String>,
    /// Attach FILE to the prompt (repeatable): a text file is sent as
    /// text, a png, jpeg, gif or webp image as an image (for models that
    /// accept images).
    #[arg(long = "file", short = 'f', value_name = "FILE")]
    pub(crate) files: Vec<std::path::PathBuf>,
    /// The prompt; read from stdin when absent (or `-`). With --command,
    /// the command's arguments.
    pub(crate) prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    /// The agent to run (see `agent agents`).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The model, as provider/model.
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// Continue the latest session of this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub(crate) continue_last: bool,
    /// Continue session ID.
    #[arg(long, short, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Run bash commands in a sandbox (see `agent run --help`).
    #[arg(long, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,
}

#[derive(Debug, Default, Args)]
pub(crate) struct TuiArgs {
    /// The agent to run (see `agent agents`).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// The model, as provider/model.
    #[arg(long, short, value_name = "PROVIDER/MODEL")]
    pub(crate) model: Option<String>,
    /// Continue the latest session of this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub(crate) continue_last: bool,
    /// Continue session ID.
    #[arg(long, short, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Run bash commands in a sandbox (see `agent run --help`).
    #[arg(long, value_name = "MODE")]
    pub(crate) sandbox: Option<SandboxMode>,
    /// Drive a session of an `agent serve` (or `opencode serve`) server
    /// at URL instead of an agent in this process.
    #[arg(long, value_name = "URL", conflicts_with_all = ["agent", "model", "continue_last", "sandbox"])]
    pub(crate) attach: Option<String>,
    /// The colours of highlighted code: for a light or a dark terminal,
    /// or `auto` from COLORFGBG (default: AGENT_TUI_THEME, else dark).
    #[arg(long, value_name = "THEME")]
    pub(crate) theme: Option<TuiTheme>,
}

/// `agent tui --theme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TuiTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
    /// Light when COLORFGBG names a light background.
    Auto,
}

impl TuiTheme {
    /// The flag's value as typed.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TuiTheme::Light => "light",
            TuiTheme::Dark => "dark",
            TuiTheme::Auto => "auto",
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// id, last update (local time), message count and title of each
    /// session, the most recently updated first (the first prompt stands
    /// for a missing title).
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
    /// Delete a session and its messages.
    Delete {
        /// The session id.
        id: String,
    },
    /// Give a session a new title.
    Rename {
        /// The session id.
        id: String,
        /// The new title (the words are joined).
        #[arg(required = true, num_args = 1..)]
        title: Vec<String>,
    },
    /// Copy a session into a new one (printed), as opencode's fork: the
    /// messages before --message, or all of them; the title gets
    /// "(fork #N)".
    Fork {
        /// The session id.
        id: String,
        /// Copy only the messages before this one (see `agent sessions show`
        /// or `export` for message ids).
        #[arg(long, value_name = "MSG_ID")]
        message: Option<String>,
    },
    /// Take back what a session did from a message on, as opencode's
    /// revert: the files its later steps changed (commands' changes
    /// included) are restored, the later messages hidden until the next
    /// prompt drops them or `unrevert` puts everything back. Refuses when
    /// a file changed since, unless --force.
    Revert {
        /// The session id.
        id: String,
        /// The first message taken back (`agent sessions show ID --ids`
        /// lists them; a user message takes back its prompt).
        message: String,
        /// Take back only from this part of the message on.
        #[arg(long, value_name = "PART_ID")]
        part: Option<String>,
        /// Overwrite files changed since by someone else.
        #[arg(long)]
        force: bool,
    },
    /// Put back everything `revert` took back.
    Unrevert {
        /// The session id.
        id: String,
        /// Overwrite files changed since the revert.
        #[arg(long)]
        force: bool,
    },
    /// What a session changed in the project's files, per file with a
    /// unified diff: all of it, or what the answer to --message changed.
    Diff {
        /// The session id.
        id: String,
        /// Only this message's changes (a user message: its answer's).
        #[arg(long, value_name = "MSG_ID")]
        message: Option<String>,
        /// Only the list of files, without the diffs.
        #[arg(long)]
        stat: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApprovalsCommand {
    /// The remembered rules.
    List,
    /// The asks waiting for an answer in `agent serve` on this machine's
    /// database, also those of a server that stopped: id, session,
    /// permission, patterns and age. Answer one with `POST
    /// /permission/ID/reply` on a running `agent serve`.
    Pending {
        /// Print a JSON array of {id, sessionID, permission, patterns,
        /// created} instead.
        #[arg(long)]
        json: bool,
    },
    /// Answer a saved ask of an `agent serve` that stopped, and resume its
    /// turn here: the call runs once (or is rejected), then the turn goes
    /// on; asks it raises later are rejected. An ask of a running server is
    /// answered through that server.
    Answer {
        /// The ask's id (`agent approvals pending`).
        id: String,
        /// once, always or reject.
        #[arg(value_parser = ["once", "always", "reject"])]
        reply: String,
        /// With reject: feedback the model reads (the turn goes on).
        #[arg(long)]
        message: Option<String>,
    },
    /// Forget the approval of PERMISSION on PATTERN.
    Revoke {
        /// e.g. bash.
        permission: String,
        /// e.g. "git status *".
        pattern: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum DebugCommand {
    /// Each top-level setting of the configuration and the file it came from.
    Config {
        /// Print the resolved configuration as one JSON object instead, as
        /// `opencode debug config` does.
        #[arg(long)]
        json: bool,
    },
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
pub(crate) struct ConfigArg {
    /// opencode config file (JSON or JSONC) whose `permission` key holds the
    /// user's rules. Default: opencode.jsonc and opencode.json in the current
    /// directory, if present; else no user rules. Markdown agents are read
    /// from .opencode/ in the current directory and, with this option, from
    /// .opencode/ next to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionCommand {
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
        /// The request pattern: a path, a URL ...; for bash a whole command
        /// line, judged request by request as the bash tool asks them
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
    /// Report the user's rules that can never decide, specific-before-generic
    /// ordering mistakes, unknown permission names, and (a warning) a bash
    /// allow-all with deny rules. Built-in rules are never reported. Exit
    /// status 1 when there are findings, warnings included.
    Lint {
        #[command(flatten)]
        config: ConfigArg,
        /// Lint only this agent's layers (default: the default agent's and
        /// those of every agent the config or a markdown file configures).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// A permission name or wildcard to accept besides the built-in ones,
        /// the config's MCP servers and the custom tools; repeatable.
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

impl RunArgs {
    /// The options of `agent run`, with the prompt already read (from the
    /// arguments or stdin).
    pub(crate) fn into_options(self, prompt: String) -> RunOptions {
        RunOptions {
            agent: self.agent,
            model: self.model,
            auto: self.auto,
            continue_last: self.continue_last,
            session: self.session,
            format: self.format,
            verbose: self.verbose,
            sandbox: self.sandbox,
            prompt,
            directory: None,
            max_time: self.max_time,
            max_retries: self.max_retries,
            command: self.command,
            output_schema: self.output_schema,
            output_last_message: self.output_last_message,
            title: self.title,
            files: self.files,
        }
    }
}

/// A positive number of seconds (`90`, `0.5`).
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, found {text:?}"))?;
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!(
            "expected a number of seconds above 0, found {text:?}"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

impl From<TuiArgs> for RunOptions {
    /// The options of `agent tui`: those of `agent chat`.
    fn from(args: TuiArgs) -> Self {
        RunOptions {
            agent: args.agent,
            model: args.model,
            continue_last: args.continue_last,
            session: args.session,
            sandbox: args.sandbox,
            ..RunOptions::default()
        }
    }
}

impl From<ChatArgs> for RunOptions {
    /// The options of `agent chat`: no prompt (lines are read one by one),
    /// never `--auto` (a person answers the asks).
    fn from(args: ChatArgs) -> Self {
        RunOptions {
            agent: args.agent,
            model: args.model,
            continue_last: args.continue_last,
            session: args.session,
            sandbox: args.sandbox,
            ..RunOptions::default()
        }
    }
}
