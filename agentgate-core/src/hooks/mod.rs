//! Hooks: code that runs at fixed points of the loop and may refuse what
//! happens there or add context for the model, as Claude Code's hooks do.
//!
//! The events this engine has (a session is only stored, so there is no
//! session start or end to hook; a turn is one prompt):
//!
//! | event | when | what the answer can do |
//! |---|---|---|
//! | [`PreToolUse`](HookEventName::PreToolUse) | a tool call is about to run (after the doom-loop check, before the tool and its own permission asks) | deny the call, or make it ask first; never allow what the rules deny or ask |
//! | [`PostToolUse`](HookEventName::PostToolUse) | a tool call succeeded | add context the model reads with the result |
//! | [`UserPromptSubmit`](HookEventName::UserPromptSubmit) | a prompt arrived, before it is stored | refuse the prompt, or add context to it |
//! | [`Stop`](HookEventName::Stop) | a turn ended with an answer | nothing (a notification) |
//!
//! Security invariants (`docs/security.md`): a hook can only make a call
//! *stricter*. `allow` is read as "no objection": the permission rules
//! still decide, and a call they leave at `ask` is still asked. A hook of
//! a gating event (`PreToolUse`, `UserPromptSubmit`) that fails — crashes,
//! times out, prints something that is not an answer — refuses the call
//! or the prompt with a reason naming the hook, and the failure is
//! announced ([`Event::HookFailed`](crate::Event::HookFailed)); failures of
//! the other events are announced and change nothing. Hooks see sub-agents'
//! calls too (they run in the same engine).
//!
//! Embedders implement [`Hook`] and register it with
//! [`EngineBuilder::hook`](crate::EngineBuilder::hook); the configuration's
//! `hooks` key gives [`ShellHook`]s (see `docs/hooks.md`).
//!
//! ```
//! use agentgate_core::{Hook, HookDecision, HookError, HookEvent, HookEventName, HookOutcome};
//!
//! /// Refuses every `bash` call that mentions `rm`.
//! struct NoRm;
//!
//! #[agentgate_core::async_trait]
//! impl Hook for NoRm {
//!     fn name(&self) -> &str { "no-rm" }
//!     async fn run(&self, event: &HookEvent) -> Result<HookOutcome, HookError> {
//!         let command = event.tool_input.as_ref().and_then(|i| i["command"].as_str()).unwrap_or("");
//!         if event.hook_event_name == HookEventName::PreToolUse
//!             && event.tool_name.as_deref() == Some("bash")
//!             && command.contains("rm ")
//!         {
//!             return Ok(HookOutcome::deny("rm is not allowed here; move files to trash/ instead"));
//!         }
//!         Ok(HookOutcome::proceed())
//!     }
//! }
//! # let _ = HookDecision::Continue;
//! ```

mod shell;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use shell::strictness;
pub use shell::{DEFAULT_HOOK_TIMEOUT, HOOK_OUTPUT_LIMIT, ShellHook, ToolMatcher};

/// The points of the loop a hook can run at (Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEventName {
    /// Before a tool call runs.
    PreToolUse,
    /// After a tool call succeeded.
    PostToolUse,
    /// A prompt arrived, before it is stored and sent.
    UserPromptSubmit,
    /// A turn ended with an answer.
    Stop,
}

impl HookEventName {
    /// Every event, in loop order.
    pub const ALL: [HookEventName; 4] = [
        HookEventName::UserPromptSubmit,
        HookEventName::PreToolUse,
        HookEventName::PostToolUse,
        HookEventName::Stop,
    ];

    /// The name as written in the configuration and sent to hooks.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEventName::PreToolUse => "PreToolUse",
            HookEventName::PostToolUse => "PostToolUse",
            HookEventName::UserPromptSubmit => "UserPromptSubmit",
            HookEventName::Stop => "Stop",
        }
    }

    /// The event named `name` (as [`as_str`](Self::as_str) spells it).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.as_str() == name)
    }

    /// Whether a failing hook of this event refuses what it guards (the
    /// call or the prompt) instead of being only reported.
    pub fn fails_closed(self) -> bool {
        matches!(
            self,
            HookEventName::PreToolUse | HookEventName::UserPromptSubmit
        )
    }
}

impl std::fmt::Display for HookEventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a hook is told: the JSON a shell hook reads on stdin, with Claude
/// Code's field names (fields an event does not have are left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct HookEvent {
    /// The event.
    pub hook_event_name: HookEventName,
    /// The session (a sub-agent's child session for its calls).
    pub session_id: String,
    /// The session's directory.
    pub cwd: PathBuf,
    /// The agent running.
    pub agent: String,
    /// The tool called (`PreToolUse`, `PostToolUse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The call's arguments as the model sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    /// The provider's id of the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The result (`PostToolUse`): `{"title", "output", "metadata"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
    /// The prompt's text (`UserPromptSubmit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The answer's text (`Stop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

impl HookEvent {
    /// An event with only the common fields set.
    pub fn new(
        hook_event_name: HookEventName,
        session_id: impl Into<String>,
        cwd: impl Into<PathBuf>,
        agent: impl Into<String>,
    ) -> Self {
        HookEvent {
            hook_event_name,
            session_id: session_id.into(),
            cwd: cwd.into(),
            agent: agent.into(),
            tool_name: None,
            tool_input: None,
            tool_use_id: None,
            tool_response: None,
            prompt: None,
            last_assistant_message: None,
        }
    }

    /// Sets the tool call fields.
    pub fn with_tool(
        mut self,
        tool_name: impl Into<String>,
        tool_input: Value,
        tool_use_id: impl Into<String>,
    ) -> Self {
        self.tool_name = Some(tool_name.into());
        self.tool_input = Some(tool_input);
        self.tool_use_id = Some(tool_use_id.into());
        self
    }
}

/// What a hook decides about what it saw. Only gating events read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum HookDecision {
    /// No objection: the permission rules decide as they would without
    /// the hook (Claude Code's `allow` means this here, never more).
    #[default]
    Continue,
    /// Ask the user before the call runs, even when the rules allow it
    /// (`PreToolUse` only; read as `Continue` elsewhere). A rule that
    /// denies still denies.
    Ask,
    /// Refuse: the call does not run (the model reads the reason), or the
    /// prompt is not sent.
    Deny,
}

/// A hook's answer.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct HookOutcome {
    /// The decision.
    pub decision: HookDecision,
    /// Why (shown to the model for a denial, to the user for an ask).
    pub reason: Option<String>,
    /// Text the model reads: after a tool's result (`PostToolUse`), or
    /// with the prompt (`UserPromptSubmit`).
    pub additional_context: Option<String>,
}

impl HookOutcome {
    /// No objection, nothing to add.
    pub fn proceed() -> Self {
        HookOutcome::default()
    }

    /// Refuses, saying why.
    pub fn deny(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: HookDecision::Deny,
            reason: Some(reason.into()),
            additional_context: None,
        }
    }

    /// Asks the user first, saying why.
    pub fn ask(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: HookDecision::Ask,
            reason: Some(reason.into()),
            additional_context: None,
        }
    }

    /// Adds context for the model.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.additional_context = Some(context.into());
        self
    }
}

/// Why a hook gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// The hook ran past its time limit (and was killed).
    #[error("it did not finish within {} s (raise its `timeout`, in seconds)", .0.as_secs_f64())]
    Timeout(Duration),
    /// The command could not be started.
    #[error("it could not be started: {0}")]
    Spawn(String),
    /// The command failed (an exit status other than 0 or 2).
    #[error("it exited with status {status}{}", stderr_note(.stderr))]
    Failed {
        /// The exit status (`None`: killed by a signal).
        status: String,
        /// What it printed on stderr (bounded).
        stderr: String,
    },
    /// It printed something that is not a hook answer.
    #[error("its answer is not valid: {0}")]
    BadAnswer(String),
    /// Any other failure of an embedder's hook.
    #[error("{0}")]
    Other(String),
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// Code run at the loop's hook points ([`HookEventName`]). Register it
/// with [`EngineBuilder::hook`](crate::EngineBuilder::hook); it is called
/// for every event of every session of the engine (sub-agents' included)
/// and filters what it cares about itself.
#[async_trait::async_trait]
pub trait Hook: Send + Sync {
    /// A short name for messages ("hook `name` failed").
    fn name(&self) -> &str;

    /// Whether to run for `event` at all (default: yes). A hook that is
    /// not run cannot fail.
    fn wants(&self, event: &HookEvent) -> bool {
        let _ = event;
        true
    }

    /// Runs for `event`. An `Err` refuses the call or the prompt for the
    /// gating events (see the module documentation).
    async fn run(&self, event: &HookEvent) -> Result<HookOutcome, HookError>;
}
