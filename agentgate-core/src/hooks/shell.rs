//! [`ShellHook`]: a hook that is a shell command (the configuration's
//! `hooks` key), run with the event as JSON on stdin and answering with
//! Claude Code's contract: its exit status and what it prints.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Hook, HookDecision, HookError, HookEvent, HookEventName, HookOutcome};

/// How long a shell hook may run when its entry names no `timeout`
/// (Claude Code's default).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of a hook's stdout and of its stderr that is read, in bytes;
/// an answer longer than this is not valid.
pub const HOOK_OUTPUT_LIMIT: usize = 64 * 1024;

/// Which tools a hook entry is for: Claude Code's `matcher`, as the subset
/// of its syntax that names tools — alternatives separated by `|`, each a
/// tool name or a `*` wildcard, compared without regard to case (so
/// `Bash` matches this engine's `bash`). Empty or `*`: every tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMatcher {
    alternatives: Vec<String>,
}

impl ToolMatcher {
    /// The matcher `pattern` describes.
    pub fn new(pattern: &str) -> Self {
        ToolMatcher {
            alternatives: pattern
                .split('|')
                .map(|alt| alt.trim().to_ascii_lowercase())
                .filter(|alt| !alt.is_empty())
                .collect(),
        }
    }

    /// A matcher for every tool.
    pub fn any() -> Self {
        ToolMatcher {
            alternatives: Vec::new(),
        }
    }

    /// Whether `tool` is one of the tools matched.
    pub fn matches(&self, tool: &str) -> bool {
        let tool = tool.to_ascii_lowercase();
        self.alternatives.is_empty()
            || self
                .alternatives
                .iter()
                .any(|alt| agentgate_permission::wildcard::matches(&tool, alt))
    }
}

/// A shell command run at one event (see `docs/hooks.md`).
///
/// It runs as `sh -c COMMAND` in the session's directory, in a process
/// group of its own, with the [`HookEvent`] as JSON on stdin and
/// `AGENTGATE_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, for scripts written
/// for Claude Code) set to that directory. Past its timeout the whole
/// group is killed. It answers as Claude Code's hooks do:
///
/// - exit 0 with nothing on stdout: no objection;
/// - exit 0 with a JSON object: `{"decision": "block", "reason": …}`, or
///   `{"hookSpecificOutput": {"permissionDecision": "allow"|"deny"|"ask",
///   "permissionDecisionReason": …, "additionalContext": …}}`, or
///   `{"continue": false, "stopReason": …}` (read as a denial); `allow`
///   means only "no objection";
/// - exit 0 with other text: context for the model on `UserPromptSubmit`,
///   ignored on `PostToolUse` and `Stop`, an invalid answer on `PreToolUse`;
/// - exit 2: a denial, stderr its reason;
/// - any other status, a timeout, or more than [`HOOK_OUTPUT_LIMIT`]
///   bytes of output: an error ([`HookError`]).
#[derive(Debug, Clone)]
pub struct ShellHook {
    event: HookEventName,
    matcher: ToolMatcher,
    command: String,
    timeout: Duration,
}

impl ShellHook {
    /// `command`, run at `event` with the default timeout for every tool.
    pub fn new(event: HookEventName, command: impl Into<String>) -> Self {
        ShellHook {
            event,
            matcher: ToolMatcher::any(),
            command: command.into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
        }
    }

    /// Runs only for the tools `matcher` matches (tool events only).
    pub fn matcher(mut self, matcher: ToolMatcher) -> Self {
        self.matcher = matcher;
        self
    }

    /// Kills the command after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The event it runs at.
    pub fn event(&self) -> HookEventName {
        self.event
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    async fn execute(&self, event: &HookEvent) -> Result<HookOutcome, HookError> {
        let input =
            serde_json::to_vec(event).map_err(|e| HookError::Other(format!("event: {e}")))?;
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.command)
            .current_dir(&event.cwd)
            .env("AGENTGATE_PROJECT_DIR", &event.cwd)
            .env("CLAUDE_PROJECT_DIR", &event.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| HookError::Spawn(format!("sh -c {:?}: {e}", self.command)))?;
        let group = GroupGuard(child.id());
        let mut stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let run = async {
            if let Some(stdin) = &mut stdin {
                // A hook that does not read its input is fine.
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            }
            drop(stdin.take());
            let (out, err, status) =
                tokio::join!(read_bounded(stdout), read_bounded(stderr), child.wait());
            (out, err, status)
        };
        let (out, err, status) = tokio::time::timeout(self.timeout, run)
            .await
            .map_err(|_| HookError::Timeout(self.timeout))?;
        drop(group);
        let status = status.map_err(|e| HookError::Spawn(e.to_string()))?;
        let (stdout, stdout_over) = out;
        let (stderr, _) = err;
        match status.code() {
            Some(0) if stdout_over => Err(HookError::BadAnswer(format!(
                "it printed more than {HOOK_OUTPUT_LIMIT} bytes"
            ))),
            Some(0) => parse_answer(self.event, &stdout),
            Some(2) => Ok(HookOutcome::deny(
                Some(stderr.trim())
                    .filter(|s| !s.is_empty())
                    .unwrap_or("refused by a hook (exit status 2, nothing on stderr)"),
            )),
            code => Err(HookError::Failed {
                status: code.map_or_else(|| "none (killed by a signal)".into(), |c| c.to_string()),
                stderr,
            }),
        }
    }
}

#[async_trait::async_trait]
impl Hook for ShellHook {
    fn name(&self) -> &str {
        &self.command
    }

    fn wants(&self, event: &HookEvent) -> bool {
        event.hook_event_name == self.event
            && event
                .tool_name
                .as_deref()
                .is_none_or(|tool| self.matcher.matches(tool))
    }

    async fn run(&self, event: &HookEvent) -> Result<HookOutcome, HookError> {
        self.execute(event).await
    }
}

/// Kills the hook's process group (whatever it left running) when dropped.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|pid| i32::try_from(pid).ok())
            && pid > 0
        {
            // The group id stays reserved while any member lives; a group
            // that is gone already is fine.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Reads `reader` to its end, keeping at most [`HOOK_OUTPUT_LIMIT`]
/// bytes; whether there was more.
async fn read_bounded(reader: Option<impl AsyncRead + Unpin>) -> (String, bool) {
    let Some(mut reader) = reader else {
        return (String::new(), false);
    };
    let mut kept = Vec::new();
    let mut over = false;
    let mut buffer = [0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = HOOK_OUTPUT_LIMIT.saturating_sub(kept.len());
                if n > room {
                    over = true;
                }
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), over)
}

/// The answer a hook of `event` that exited 0 printed.
fn parse_answer(event: HookEventName, stdout: &str) -> Result<HookOutcome, HookError> {
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(HookOutcome::proceed());
    }
    if !text.starts_with('{') {
        return match event {
            HookEventName::UserPromptSubmit => Ok(HookOutcome::proceed().with_context(text)),
            HookEventName::PreToolUse => Err(HookError::BadAnswer(format!(
                "expected nothing or a JSON object on stdout, found {:?}",
                preview(text)
            ))),
            HookEventName::PostToolUse | HookEventName::Stop => Ok(HookOutcome::proceed()),
        };
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| HookError::BadAnswer(format!("stdout is not valid JSON: {e}")))?;
    let string = |v: Option<&Value>, key: &str| -> Result<Option<String>, HookError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(HookError::BadAnswer(format!("`{key}` must be a string"))),
        }
    };
    let mut outcome = HookOutcome::proceed();
    let specific = value.get("hookSpecificOutput");
    let reason = string(value.get("reason"), "reason")?;
    match string(value.get("decision"), "decision")?.as_deref() {
        None | Some("approve") | Some("allow") => {}
        Some("block") | Some("deny") => {
            outcome.decision = HookDecision::Deny;
            outcome.reason = reason.clone();
        }
        Some(other) => {
            return Err(HookError::BadAnswer(format!(
                "`decision` must be \"block\" or \"approve\", found {other:?}"
            )));
        }
    }
    if value.get("continue") == Some(&Value::Bool(false)) {
        outcome.decision = HookDecision::Deny;
        outcome.reason = string(value.get("stopReason"), "stopReason")?.or(reason);
    }
    if let Some(specific) = specific {
        let decision = string(specific.get("permissionDecision"), "permissionDecision")?;
        let stated = match decision.as_deref() {
            None | Some("allow") => HookDecision::Continue,
            Some("ask") => HookDecision::Ask,
            Some("deny") => HookDecision::Deny,
            Some(other) => {
                return Err(HookError::BadAnswer(format!(
                    "`permissionDecision` must be \"allow\", \"deny\" or \"ask\", found {other:?}"
                )));
            }
        };
        if strictness(stated) > strictness(outcome.decision) {
            outcome.decision = stated;
            outcome.reason = string(
                specific.get("permissionDecisionReason"),
                "permissionDecisionReason",
            )?
            .or(outcome.reason);
        }
        outcome.additional_context =
            string(specific.get("additionalContext"), "additionalContext")?;
    }
    Ok(outcome)
}

/// How strict a decision is: deny over ask over continue.
pub(crate) fn strictness(decision: HookDecision) -> u8 {
    match decision {
        HookDecision::Continue => 0,
        HookDecision::Ask => 1,
        HookDecision::Deny => 2,
    }
}

fn preview(text: &str) -> String {
    text.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn matchers_name_tools_as_claude_code_users_write_them() {
        assert!(ToolMatcher::new("Bash").matches("bash"));
        assert!(ToolMatcher::new("Edit|Write").matches("write"));
        assert!(!ToolMatcher::new("Edit|Write").matches("bash"));
        assert!(ToolMatcher::new("mcp_*").matches("mcp_github_issue"));
        assert!(ToolMatcher::new("").matches("read"));
        assert!(ToolMatcher::new("*").matches("read"));
    }

    #[test]
    fn answers_read_as_claude_code_documents_them() {
        let pre = HookEventName::PreToolUse;
        assert_eq!(parse_answer(pre, "").unwrap(), HookOutcome::proceed());
        let deny = parse_answer(pre, r#"{"decision":"block","reason":"no"}"#).unwrap();
        assert_eq!(deny, HookOutcome::deny("no"));
        let ask = parse_answer(
            pre,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check"}}"#,
        )
        .unwrap();
        assert_eq!(ask, HookOutcome::ask("check"));
        // allow is no objection, nothing more.
        let allow = parse_answer(
            pre,
            r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
        )
        .unwrap();
        assert_eq!(allow.decision, HookDecision::Continue);
        let stop = parse_answer(pre, r#"{"continue":false,"stopReason":"halt"}"#).unwrap();
        assert_eq!(stop, HookOutcome::deny("halt"));
        assert!(matches!(
            parse_answer(pre, "ok!"),
            Err(HookError::BadAnswer(_))
        ));
        assert!(matches!(
            parse_answer(pre, "{not json"),
            Err(HookError::BadAnswer(_))
        ));
        assert!(matches!(
            parse_answer(
                pre,
                r#"{"hookSpecificOutput":{"permissionDecision":"yes"}}"#
            ),
            Err(HookError::BadAnswer(_))
        ));
        let context = parse_answer(HookEventName::UserPromptSubmit, "today is Monday").unwrap();
        assert_eq!(
            context.additional_context.as_deref(),
            Some("today is Monday")
        );
        let post = parse_answer(
            HookEventName::PostToolUse,
            r#"{"hookSpecificOutput":{"additionalContext":"lint: 2 warnings"}}"#,
        )
        .unwrap();
        assert_eq!(post.additional_context.as_deref(), Some("lint: 2 warnings"));
    }
}
