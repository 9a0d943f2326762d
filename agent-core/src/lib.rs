//! # agent-core
//!
//! The engine of the agent SDK: messages, the provider-agnostic streaming
//! [`LanguageModel`](https://docs.rs/agent-core) trait, the `Tool` trait and
//! registry, agents, sessions and the step/stream loop. It depends on
//! [`agent_permission`] for every permission decision.
//!
//! ```
//! // The permission engine is re-exported for convenience.
//! use agent_core::permission::{Action, evaluate, Ruleset};
//! let rules: Ruleset = serde_json::from_str(r#"[{"permission":"bash","pattern":"*","action":"allow"}]"#).unwrap();
//! assert_eq!(evaluate("bash", "ls", &[&rules]).action, Action::Allow);
//! ```

pub mod agent;

pub use agent_permission as permission;

pub mod context;
pub mod doom_loop;
pub mod error;
pub mod event;
pub mod ids;
pub mod message;
pub mod model;
pub mod overflow;
pub mod processor;
pub mod registry;
pub mod retry;
pub mod session;
pub mod step_loop;
pub mod steps;
pub mod stream;
pub mod testing;
pub mod tool;
pub mod truncate;
pub mod usage;

pub use context::{MetadataCallback, ToolContext};
pub use error::{ApiError, Headers, ModelError};
pub use event::{DeltaField, Event, EventBus, SessionStatus};
pub use message::{
    ABORTED_ERROR, CLEARED_RESULT, INTERRUPTED_RESULT, Message, MessageError, Part, Role, Timing,
    ToolPart, ToolState, to_model_messages,
};
pub use model::{
    ContentPart, EventStream, LanguageModel, ModelCapabilities, ModelInfo, ModelLimits,
    ModelMessage, ModelRequest, ModelRole, ToolChoice, ToolSpec,
};
pub use registry::ToolRegistry;
pub use retry::{RetryInfo, RetryPolicy};
pub use session::{MemorySessionStore, Session, SessionStore, StoreError};
pub use step_loop::{
    AgentSpec, Engine, EngineBuilder, LoopConfig, PromptError, StopReason, TurnResult,
};
pub use stream::{FinishReason, ProviderMetadata, StreamEvent, ToolCall};
pub use tool::{Tool, ToolError, ToolOutput, TypedTool};
pub use truncate::{TruncationLimits, Truncator};
pub use usage::Usage;
