//! # agentgate-core
//!
//! The engine of the agent SDK: messages, the provider-agnostic streaming
//! [`LanguageModel`] trait, the [`Tool`] trait and [`ToolRegistry`],
//! sessions and the step/stream loop ([`Engine`]). It depends on
//! [`agentgate_permission`] for every permission decision.
//!
//! Sub-agents run through the `task` tool (enabled with
//! [`EngineBuilder::agents`] and [`EngineBuilder::task_tool`]) in child
//! sessions of the same engine; a full context is compacted into a summary
//! ([`CompactionSettings`]); [`FileSessionStore`] keeps sessions across
//! restarts. The guide `docs/agent-loop.md` describes the loop for SDK users.
//!
//! A loaded configuration maps to an engine with
//! [`EngineBuilder::from_config`] (agents, presets, system prompts, loop
//! settings), a pure function; the one-call coding agent that loads the
//! configuration, picks the model and tools and creates the session is
//! the facade's (`agentgate::CodingAgent`).
//!
//! The crate has two layers. The **contracts** — messages and parts, the
//! model interface and its stream events, the tool interface and its
//! context, usage, errors, [`AgentSpec`] and [`ModelRef`] — are what
//! providers and tools implement against; they import nothing from the
//! **engine** above them (the turn driver, the step processor, compaction,
//! the `task` tool, the agents catalog and sessions). A test
//! (`tests/suite/layering.rs`) keeps it so.
//!
//! Cargo feature `test-util`: the `testing` module (`ScriptedModel`, a
//! `LanguageModel` that replays scripts and records requests).
//!
//! Cargo feature `demo`: the `demo` module (`DemoModel`, an offline scripted
//! model that lists, reads and asks to run `git status`, for trying the
//! engine and its permission gate with no network and no keys).
//!
//! A session driven by `testing::ScriptedModel` with one tool: the model
//! calls `echo`, gets its result, then answers.
//!
//! ```
//! use std::sync::Arc;
//! use agentgate_core::testing::{Script, ScriptedModel};
//! use agentgate_core::{AgentSpec, Engine, Session, StopReason, ToolContext, ToolError, ToolOutput, TypedTool};
//! use agentgate_core::permission::{evaluate, Action, Ruleset};
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

/// The permission crate this one is built on (rules, the gate, approvers).
pub use agentgate_permission as permission;
/// Re-exported for implementing [`Tool`] and [`TypedTool`] without extra
/// dependencies: `#[agentgate_core::async_trait]`, `agentgate_core::schemars`.
pub use async_trait::async_trait;
/// Re-exported: consume [`Engine::prompt_stream`] with `.next().await`.
pub use futures::StreamExt;
/// Re-exported for implementing [`Tool`] and [`TypedTool`] without extra
/// dependencies.
pub use schemars;
/// Re-exported: cancels a prompt ([`Engine::prompt_with`]).
pub use tokio_util::sync::CancellationToken;

// Contracts: what providers and tools implement against.
mod agent_spec;
mod attachment;
pub mod checkpoint;
mod error;
mod event;
mod event_bus;
mod event_routes;
mod ids;
mod message;
mod model;
mod stream;
mod tool;
mod tool_context;
mod tool_registry;
mod truncate;
mod usage;

// The engine, built on the contracts.
mod agents;
// Project text files (config, agents, instructions) read with a ceiling.
mod bounded_read;
/// Custom commands: the catalog and the template expansion.
pub mod commands;
mod compaction;
mod config;
mod engine;
// Hooks: code run at the loop's fixed points (the `hooks` config key).
mod hooks;
// Final answers checked against a JSON schema.
mod prompts;
mod sessions;
/// Skills: `SKILL.md` discovery and the system prompt's section.
pub mod skills;
mod structured;

#[cfg(feature = "test-util")]
pub mod testing;

#[cfg(feature = "demo")]
pub mod demo;

// --- Messages: the transcript.
/// Files and images attached to a prompt.
pub use attachment::{
    AttachmentError, MAX_IMAGE_BYTES, MAX_TEXT_BYTES, attach_file, has_images, image_mime,
};
/// Transcript types.
pub use message::{FilePart, Message, Part, Role, Timing, ToolPart, ToolState};

// --- Models: the provider-agnostic interface and what streams back.
pub use checkpoint::{
    ChangeScope, CheckpointError, Checkpoints, Direction, FileChange, FileState, ToolEffects,
};
/// Why a model call failed.
pub use error::{ApiError, Headers, ModelError};
/// The model interface, requests and model descriptions.
pub use model::{
    ContentPart, EventStream, History, LanguageModel, ModelCapabilities, ModelCost, ModelInfo,
    ModelLimits, ModelMessage, ModelRef, ModelRequest, ModelResolver, ModelRole, ToolChoice,
    ToolSpec, share_messages,
};
/// What a model stream yields.
pub use stream::{FinishReason, ProviderMetadata, StreamEvent, ToolCall};
/// Token accounting.
pub use usage::Usage;

// --- Tools: the interface, its context and the registry.
/// The tool interface and what a call returns.
pub use tool::{CallingAgent, Tool, ToolError, ToolOutput, TypedTool, decode_args, schema_of};
/// What a running tool knows and can do.
pub use tool_context::{MetadataCallback, ToolContext};
/// The tools a session can use.
pub use tool_registry::ToolRegistry;

// --- Agents: what the engine runs a turn for, and the catalog.
/// The parts of an agent the engine uses.
pub use agent_spec::AgentSpec;
/// Agents: definitions, the catalog and its configuration.
pub use agents::{Agent, AgentConfig, AgentEnvironment, AgentError, AgentMode, Agents};

// --- Configuration: opencode-format files as a library.
/// Loading configuration (§3.3): discovery, precedence, substitution.
pub use config::{
    Config, ConfigError, ConfigErrors, ConfigLoader, ConfigWarning, HookConfig, ProviderConfig,
    ProviderModel,
};

// --- The engine: running turns.
/// Custom commands and skills (details in [`commands`] and [`skills`]).
pub use commands::{Command, Commands};
/// Compaction of a full context (§14).
pub use compaction::CompactionSettings;
/// The approver of an engine built without a permission gate.
pub use engine::NonInteractive;
/// Retries of failed model streams (§13); the details are in [`retry`].
pub use engine::RetryPolicy;
/// Sub-agents through the `task` tool (§10); its arguments are in [`task`].
pub use engine::TaskSettings;
/// The `tracing` target of the OpenTelemetry GenAI spans of turns, model
/// calls and tool calls (`invoke_agent`, `chat`, `execute_tool`), for a
/// subscriber's filter (`docs/observability.md`, "Traces").
pub use engine::trace_spans::TARGET as TRACE_TARGET;
/// A custom command made ready to send ([`Engine::prepare_command`]).
pub use engine::{CommandError, PreparedCommand, SubtaskPlan};
/// Revert, unrevert and per-message diffs from the steps' checkpoints.
pub use engine::{DiffStatus, FileDiff, RevertError, Rewind};
/// The engine, its builder, settings and results.
pub use engine::{
    Engine, EngineBuilder, LoopSettings, PromptError, PromptOptions, RunToolError, StopReason,
    TurnError, TurnEvent, TurnResult,
};
/// A loaded configuration mapped to an engine ([`EngineBuilder::from_config`]),
/// and the named permission defaults it can layer in.
pub use engine::{EngineSetup, EngineSetupError, PermissionPreset};
/// Session titles from the hidden `title` agent.
pub use engine::{SessionTitles, TITLE_AGENT};
/// System prompt assembly (§15); its parts are in [`prompt_parts`].
pub use prompts::SystemPrompts;
pub use skills::{Skill, Skills};

// --- Sessions and events.
/// Every state change of a session, on a broadcast channel.
pub use event::{DeltaField, Event, SessionStatus};
pub use event_bus::EventBus;

// --- Structured output.
/// Final answers that must match a JSON schema (`agent run --output-schema`).
pub use structured::{
    DEFAULT_STRUCTURED_RETRIES, OutputSchema, SUPPORTED_KEYWORDS, SchemaError, StructuredAnswer,
    StructuredError,
};

// --- Hooks.
/// Hooks at the loop's fixed points (`docs/hooks.md`).
pub use hooks::{
    DEFAULT_HOOK_TIMEOUT, HOOK_OUTPUT_LIMIT, Hook, HookDecision, HookError, HookEvent,
    HookEventName, HookOutcome, ShellHook, ToolMatcher,
};
/// Sessions and their stores.
pub use sessions::{
    FileSessionStore, MemorySessionStore, RevertPoint, Session, SessionStore, SessionStoreError,
    SessionTime, forked_title,
};

// --- Namespaces: the parts behind the root types, for hosts and tools that
// build their own versions of them.

/// The transcript's conversion to model input, and the texts the engine
/// writes into it for calls that did not finish.
pub mod transcript {
    pub use crate::compaction::history_for_model;
    pub use crate::engine::STEP_LIMIT_ERROR;
    pub use crate::message::{
        ABORTED_ERROR, CLEARED_RESULT, INTERRUPTED_RESULT, MessageError, append_model_messages,
        to_model_messages, tool_result,
    };
}

/// Tool output truncation (§7.1), with the full output kept in a spill file.
pub mod truncation {
    pub use crate::truncate::{Truncated, TruncationLimits, Truncator, truncate};
}

/// Agents defined in markdown files (`.opencode/agent/*.md`): where they
/// are found, their front matter and how a file becomes an agent.
pub mod agent_files {
    pub use crate::agents::{
        AGENT_DIRS, FrontMatterError, MODE_DIRS, MarkdownAgent, MarkdownAgentError,
        MarkdownDocument, MarkdownKind, agent_name_from_path, load_markdown_agents,
        load_markdown_agents_from, parse_markdown, parse_markdown_agent, relative_path,
        sanitize_front_matter, scan_markdown_agents,
    };
}

/// The built-in agents' prompts and rules, and how `agent` configuration
/// merges over them.
pub mod agent_defaults {
    pub use crate::agents::{builtin_prompt, default_permission, merge_agent_config, merge_value};
    pub use crate::engine::COMPACTION_AGENT;
}

/// The text layer of configuration files: JSONC, `{env:…}`/`{file:…}`
/// substitution, the known keys and their suggestions.
pub mod config_text {
    pub use crate::config::{
        EnvLookup, ProviderPredicate, TOP_LEVEL_KEYS, UnterminatedComment, did_you_mean,
        parse_config_text, strip_jsonc, substitute, substitute_within_project,
    };
}

/// Project trust (issue 39): what an untrusted project's layer may set
/// ([`screen_project_layer`](project_trust::screen_project_layer), a pure
/// function over one layer) and the user's record of trusted projects
/// ([`TrustStore`](project_trust::TrustStore)).
pub mod project_trust {
    pub use crate::config::{
        PROJECT_KEYS, RiskKind, RiskyPart, Screened, TRUST_FILE, Treatment, TrustRecord,
        TrustStore, TrustStoreError, canonical_json, fingerprint, project_key, screen_agent,
        screen_project_layer, strip_allows,
    };
}

/// The parts of a system prompt (§15): family prompts, the environment
/// block and instruction files.
pub mod prompt_parts {
    pub use crate::prompts::{
        PROJECT_FILES, PromptFamily, environment_block, family_prompt, instruction_files,
        is_git_repository, read_instructions,
    };
}

/// Retries of failed model streams (§13): the plan, what each retry
/// reports, and [`crate::RetryPolicy`]'s defaults.
pub mod retry {
    pub use crate::engine::{
        DEFAULT_MAX_DELAY_MS, DEFAULT_MAX_ELAPSED_MS, DEFAULT_MAX_RETRIES, RetryHistory, RetryInfo,
        RetryPlan,
    };
}

/// The `task` tool's arguments and errors (§10).
pub mod task {
    pub use crate::engine::{TaskArgs, TaskError};
}
