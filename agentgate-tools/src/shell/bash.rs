//! The `bash` tool (§8): asks `external_directory` and `bash` for what the
//! command line touches ([`plan_requests`]), and `read` for each file its
//! arguments name that a `read` rule denies or asks (`read_args`), then
//! runs it with
//! `bash -c` (or `sh -c` where bash is missing) in its own process group,
//! streaming its output to the call's live metadata. On timeout or
//! cancellation the **whole process group** is ended (SIGTERM, then SIGKILL
//! after a grace), so background children do not outlive the call.
//!
//! The child runs under the tool's [`Sandbox`] (see `sandbox`): a filtered
//! environment, and on Linux its own PID namespace (every descendant ends
//! with the call), Landlock and, with the network off, a network namespace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentgate_core::truncation::Truncator;
use agentgate_core::{ChangeScope, ToolContext, ToolError, ToolOutput, TypedTool};
use agentgate_permission::{Allowed, AskRequest, PermissionError, SANDBOX_GRANT_KEY};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

mod read_args;
mod requests;

pub use requests::bash_requests;

use crate::changes;
use crate::files::external::EXTERNAL_DIRECTORY;
use crate::files::paths;
use crate::files::protected::PROTECTED_PATH;
use crate::files::request::ToolRequest;
use crate::limits::BashLimits;
use crate::sandbox::{CallScope, Sandbox, SandboxedChild, approved_directories};
use crate::shell::bash_scan::{BASH_OPAQUE, ScanError};

/// The tool id and permission name.
pub const BASH: &str = "bash";
const DESCRIPTION: &str = "Runs a shell command with bash (sh where bash is missing) in the \
project directory or `workdir`, and returns its combined stdout and stderr. Commands time out \
after `timeout` milliseconds (default 120000, at most 600000); a timed-out or cancelled command is killed with \
everything it started. Prefer the dedicated tools for reading, searching and editing files.";

/// The arguments of the `bash` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command line to run.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<i64>,
    /// The directory to run in (default: the project directory); relative
    /// paths are resolved against it.
    #[serde(default)]
    pub workdir: Option<String>,
    /// A short description of what the command does, in 5-10 words.
    #[serde(default)]
    pub description: Option<String>,
}

/// Why a bash call failed before or while running its command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BashError {
    /// The `timeout` argument was negative.
    #[error("Invalid timeout value: {0}. Timeout must be a positive number of milliseconds.")]
    NegativeTimeout(i64),
    /// The command line could not be scanned for its permission request.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The line names (or its globs match) more files and folders than can
    /// be checked against the `read` rules.
    #[error(
        "The command names or matches too many files and folders to check against the read rules (more than {0} look-ups); split it into smaller commands or use narrower globs."
    )]
    TooManyGlobEntries(usize),
    /// `workdir` is not an existing directory.
    #[error(
        "The workdir {0} is not an existing directory; pass an existing directory or leave workdir out to run in the project directory."
    )]
    Workdir(String),
    /// The shell could not be started.
    #[error(
        "Could not start {shell}: {reason}. Check that a POSIX shell is installed and on PATH."
    )]
    Spawn {
        /// The shell that was tried.
        shell: String,
        /// The OS error.
        reason: String,
    },
}

impl From<BashError> for ToolError {
    fn from(error: BashError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

/// The `bash` tool. Configure with the builder methods; `Default` uses
/// [`BashLimits::default`] (a 2 minute timeout, a 3 s kill grace) and
/// agentgate-core's default truncation.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    limits: BashLimits,
    truncator: Option<Truncator>,
    shell: Option<PathBuf>,
    sandbox: Sandbox,
}

impl BashTool {
    /// A bash tool with the defaults.
    pub fn new() -> Self {
        BashTool::default()
    }

    /// Sets every limit at once.
    pub fn with_limits(mut self, limits: BashLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &BashLimits {
        &self.limits
    }

    /// Sets the timeout used when a call gives none.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.limits.default_timeout = timeout;
        self
    }

    /// Sets the longest timeout a call may ask for; larger `timeout`
    /// arguments are lowered to it.
    pub fn with_max_timeout(mut self, timeout: Duration) -> Self {
        self.limits.max_timeout = timeout;
        self
    }

    /// Sets the time between SIGTERM and SIGKILL.
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.limits.kill_grace = grace;
        self
    }

    /// Sets how output is truncated and where the full output is spilled
    /// (default: the call context's [`truncator`](ToolContext::truncator),
    /// whose spill directory an engine puts in the agent's data directory).
    /// The spill directory is never writable to commands; the tool writes
    /// it without following links.
    pub fn with_truncator(mut self, truncator: Truncator) -> Self {
        self.truncator = Some(truncator);
        self
    }

    /// Runs commands with this shell (called as `SHELL -c COMMAND`) instead
    /// of bash from `PATH`.
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = Some(shell.into());
        self
    }

    /// Runs commands under this sandbox (default: `workspace-write`, see
    /// [`SandboxPolicy`](crate::SandboxPolicy)).
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The sandbox commands run under; its
    /// [`status`](Sandbox::status) says what this machine enforces.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    fn shell(&self) -> PathBuf {
        if let Some(shell) = &self.shell {
            return shell.clone();
        }
        find_in_path("bash").unwrap_or_else(|| PathBuf::from("sh"))
    }
}

/// The first `name` on `PATH` that is a file.
fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
    /// The command reached a `sandbox.limits` ceiling.
    LimitReached,
}

/// The output collected so far.
struct Captured {
    bytes: Vec<u8>,
    dropped: usize,
    max_bytes: usize,
    tail_bytes: usize,
}

impl Captured {
    fn new(limits: &BashLimits) -> Self {
        Captured {
            bytes: Vec::new(),
            dropped: 0,
            max_bytes: limits.max_capture_bytes,
            tail_bytes: limits.metadata_output_bytes,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let room = self.max_bytes.saturating_sub(self.bytes.len());
        let take = room.min(chunk.len());
        self.bytes.extend_from_slice(&chunk[..take]);
        self.dropped += chunk.len() - take;
    }

    /// All that was kept, as text (invalid UTF-8 replaced), and a line on
    /// what was not.
    fn into_text(self) -> String {
        // Valid output (nearly all) becomes the string without a copy.
        let mut text = String::from_utf8(self.bytes)
            .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned());
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n[{} more bytes of output were not kept]",
                self.dropped
            ));
        }
        text
    }

    fn tail(&self) -> String {
        let start = self.bytes.len().saturating_sub(self.tail_bytes);
        String::from_utf8_lossy(&self.bytes[start..]).into_owned()
    }
}

#[async_trait::async_trait]
impl TypedTool for BashTool {
    type Args = BashArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        BASH
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn run(&self, args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = match args.timeout {
            Some(ms) if ms < 0 => return Err(BashError::NegativeTimeout(ms).into()),
            Some(ms) => Duration::from_millis(ms.unsigned_abs()),
            None => self.limits.default_timeout,
        }
        .min(self.limits.max_timeout);
        let cwd = match &args.workdir {
            Some(workdir) => paths::resolve(&ctx.directory, Path::new(workdir)),
            None => paths::resolve(&ctx.directory, Path::new(".")),
        };
        // Every permission request comes before any side effect (§8.2):
        // the directories and commands, then the read rules binding the
        // files the arguments name (see `read_args`).
        let requests = bash_requests(
            &args.command,
            &cwd,
            &paths::resolve(&ctx.directory, Path::new(".")),
            &paths::resolve(&ctx.worktree, Path::new(".")),
            ctx.ruleset(),
            &ctx.permissions().approved(),
        )?;
        // Only a person's explicit grant widens the sandbox (never a rule,
        // `--auto` or a plain `once`).
        let grantable = self.sandbox.offers_grants();
        let mut granted = Vec::new();
        for request in &requests {
            if request.permission == BASH_OPAQUE {
                request.ask_by_name(ctx).await?;
            } else if grantable && request.permission == EXTERNAL_DIRECTORY {
                if ask_grantable(request, ctx).await? == Allowed::Grant {
                    granted.push(request.clone());
                }
            } else {
                request.ask(ctx).await?;
            }
        }
        if !cwd.is_dir() {
            return Err(BashError::Workdir(cwd.display().to_string()).into());
        }
        let title = args
            .description
            .clone()
            .unwrap_or_else(|| args.command.clone());
        let description = args.description.clone().unwrap_or_default();
        ctx.metadata(
            Some(&title),
            json!({"output": "", "description": description}),
        );

        let truncator = self
            .truncator
            .clone()
            .unwrap_or_else(|| ctx.truncator().clone());
        let scope = CallScope {
            session_id: ctx.session_id.clone(),
            directory: paths::resolve(&ctx.directory, Path::new(".")),
            worktree: paths::resolve(&ctx.worktree, Path::new(".")),
            cwd: cwd.clone(),
            tool_output: Some(truncator.spill_dir.clone()),
            approved: approved_directories(&granted),
        };
        let mut sandbox = self
            .sandbox
            .prepare(&scope)
            .map_err(|error| ToolError::Failed(error.to_string()))?;

        let shell = self.shell();
        // The command may change anything in the project: compared whole.
        changes::before(ctx, ChangeScope::Project).await;
        let spawned = sandbox.spawn(&shell, ["-c", args.command.as_str()], &cwd);
        if spawned.is_err() {
            changes::after(ctx, ChangeScope::Project).await;
        }
        let mut child = spawned.map_err(|error| BashError::Spawn {
            shell: shell.display().to_string(),
            reason: error.to_string(),
        })?;
        let mut group = ProcessGroup::new(child.id());

        let (sender, mut receiver) = mpsc::channel::<Vec<u8>>(64);
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(pump(stdout, sender.clone()));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(pump(stderr, sender.clone()));
        }
        drop(sender);

        let mut captured = Captured::new(&self.limits);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut status = None;
        let mut pipes_open = true;
        // Pinned once: output arriving faster than its period (a fork bomb
        // reporting each failed fork) must not restart it.
        let limit = sandbox.limit_watch();
        tokio::pin!(limit);
        let ending = loop {
            tokio::select! {
                chunk = receiver.recv(), if pipes_open => match chunk {
                    Some(chunk) => {
                        captured.push(&chunk);
                        // What has already arrived goes into one update:
                        // a burst of output is one live update, not one
                        // per pipe read. Bounded, so a command that never
                        // stops writing cannot keep the loop from its
                        // deadline.
                        for _ in 0..64 {
                            let Ok(more) = receiver.try_recv() else {
                                break;
                            };
                            captured.push(&more);
                        }
                        ctx.metadata(
                            Some(&title),
                            json!({"output": captured.tail(), "description": description}),
                        );
                    }
                    None => pipes_open = false,
                },
                exit = child.wait(), if status.is_none() => {
                    status = Some(exit.ok().and_then(|s| s.code()));
                }
                () = &mut deadline => break Ending::TimedOut,
                _ = &mut limit => break Ending::LimitReached,
                () = ctx.cancel.cancelled() => break Ending::Cancelled,
            }
            if let Some(code) = status {
                if !pipes_open {
                    break Ending::Exited(code);
                }
                // The shell exited; background children may still hold the
                // pipes open. Take what is already written, then stop.
                let drain = tokio::time::sleep(Duration::from_millis(100));
                tokio::pin!(drain);
                loop {
                    tokio::select! {
                        chunk = receiver.recv() => match chunk {
                            Some(chunk) => captured.push(&chunk),
                            None => break,
                        },
                        () = &mut drain => break,
                    }
                }
                break Ending::Exited(code);
            }
        };

        if matches!(
            ending,
            Ending::TimedOut | Ending::Cancelled | Ending::LimitReached
        ) {
            // At a ceiling there is nothing to wind down gracefully.
            let grace = match ending {
                Ending::LimitReached => Duration::ZERO,
                _ => self.limits.kill_grace,
            };
            group.terminate(&mut child, grace).await;
            // Keep what was written before the kill.
            while let Ok(chunk) = receiver.try_recv() {
                captured.push(&chunk);
            }
        }
        group.disarm();

        // What the next run trusts and the command could still create (a
        // protected name absent at the start, or a link it replaced): asked
        // now, undone unless allowed (or the call was cancelled).
        let mut protected_notes = Vec::new();
        let mut protected_refusal = None;
        for change in sandbox.protected_changes() {
            let (note, refusal) = settle_protected(&change, &args.command, ending, ctx).await;
            protected_notes.push(note);
            if let Some(refusal) = refusal {
                protected_refusal.get_or_insert(refusal);
            }
        }
        sandbox.settled();
        // After protected changes were settled: what was undone is not recorded.
        changes::after(ctx, ChangeScope::Project).await;

        let mut output = captured.into_text();
        if let Some(note) = &ending_note(ending, timeout) {
            output.push_str(&format!("\n\n<shell_metadata>\n{note}\n</shell_metadata>"));
        }
        let denials = sandbox.denials(&output);
        let mut sandbox_note: Vec<String> = sandbox.note(&denials).into_iter().collect();
        sandbox_note.extend(protected_notes.iter().cloned());
        if !sandbox_note.is_empty() {
            output.push_str(&format!(
                "\n\n<sandbox>\n{}\n</sandbox>",
                sandbox_note.join("\n")
            ));
        }
        let sandbox_metadata = sandbox.metadata(&denials);
        let exit = match ending {
            Ending::Exited(code) => json!(code),
            _ => serde_json::Value::Null,
        };
        ctx.metadata(
            Some(&title),
            json!({"output": output, "description": description, "exit": exit, "sandbox": sandbox_metadata}),
        );
        if ending == Ending::Cancelled {
            return Err(ToolError::Cancelled);
        }
        if let Some(refusal) = protected_refusal {
            return Err(refusal.into());
        }
        let shown = crate::spill::truncate_and_spill(&truncator, BASH, output.clone()).await;
        let truncated = shown != output;
        // The output is stored once, as the call's output: the running
        // updates above carried the live tail in `metadata.output`, and
        // viewers that read it from a finished call (opencode's) get it
        // filled in from the output where they are served.
        Ok(ToolOutput::text(shown)
            .with_title(title)
            .with_metadata(json!({
                "exit": exit,
                "description": description,
                "truncated": truncated,
                "sandbox": sandbox_metadata,
            })))
    }
}

/// What the model is told of how the command ended (`None`: it succeeded).
fn ending_note(ending: Ending, timeout: Duration) -> Option<String> {
    match ending {
        Ending::TimedOut => Some(format!(
            "bash tool terminated command after exceeding timeout {} ms",
            timeout.as_millis()
        )),
        Ending::Cancelled => Some("User aborted the command".to_string()),
        Ending::LimitReached => {
            Some("the sandbox ended the command at one of its limits".to_string())
        }
        Ending::Exited(Some(0)) => None,
        Ending::Exited(Some(code)) => Some(format!("exit code: {code}")),
        Ending::Exited(None) => Some("the command was ended by a signal".to_string()),
    }
}

/// Asks `protected_path` for a protected name the command created (or a
/// link it replaced) and undoes the change unless it is kept: by a rule
/// naming `protected_path`, an earlier or present `always`, or a person's
/// grant. A `once` (what `--auto` and other automatic approvers answer)
/// does not keep it: automatic approvals never widen what the sandbox
/// protects. A cancelled call asks nothing and undoes. Returns the note for
/// the model and, when undone after a refusal, the refusal.
async fn settle_protected(
    change: &crate::sandbox::ProtectedChange,
    command: &str,
    ending: Ending,
    ctx: &ToolContext,
) -> (String, Option<PermissionError>) {
    let path = change.path.display().to_string();
    let verb = if change.replaced_link.is_some() {
        "replaced the link"
    } else {
        "created"
    };
    let request = ToolRequest::new(PROTECTED_PATH, path.clone(), &path).with_metadata(json!({
        "filepath": path,
        "protected": path,
        "command": command,
        "change": verb,
    }));
    let answer = if ending == Ending::Cancelled {
        Err(PermissionError::Rejected)
    } else {
        ask_grantable(&request, &request.named_context(ctx)).await
    };
    let refusal = match answer {
        Ok(Allowed::ByRules | Allowed::Always | Allowed::Grant) => {
            return (
                format!(
                    "The command {verb} {path}, a protected path later runs trust; it was allowed and kept."
                ),
                None,
            );
        }
        Ok(_) => None,
        Err(error) => Some(error),
    };
    let why = if refusal.is_some() {
        "that was not allowed"
    } else {
        "a `once` approval does not keep it (a protected_path rule, an `always` or a person's grant does)"
    };
    let note = match change.undo() {
        Ok(aside) => format!(
            "The command {verb} {path}, a protected path later runs trust, and {why}: the new entry was moved to {}. Change protected paths with the write or edit tool, which asks first.",
            aside.display()
        ),
        Err(undo) => format!(
            "The command {verb} {path}, a protected path later runs trust, and {why}, but it could not be undone: {undo}"
        ),
    };
    (note, refusal)
}

/// Asks `request` offering a sandbox grant ([`SANDBOX_GRANT_KEY`]), as
/// [`ToolRequest::ask`] does otherwise; how it was allowed.
async fn ask_grantable(
    request: &ToolRequest,
    ctx: &ToolContext,
) -> Result<Allowed, PermissionError> {
    let mut metadata = request.metadata.clone();
    if let serde_json::Value::Object(map) = &mut metadata {
        map.insert(SANDBOX_GRANT_KEY.to_string(), serde_json::Value::Bool(true));
    }
    let ask = AskRequest::new(
        ctx.session_id.as_str(),
        request.permission.as_str(),
        request.patterns.iter().cloned(),
    )
    .always(request.always.iter().cloned())
    .metadata(metadata)
    .ruleset(ctx.ruleset().clone())
    .ceilings(ctx.ceilings().to_vec())
    .tool(ctx.message_id.as_str(), ctx.call_id.as_str());
    tokio::select! {
        result = ctx.permissions().ask_answer(ask) => result,
        () = ctx.cancel.cancelled() => Err(PermissionError::Rejected),
    }
}

/// Copies a pipe into the channel until it closes.
async fn pump(mut reader: impl tokio::io::AsyncRead + Unpin, sender: mpsc::Sender<Vec<u8>>) {
    // A pipe holds 64 KiB: one read can take all that is buffered. The
    // buffer is never zeroed (`read_buf` fills spare capacity), so a pipe
    // that stays quiet, as stderr mostly does, costs no page of it.
    let mut buffer: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        buffer.clear();
        match reader.read_buf(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if sender.send(buffer.clone()).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The process group of a running command. Dropping it SIGKILLs the group,
/// so a call abandoned mid-run (its future dropped) leaves nothing behind.
struct ProcessGroup {
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: Option<i32>,
    #[cfg_attr(not(unix), allow(dead_code))]
    armed: bool,
}

impl ProcessGroup {
    fn new(pid: Option<u32>) -> Self {
        ProcessGroup {
            pgid: pid.and_then(|pid| i32::try_from(pid).ok()),
            armed: true,
        }
    }

    /// The run is over: do not signal the group on drop (what the command
    /// left running in the background on purpose stays; a finished group's
    /// id is never signalled again).
    fn disarm(&mut self) {
        self.armed = false;
    }

    /// SIGTERM to the group, then SIGKILL once `grace` has passed with any
    /// member left.
    async fn terminate(&mut self, child: &mut SandboxedChild, grace: Duration) {
        #[cfg(unix)]
        {
            self.signal(Some(nix::sys::signal::Signal::SIGTERM));
            let give_up = tokio::time::Instant::now() + grace;
            loop {
                // Reap the shell so it does not count as a live member.
                let _ = child.try_wait();
                if !self.alive() || tokio::time::Instant::now() >= give_up {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            self.signal(Some(nix::sys::signal::Signal::SIGKILL));
            let _ = child.wait().await;
            self.disarm();
        }
        #[cfg(not(unix))]
        {
            let _ = grace;
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    #[cfg(unix)]
    fn signal(&self, signal: Option<nix::sys::signal::Signal>) -> bool {
        match self.pgid {
            Some(pgid) if pgid > 0 => {
                nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal).is_ok()
            }
            _ => false,
        }
    }

    #[cfg(unix)]
    fn alive(&self) -> bool {
        self.signal(None)
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.armed {
            self.signal(Some(nix::sys::signal::Signal::SIGKILL));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(max_capture_bytes: usize, chunks: &[&[u8]]) -> Captured {
        let mut captured = Captured::new(&BashLimits {
            max_capture_bytes,
            ..BashLimits::default()
        });
        for chunk in chunks {
            captured.push(chunk);
        }
        captured
    }

    #[test]
    fn output_becomes_text_with_invalid_bytes_replaced_and_drops_noted() {
        assert_eq!(
            captured(100, &[b"ok\n", "é\n".as_bytes()]).into_text(),
            "ok\né\n"
        );
        // A character split across two reads is whole again.
        let e = "é".as_bytes();
        assert_eq!(captured(100, &[&e[..1], &e[1..]]).into_text(), "é");
        assert_eq!(
            captured(100, &[b"a\xffb", b"\xc3"]).into_text(),
            "a\u{fffd}b\u{fffd}"
        );
        assert_eq!(
            captured(4, &[b"abc", b"def"]).into_text(),
            "abcd\n[2 more bytes of output were not kept]"
        );
    }
}
