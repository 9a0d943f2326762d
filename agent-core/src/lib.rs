//! # agent-core
//!
//! The engine of the agent SDK: messages, the provider-agnostic streaming
//! [`LanguageModel`] trait, the [`Tool`] trait and [`ToolRegistry`],
//! sessions and the step/stream loop ([`Engine`]). It depends on
//! [`agent_permission`] for every permission decision.
//!
//! Sub-agents run through the `task` tool ([`task`], enabled with
//! [`EngineBuilder::agents`] and [`EngineBuilder::task_tool`]) in child
//! sessions of the same engine; a full context is compacted into a summary
//! ([`compaction`]); [`FileSessionStore`] keeps sessions across restarts.
//! The guide `docs/agent-loop.md` describes the loop for SDK users.
//!
//! A session driven by [`testing::ScriptedModel`] with one tool: the model
//! calls `echo`, gets its result, then answers.
//!
//! ```
//! use std::sync::Arc;
//! use agent_core::testing::{Script, ScriptedModel};
//! use agent_core::{AgentSpec, Engine, Session, StopReason, ToolContext, ToolError, ToolOutput, TypedTool};
//! use agent_core::permission::{evaluate, Action, Ruleset};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct EchoArgs { text: String }
//! struct Echo;
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Echo {
//!     type Args = EchoArgs;
//!     fn id(&self) -> &str { "echo" }
//!     fn description(&self) -> &str { "Echoes its input." }
//!     async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::text(args.text))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let rules: Ruleset = serde_json::from_str(r#"[{"permission":"*","pattern":"*","action":"allow"}]"#).unwrap();
//! assert_eq!(evaluate("echo", "*", &[&rules]).action, Action::Allow);
//! let model = Arc::new(ScriptedModel::new([
//!     Script::calls([("call_1", "echo", serde_json::json!({"text": "hi"}))]),
//!     Script::reply("The tool said hi."),
//! ]));
//! let engine = Engine::builder(model.clone())
//!     .agent(AgentSpec::new("build").with_permission(rules))
//!     .tool(Echo)
//!     .build();
//! let session = engine.create_session(Session::new("build", ".")).await.unwrap();
//! let turn = engine.prompt(&session.id, "say hi").await.unwrap();
//! assert!(matches!(turn.stop, StopReason::Done { .. }));
//! assert_eq!(turn.steps, 2);
//! assert_eq!(turn.text(), "The tool said hi.");
//! assert_eq!(model.requests().len(), 2);
//! # });
//! ```

pub use agent_permission as permission;

pub mod agent;
pub mod agent_markdown;
pub mod compaction;
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
pub mod session_file;
pub mod step_loop;
pub mod steps;
pub mod stream;
pub mod task;
pub mod testing;
pub mod tool;
pub mod truncate;
pub mod usage;

pub use agent::{Agent, AgentConfig, AgentEnvironment, AgentError, AgentMode, Agents, ModelRef};
pub use agent_markdown::{
    MarkdownAgent, MarkdownAgentError, MarkdownKind, load_markdown_agents,
    load_markdown_agents_from,
};
pub use context::{MetadataCallback, ToolContext};
pub use error::{ApiError, Headers, ModelError};
pub use event::{DeltaField, Event, EventBus, SessionStatus};
pub use message::{
    ABORTED_ERROR, CLEARED_RESULT, INTERRUPTED_RESULT, Message, MessageError, Part, Role, Timing,
    ToolPart, ToolState, to_model_messages,
};
pub use model::{
    ContentPart, EventStream, LanguageModel, ModelCapabilities, ModelInfo, ModelLimits,
    ModelMessage, ModelRequest, ModelResolver, ModelRole, ToolChoice, ToolSpec,
};
pub use registry::ToolRegistry;
pub use retry::{RetryInfo, RetryPolicy};
pub use session::{MemorySessionStore, Session, SessionStore, StoreError};
pub use session_file::FileSessionStore;
pub use step_loop::{
    AgentSpec, Engine, EngineBuilder, LoopConfig, PromptError, StopReason, TurnResult,
};
pub use stream::{FinishReason, ProviderMetadata, StreamEvent, ToolCall};
pub use task::{TaskArgs, TaskError, TaskSettings};
pub use tool::{Tool, ToolError, ToolOutput, TypedTool};
pub use truncate::{TruncationLimits, Truncator};
pub use usage::Usage;
