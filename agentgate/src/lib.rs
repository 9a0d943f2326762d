//! # agentgate
//!
//! The one dependency a program adds to embed a coding agent whose every
//! side effect first passes a permission gate the program controls.
//!
//! - At the root: the engine of `agentgate-core` — messages, the
//!   [`LanguageModel`] and [`Tool`] contracts, [`Engine`], sessions,
//!   agents and the one-call [`CodingAgent`].
//! - [`permission`]: rules, evaluation, the approval gate and approvers
//!   (`agentgate-permission`).
//! - `tools` (feature `tools`, on by default): the built-in tools
//!   (`agentgate-tools`); `tools::mcp` with feature `mcp` (on by default).
//! - `sandbox` (feature `sandbox`): the OS sandbox under spawned commands.
//!   It is part of the tools crate (the bash tool runs under it), so the
//!   feature turns on `tools` as well.
//! - `providers` (feature `providers`, on by default): the streaming
//!   clients for Anthropic, OpenAI, OpenAI-compatible servers and Gemini
//!   (`agentgate-providers`).
//! - `acp` (feature `acp`): serves coding agents to editors over the
//!   Agent Client Protocol (`agent acp`).
//! - `server` (feature `server`): serves coding agents over HTTP with
//!   the routes and JSON shapes of opencode's server (`agent serve`).
//! - `store` (feature `store`; `sqlite`, on by default, and `postgres` add
//!   its backends): what the processes of a host share — `SqliteStore`
//!   (sessions, messages and remembered approvals in one SQLite file; with
//!   it, `Workspace` keeps approvals in `<data dir>/agentgate.db`, as the
//!   `agent` CLI does), `PostgresStore` and `PostgresRelay` (several
//!   servers on one database; asks answered in any of them), the
//!   `AskRelay` trait and the import from the file stores
//!   (`agentgate-store`; guide: `docs/stores.md`).
//! - `telemetry` (feature `otel`): the engine's OpenTelemetry GenAI spans
//!   exported over OTLP where the `OTEL_EXPORTER_OTLP_*` variables say
//!   (`docs/observability.md`).
//! - `demo` (feature `demo`): `DemoModel`, an offline scripted model;
//!   `testing` (feature `test-util`): `ScriptedModel` for tests.
//!
//! [`async_trait`](macro@async_trait), [`schemars`], [`serde`] and [`serde_json`] are
//! re-exported at the versions the traits are written against, so a tool
//! needs no other dependency. Derives name their crate through the facade:
//!
//! ```
//! use agentgate::schemars::JsonSchema;
//! use agentgate::serde::Deserialize;
//! use agentgate::permission::{AllowAll, PermissionGate};
//! use agentgate::{Tool, ToolContext, ToolError, ToolOutput, TypedTool};
//! use std::sync::Arc;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(crate = "agentgate::serde")]
//! #[schemars(crate = "agentgate::schemars")]
//! struct ShoutArgs {
//!     /// The text to shout.
//!     text: String,
//! }
//!
//! struct Shout;
//!
//! #[agentgate::async_trait]
//! impl TypedTool for Shout {
//!     type Args = ShoutArgs;
//!     fn id(&self) -> &str { "shout" }
//!     fn description(&self) -> &str { "Repeats the text in capitals." }
//!     async fn run(&self, args: ShoutArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::text(args.text.to_uppercase()))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let permissions = PermissionGate::new();
//! permissions.set_approver(Arc::new(AllowAll));
//! let ctx = ToolContext::new("ses_1", "msg_1", "call_1", permissions);
//! let input = agentgate::serde_json::json!({"text": "hi"});
//! let output = Shout.execute(input, &ctx).await.unwrap();
//! assert_eq!(output.output, "HI");
//! let schema = agentgate::schema_of::<ShoutArgs>();
//! assert_eq!(schema["properties"]["text"]["type"], "string");
//! # });
//! ```

// The engine's API, unchanged, at the root.
pub use agentgate_core::*;

// The one coding agent and the workspace it is assembled from, under every
// feature set: `tools`, `providers` and `mcp` add the built-in tools, the
// model clients and the MCP servers to what it assembles by default.
mod coding_agent;
mod coding_agent_commands;
mod coding_agent_error;
#[cfg(feature = "mcp")]
mod coding_agent_mcp;
mod trust_policy;
mod workspace;
pub use coding_agent::{CodingAgent, CodingAgentBuilder};
pub use coding_agent_commands::{CustomCommandError, slash_command};
pub use coding_agent_error::CodingAgentError;
pub use workspace::{CLI_APP, DEFAULT_MODELS, Workspace, WorkspaceError};

// The host seam shared by `agent serve` and `agent acp`: how each served
// session gets its coding agent.
mod agent_factory;
pub use agent_factory::{AgentFactory, AgentSetup, ConfiguredAgents, FactoryError};
pub use trust_policy::{ProjectTrust, TrustCallback, TrustPolicy};

// Serving a coding agent to editors over the Agent Client Protocol.
#[cfg(feature = "acp")]
pub mod acp;

// Serving coding agents over HTTP with opencode's server API.
#[cfg(feature = "server")]
pub mod server;

// OpenTelemetry traces of the engine, exported over OTLP.
#[cfg(feature = "otel")]
pub mod telemetry;

// Running prompts on a server (`agent serve`) and answering its asks.
#[cfg(feature = "remote")]
pub mod remote;

// The wire format both of them speak: the server writes it, the client
// reads it with the same types.
#[cfg(any(feature = "server", feature = "remote"))]
mod protocol;

// The permission rules and the approval gate.
pub use agentgate_permission as permission;

// What a tool's code needs besides the SDK: the trait attribute and the
// derive crates, at the versions the engine uses.
pub use agentgate_core::async_trait;
pub use schemars;
pub use serde;
pub use serde_json;

// The built-in tools (and, with `mcp`, `tools::mcp`).
#[cfg(feature = "tools")]
pub use agentgate_tools as tools;

// The provider clients.
#[cfg(feature = "providers")]
pub use agentgate_providers as providers;

/// Stores shared between the processes of a host (`agentgate-store`):
/// features `store`, `sqlite` (on by default) and `postgres`.
#[cfg(feature = "store")]
pub use agentgate_store as store;

/// The OS sandbox under the commands the bash tool spawns: Landlock and
/// namespaces on Linux, the environment filter, and the `sandbox` policy
/// of the configuration. The same items as in [`tools`], gathered here.
#[cfg(feature = "sandbox")]
pub mod sandbox {
    pub use agentgate_tools::{
        CORE_VARIABLES, CallScope, CommandOutput, DEFAULT_EXCLUDES, DEFAULT_KEEP, DenialKind,
        EnvFilter, EnvInherit, Guard, OnUnsupported, PreparedCommand, ProtectedChange,
        SECRET_PATHS, Sandbox, SandboxDenial, SandboxError, SandboxMode, SandboxPolicy,
        SandboxStatus, SandboxedChild, UnknownSandboxMode, approved_directories,
    };
}
