//! [`CodingAgentError`]: why a [`CodingAgent`](crate::CodingAgent) could
//! not be assembled — one error for the one builder, each cause kept as
//! its source.

use agentgate_core::{AgentError, EngineSetupError, PromptError};

use crate::workspace::WorkspaceError;

/// Why a [`CodingAgent`](crate::CodingAgent) could not be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodingAgentError {
    /// The directory's configuration, its `sandbox` key, the model client,
    /// the built-in tools or the approval store.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// No model was given, none is configured and no provider key is set.
    #[error(
        "no model: set \"model\": \"provider/model\" in opencode.json, set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), or pass one with CodingAgentBuilder::model or ::model_name"
    )]
    NoModel,
    /// The model name is not `provider/model`, or no resolver serves it
    /// (without feature `providers`, only a resolver the host gives does).
    #[error(
        "model {0:?} is not available: name it as provider/model and give a ModelResolver that serves it (CodingAgentBuilder::model_resolver), or turn on agentgate's feature \"providers\""
    )]
    UnknownModel(String),
    /// The configuration does not map to an engine (its `retry` key).
    #[error(transparent)]
    Setup(#[from] EngineSetupError),
    /// The agent named with `CodingAgentBuilder::agent` does not exist.
    #[error("agent {name:?} is not configured: choose one of {available}")]
    UnknownAgent {
        /// The name given.
        name: String,
        /// The agents there are, comma-separated.
        available: String,
    },
    /// The default agent is not usable (a configured `default_agent` that
    /// is missing, hidden or a sub-agent).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The session could not be created, or the one to resume loaded.
    #[error("the session: {0}")]
    Session(#[source] PromptError),
}
