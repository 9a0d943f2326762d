//! [`ToolContext`]: what a running tool knows and can do.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use agentgate_permission::{AskRequest, PermissionError, PermissionGate, Ruleset};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::checkpoint::{ChangeScope, CheckpointError, Checkpoints};
use crate::truncate::Truncator;

/// Receives a tool's live title/metadata updates.
pub type MetadataCallback = Arc<dyn Fn(Option<String>, Value) + Send + Sync>;

/// The context of one tool call: ids, directories, cancellation, live
/// metadata and permission requests (§7.1).
#[derive(Clone)]
pub struct ToolContext {
    /// The session.
    pub session_id: String,
    /// The assistant message holding the call.
    pub message_id: String,
    /// The provider's call id.
    pub call_id: String,
    /// The agent's name.
    pub agent: String,
    /// The working directory.
    pub directory: PathBuf,
    /// The project root (worktree) paths are made relative to.
    pub worktree: PathBuf,
    /// Fires when the call is cancelled; stop promptly (kill processes,
    /// drop requests).
    pub cancel: CancellationToken,
    permissions: PermissionGate,
    ruleset: Arc<Ruleset>,
    ceilings: Arc<Vec<Ruleset>>,
    on_metadata: Option<MetadataCallback>,
    truncator: Truncator,
    accepts_images: bool,
    checkpoints: Option<Arc<dyn Checkpoints>>,
    ask_deadline: Option<std::time::Duration>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("message_id", &self.message_id)
            .field("call_id", &self.call_id)
            .field("agent", &self.agent)
            .field("directory", &self.directory)
            .field("worktree", &self.worktree)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for testing or running a tool outside the loop: the given
    /// ids, `.` (the process's current directory) as directory and
    /// worktree, an empty
    /// ruleset (every request asks) and this permission service.
    pub fn new(
        session_id: impl Into<String>,
        message_id: impl Into<String>,
        call_id: impl Into<String>,
        permissions: PermissionGate,
    ) -> Self {
        let directory = PathBuf::from(".");
        ToolContext {
            session_id: session_id.into(),
            message_id: message_id.into(),
            call_id: call_id.into(),
            agent: String::new(),
            worktree: directory.clone(),
            directory,
            cancel: CancellationToken::new(),
            permissions,
            ruleset: Arc::new(Ruleset::default()),
            ceilings: Arc::new(Vec::new()),
            on_metadata: None,
            truncator: Truncator::default(),
            accepts_images: false,
            checkpoints: None,
            ask_deadline: None,
        }
    }

    /// Sets the agent name.
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = agent.into();
        self
    }

    /// Sets the working directory and worktree.
    pub fn with_directories(mut self, directory: PathBuf, worktree: PathBuf) -> Self {
        self.directory = directory;
        self.worktree = worktree;
        self
    }

    /// Sets the ruleset requests are evaluated against (normally
    /// `merge(agent.permission, session.permission)`).
    pub fn with_ruleset(mut self, ruleset: Arc<Ruleset>) -> Self {
        self.ruleset = ruleset;
        self
    }

    /// Sets the rulesets that bound [`ruleset`](Self::ruleset): a
    /// sub-agent's parents' rules (see `Session::ceilings`). Each request
    /// gets the stricter answer of the ruleset and every ceiling.
    pub fn with_ceilings(mut self, ceilings: Arc<Vec<Ruleset>>) -> Self {
        self.ceilings = ceilings;
        self
    }

    /// The rulesets that bound this context's ruleset.
    pub fn ceilings(&self) -> &[Ruleset] {
        &self.ceilings
    }

    /// Sets the cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sets where [`metadata`](Self::metadata) updates go.
    pub fn on_metadata(mut self, callback: MetadataCallback) -> Self {
        self.on_metadata = Some(callback);
        self
    }

    /// Sets how output is truncated and where it spills (the engine passes
    /// its own, whose spill directory every agent may read).
    pub fn with_truncator(mut self, truncator: Truncator) -> Self {
        self.truncator = truncator;
        self
    }

    /// Sets whether the session's model accepts images (the engine sets
    /// it from [`ModelCapabilities::images`](crate::ModelCapabilities)).
    pub fn with_images(mut self, accepts_images: bool) -> Self {
        self.accepts_images = accepts_images;
        self
    }

    /// Sets where file changes are recorded (the engine passes its own; see
    /// [`before_change`](Self::before_change)).
    pub fn with_checkpoints(mut self, checkpoints: Arc<dyn Checkpoints>) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Tells the checkpoints that this call is about to change `scope`
    /// (see [`checkpoint`](crate::checkpoint)): call it after the
    /// permission is granted and before the first write. A no-op when the
    /// engine keeps no checkpoints.
    ///
    /// # Errors
    /// The checkpoint store could not note the starting state: the change
    /// can still be made, but will not be revertible.
    pub async fn before_change(&self, scope: ChangeScope<'_>) -> Result<(), CheckpointError> {
        match &self.checkpoints {
            Some(checkpoints) => {
                checkpoints
                    .before_change(&self.worktree, &self.session_id, scope)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Tells the checkpoints that this call has changed `scope` (after the
    /// last write, also when the call failed midway).
    ///
    /// # Errors
    /// The change could not be recorded.
    pub async fn after_change(&self, scope: ChangeScope<'_>) -> Result<(), CheckpointError> {
        match &self.checkpoints {
            Some(checkpoints) => {
                checkpoints
                    .after_change(&self.worktree, &self.session_id, scope)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Sets how long this call's asks wait for an answer (the engine passes
    /// [`LoopSettings::ask_deadline`](crate::LoopSettings::ask_deadline)).
    pub fn with_ask_deadline(mut self, deadline: Option<std::time::Duration>) -> Self {
        self.ask_deadline = deadline;
        self
    }

    /// Whether file changes are recorded for this call.
    pub fn keeps_checkpoints(&self) -> bool {
        self.checkpoints.is_some()
    }

    /// Whether the session's model accepts images: a tool may then return
    /// them as [`ToolOutput::attachments`](crate::ToolOutput) (off unless
    /// set with [`with_images`](Self::with_images)).
    pub fn accepts_images(&self) -> bool {
        self.accepts_images
    }

    /// How a tool that truncates its own output (and sets
    /// `metadata.truncated`) should do it, so the spill file lands where the
    /// agents may read it.
    pub fn truncator(&self) -> &Truncator {
        &self.truncator
    }

    /// The ruleset requests are evaluated against.
    pub fn ruleset(&self) -> &Ruleset {
        &self.ruleset
    }

    /// The permission service.
    pub fn permissions(&self) -> &PermissionGate {
        &self.permissions
    }

    /// Publishes a live title and metadata for the running call (shown by
    /// UIs while the tool works; kept on the part if the call fails).
    pub fn metadata(&self, title: Option<&str>, metadata: Value) {
        if let Some(callback) = &self.on_metadata {
            callback(title.map(str::to_string), metadata);
        }
    }

    /// Asks permission for `permission` on `patterns` (§7.1): adds the
    /// session id, this call's `{message_id, call_id}` and the context's
    /// ruleset, then waits for the gate. `always` are the patterns an
    /// "always" answer approves; `metadata` is shown to the approver.
    ///
    /// Fails with the gate's [`PermissionError`]; if the call is cancelled
    /// while waiting, the request is withdrawn and this fails with
    /// `Rejected`.
    pub async fn ask<P, A>(
        &self,
        permission: &str,
        patterns: P,
        always: A,
        metadata: Value,
    ) -> Result<(), PermissionError>
    where
        P: IntoIterator,
        P::Item: Into<String>,
        A: IntoIterator,
        A::Item: Into<String>,
    {
        let request = AskRequest::new(self.session_id.as_str(), permission, patterns)
            .always(always)
            .metadata(metadata)
            .ruleset((*self.ruleset).clone())
            .ceilings((*self.ceilings).clone())
            .tool(self.message_id.as_str(), self.call_id.as_str());
        let request = match self.ask_deadline {
            Some(deadline) => request.timeout(deadline),
            None => request,
        };
        tracing::debug!(
            session_id = %self.session_id,
            permission,
            call_id = %self.call_id,
            "asking permission"
        );
        tokio::select! {
            result = self.permissions.ask(request) => result,
            () = self.cancel.cancelled() => Err(PermissionError::Rejected),
        }
    }
}
