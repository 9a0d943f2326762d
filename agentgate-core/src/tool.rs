//! The [`Tool`] trait, its typed helper [`TypedTool`], and what a tool
//! returns ([`ToolOutput`], [`ToolError`]).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::checkpoint::ToolEffects;
use crate::message::FilePart;
use crate::tool_context::ToolContext;
use agentgate_permission::{PermissionError, Ruleset};

/// What a successful tool call returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// A short title for UIs (`src/lib.rs`, `cargo test`).
    pub title: String,
    /// The text the model sees. Truncated by the loop per §7.1 unless
    /// `metadata.truncated` is set (the tool truncated it itself).
    pub output: String,
    /// Tool-defined data for UIs (diffs, exit codes ...).
    pub metadata: Value,
    /// Files the model sees after the text (the `read` tool's image for a
    /// model that accepts images, see
    /// [`ToolContext::accepts_images`](crate::ToolContext::accepts_images)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<FilePart>,
}

impl ToolOutput {
    /// An output with this text, an empty title and no metadata.
    pub fn text(output: impl Into<String>) -> Self {
        ToolOutput {
            title: String::new(),
            output: output.into(),
            metadata: Value::Object(Default::default()),
            attachments: Vec::new(),
        }
    }

    /// Adds a file the model sees after the text.
    pub fn with_attachment(mut self, file: FilePart) -> Self {
        self.attachments.push(file);
        self
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }
}

/// Why a tool call failed. Every variant's `Display` is the text the model
/// sees as the call's error result; none of them ends the loop except
/// [`PermissionError::Rejected`] (§11.1).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments did not match the tool's schema (§7.1's exact text).
    #[error(
        "The {tool} tool was called with invalid arguments: {detail}.\nPlease rewrite the input so it satisfies the expected schema."
    )]
    InvalidArguments {
        /// The tool id.
        tool: String,
        /// What was wrong (serde's message).
        detail: String,
    },
    /// A permission request failed: `Rejected` stops the loop, `Corrected`
    /// and `Denied` are shown to the model and the loop continues.
    #[error(transparent)]
    Permission(#[from] PermissionError),
    /// The call was cancelled (the tool saw its token fire).
    #[error("Tool execution aborted")]
    Cancelled,
    /// The tool failed; the message is shown to the model as is.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// A [`ToolError::Failed`] with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// Whether this error stops the agent loop (a plain permission
    /// rejection, or an ask nobody answered before its deadline).
    pub fn stops_loop(&self) -> bool {
        matches!(
            self,
            ToolError::Permission(PermissionError::Rejected | PermissionError::Expired { .. })
        )
    }
}

/// The agent a tool is offered to, as [`Tool::description_for`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CallingAgent<'a> {
    /// The agent's name.
    pub name: &'a str,
    /// The agent's rules (without session rules).
    pub permission: &'a Ruleset,
}

impl<'a> CallingAgent<'a> {
    /// The agent `name` with rules `permission`.
    pub fn new(name: &'a str, permission: &'a Ruleset) -> Self {
        CallingAgent { name, permission }
    }
}

/// A tool the model can call.
///
/// Implement it directly for full control over the schema and decoding,
/// or implement [`TypedTool`] and get this trait for free.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn id(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments (an object schema).
    fn parameters(&self) -> Value;
    /// Runs the call. Ask permission through `ctx.ask` **before** any side
    /// effect, and stop promptly when `ctx.cancel` fires.
    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// The description offered to `agent`'s model when it depends on the
    /// calling agent (the `task` tool lists the sub-agents that agent may
    /// call). `None`, the default, offers [`description`](Tool::description).
    fn description_for(&self, agent: &CallingAgent<'_>) -> Option<String> {
        let _ = agent;
        None
    }
    /// Whether the tool reports the files it changes (see
    /// [`checkpoint`](crate::checkpoint)). The default,
    /// [`ToolEffects::Unknown`], has the engine compare the whole project
    /// around each call, so a tool's changes can be reverted without it
    /// doing anything; a tool that changes no files, or calls
    /// [`ToolContext::before_change`]/[`after_change`](ToolContext::after_change)
    /// itself, returns [`ToolEffects::Declared`] and costs nothing.
    fn effects(&self) -> ToolEffects {
        ToolEffects::Unknown
    }
}

/// A tool with typed arguments: the schema is derived with schemars and
/// the arguments decoded with serde. Invalid arguments never reach
/// [`run`](TypedTool::run): the model gets §7.1's "rewrite the input"
/// message as the call's error result.
///
/// ```
/// use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct EchoArgs {
///     /// What to echo.
///     text: String,
/// }
///
/// struct Echo;
///
/// #[async_trait::async_trait]
/// impl TypedTool for Echo {
///     type Args = EchoArgs;
///     fn id(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Echoes its input." }
///     async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text(args.text))
///     }
/// }
/// ```
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The argument type.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// The name the model calls it by.
    fn id(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// Runs the call with decoded arguments.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// Whether the tool reports the files it changes ([`Tool::effects`]).
    fn effects(&self) -> ToolEffects {
        ToolEffects::Unknown
    }
}

/// The JSON Schema of `T`, as offered to models: schemars' draft 2020-12
/// schema without the `$schema` key.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(T).to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
    }
    value
}

/// Decodes `input` into `T`, or gives §7.1's invalid-arguments error for `tool`.
pub fn decode_args<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolError> {
    serde_json::from_value(input).map_err(|error| ToolError::InvalidArguments {
        tool: tool.to_string(),
        detail: error.to_string(),
    })
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn id(&self) -> &str {
        TypedTool::id(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> Value {
        schema_of::<T::Args>()
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = decode_args::<T::Args>(TypedTool::id(self), input)?;
        self.run(args, ctx).await
    }

    fn effects(&self) -> ToolEffects {
        TypedTool::effects(self)
    }
}
