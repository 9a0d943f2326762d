//! The provider-agnostic model interface: [`LanguageModel`], what goes in
//! ([`ModelRequest`]) and what describes a model ([`ModelInfo`]).

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::stream::{ProviderMetadata, StreamEvent};

/// The stream a [`LanguageModel`] returns: events as they arrive, ending
/// after a [`StreamEvent::Finish`] or with an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send>>;

/// A `provider/model` reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelRef {
    /// Provider id, e.g. `anthropic`.
    pub provider_id: String,
    /// Model id within the provider, e.g. `claude-sonnet-4-5`.
    pub model_id: String,
}

impl ModelRef {
    /// Parses `provider/model` (the model id may itself contain `/`).
    /// `None` when there is no `/` or either side is empty.
    pub fn parse(text: &str) -> Option<Self> {
        let (provider, model) = text.split_once('/')?;
        if provider.is_empty() || model.is_empty() {
            return None;
        }
        Some(ModelRef {
            provider_id: provider.to_string(),
            model_id: model.to_string(),
        })
    }
}

impl std::fmt::Display for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider_id, self.model_id)
    }
}

/// Token limits of a model. `0` means "not declared".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelLimits {
    /// The context window (input + output).
    pub context: u64,
    /// A separate input limit, when the provider declares one.
    #[serde(default)]
    pub input: u64,
    /// The maximum output tokens.
    pub output: u64,
}

/// What a model can do. More capabilities come between versions: start
/// from `ModelCapabilities::default()` (nothing) and set the fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelCapabilities {
    /// Tool calling.
    pub tools: bool,
    /// Reasoning / thinking output.
    pub reasoning: bool,
    /// Image input.
    pub images: bool,
    /// Temperature can be set.
    pub temperature: bool,
}

/// Describes a model: who serves it, its limits and capabilities. Fields
/// grow between versions: build one with [`ModelInfo::new`], then set
/// the fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelInfo {
    /// Provider id (`anthropic`, `openai`, `ollama`, ...).
    pub provider: String,
    /// Model id as the provider names it (`claude-sonnet-4-5`, `gpt-4.1`).
    pub id: String,
    /// Token limits.
    pub limits: ModelLimits,
    /// Capabilities.
    pub capabilities: ModelCapabilities,
    /// Prices, when configured (`provider.<id>.models.<model>.cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ModelCost>,
}

/// What a model's tokens cost, in US dollars per million tokens, as
/// opencode's configuration writes it (`cost: {input, output, cache_read,
/// cache_write}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelCost {
    /// Per million input tokens not read from or written to the cache.
    #[serde(default)]
    pub input: f64,
    /// Per million output tokens (reasoning included).
    #[serde(default)]
    pub output: f64,
    /// Per million input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: f64,
    /// Per million input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: f64,
}

impl ModelCost {
    /// Prices per million input and output tokens; cache reads and writes
    /// cost nothing until set (as in opencode, where they are optional).
    pub fn new(input: f64, output: f64) -> Self {
        ModelCost {
            input,
            output,
            cache_read: 0.0,
            cache_write: 0.0,
        }
    }

    /// The price of `usage`, in US dollars.
    ///
    /// ```
    /// use agentgate_core::{ModelCost, Usage};
    /// let mut usage = Usage::default();
    /// usage.input = 1_000_000;
    /// usage.output = 500_000;
    /// assert_eq!(ModelCost::new(3.0, 15.0).of(&usage), 10.5);
    /// ```
    pub fn of(&self, usage: &crate::usage::Usage) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(usage.input, self.input)
            + per(usage.output, self.output)
            + per(usage.cache_read, self.cache_read)
            + per(usage.cache_write, self.cache_write)
    }
}

impl ModelInfo {
    /// A model description with the given provider and id, no declared
    /// limits and tool support.
    pub fn new(provider: impl Into<String>, id: impl Into<String>) -> Self {
        ModelInfo {
            provider: provider.into(),
            id: id.into(),
            limits: ModelLimits::default(),
            capabilities: ModelCapabilities {
                tools: true,
                ..Default::default()
            },
            cost: None,
        }
    }

    /// `provider/id`, the name users write.
    pub fn full_id(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool name the model calls.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema), shared: a turn
    /// offers each tool's spec to the model, and copying the schema's tree
    /// at every turn was most of the cost of starting one.
    pub parameters: std::sync::Arc<serde_json::Value>,
}

/// Whether and how the model may call tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// Who wrote a [`ModelMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    /// The user (or the host speaking for them).
    User,
    /// The model.
    Assistant,
    /// Tool results answering the previous assistant message's calls.
    Tool,
}

/// One piece of a [`ModelMessage`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ContentPart {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Data to send back with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// Reasoning the model produced earlier; adapters send it back with its
    /// metadata (signatures, encrypted content) or drop it, as their API
    /// requires.
    Reasoning {
        /// The reasoning text (may be empty for encrypted/redacted reasoning).
        text: String,
        /// Signatures and encrypted payloads.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// A file or image, by URL (`https:` or a `data:` URL).
    File {
        /// MIME type.
        media_type: String,
        /// Where the content is.
        url: String,
        /// The original file name, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
    },
    /// A tool call the model made (in assistant messages).
    ToolCall {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments.
        input: serde_json::Value,
        /// Data to send back with the call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// The result of a tool call (in tool messages).
    ToolResult {
        /// The call id it answers.
        call_id: String,
        /// The tool name.
        name: String,
        /// The output or error text the model sees.
        output: String,
        /// Whether the call failed.
        is_error: bool,
    },
}

/// A message as sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelMessage {
    /// Who wrote it.
    pub role: ModelRole,
    /// Its content.
    pub content: Vec<ContentPart>,
}

impl ModelMessage {
    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        ModelMessage {
            role: ModelRole::User,
            content: vec![ContentPart::Text {
                text: text.into(),
                provider_metadata: None,
            }],
        }
    }
}

/// The conversation of a [`ModelRequest`]: a shared list of shared
/// messages. A message behind an `Arc` cannot change while another holder
/// keeps it (`Arc::make_mut` copies it first), so a provider that keeps
/// the `Arc` of a message it has encoded may reuse that encoding whenever
/// a later request holds the same `Arc` (`Arc::ptr_eq`): a step then
/// encodes only the messages it adds.
pub type History = Arc<Vec<Arc<ModelMessage>>>;

/// `messages` as a [`History`].
///
/// ```
/// use agentgate_core::{ModelMessage, share_messages};
///
/// let history = share_messages(vec![ModelMessage::user("hi")]);
/// assert_eq!(history.len(), 1);
/// ```
pub fn share_messages(messages: Vec<ModelMessage>) -> History {
    Arc::new(messages.into_iter().map(Arc::new).collect())
}

/// Everything a model call needs.
///
/// New fields will be added; build one with [`ModelRequest::new`] and the
/// `with_*` methods (or `default()` and field assignment):
///
/// ```
/// use agentgate_core::{ModelMessage, ModelRequest};
///
/// let request = ModelRequest::new(vec![ModelMessage::user("hi")])
///     .with_system(["You are terse."])
///     .with_temperature(0.2);
/// assert_eq!(request.system, ["You are terse."]);
/// assert_eq!(request.messages.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// System prompt sections, in order (adapters may put cache breakpoints
    /// between them).
    pub system: Vec<String>,
    /// The conversation. Every tool call has a result in the following
    /// tool message. Shared (`Arc`) so that a step does not copy the whole
    /// history: the loop appends to it in place once the provider has
    /// dropped the request (`Arc::make_mut`). Each message is shared and
    /// immutable too: a provider may keep a message's wire encoding for
    /// as long as it holds that `Arc` (see [`History`]).
    pub messages: History,
    /// The tools the model may call (shared for the same reason).
    pub tools: Arc<Vec<ToolSpec>>,
    /// Whether the model may call them.
    pub tool_choice: ToolChoice,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Output token cap for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Provider options passed through untouched (reasoning effort,
    /// thinking budget, ...), keyed by provider name.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub options: serde_json::Map<String, serde_json::Value>,
}

impl ModelRequest {
    /// A request for `messages`, with no system prompt, no tools, and the
    /// provider's defaults for everything else.
    pub fn new(messages: Vec<ModelMessage>) -> Self {
        ModelRequest {
            messages: share_messages(messages),
            ..ModelRequest::default()
        }
    }

    /// Sets the system prompt sections, in order.
    pub fn with_system<I, S>(mut self, system: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.system = system.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the tools the model may call.
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = Arc::new(tools);
        self
    }

    /// Sets whether (and which of) the tools the model may call.
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets nucleus sampling.
    pub fn with_top_p(mut self, top_p: f32) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Caps the output tokens of this call.
    pub fn with_max_output_tokens(mut self, max_output_tokens: u32) -> Self {
        self.max_output_tokens = Some(max_output_tokens);
        self
    }

    /// Sets the options passed to `provider` untouched (for example
    /// `"anthropic"` → `{"thinking": {...}}`).
    pub fn with_options(mut self, provider: impl Into<String>, options: serde_json::Value) -> Self {
        self.options.insert(provider.into(), options);
        self
    }
}

/// A streaming language model. Implemented by provider adapters (and by
/// the `testing::ScriptedModel` double of the `test-util` feature).
///
/// `stream` resolves once the response has started (an HTTP error before
/// that is an `Err`); events then arrive on the returned stream. A provider
/// retries its own HTTP failures only before the first event; after that it
/// yields an error item and the agent loop decides. Implementations should
/// stop promptly when `cancel` fires.
#[async_trait::async_trait]
pub trait LanguageModel: Send + Sync {
    /// What this model is.
    fn info(&self) -> &ModelInfo;

    /// Starts a call.
    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError>;
}

/// Finds the [`LanguageModel`] for a `provider/model` reference, for
/// sessions that do not run on the engine's own model (sub-agents with a
/// configured model, see the `task` tool).
///
/// An [`Engine`](crate::Engine) holds one model; a host serving several
/// registers a resolver with
/// [`EngineBuilder::model_resolver`](crate::EngineBuilder::model_resolver).
pub trait ModelResolver: Send + Sync {
    /// The model for `model`, or `None` when the host does not serve it
    /// (the prompt then fails with [`PromptError::UnknownModel`](crate::PromptError::UnknownModel)).
    fn resolve(&self, model: &ModelRef) -> Option<Arc<dyn LanguageModel>>;

    /// The model for `model`, or why it cannot be served, in words a user
    /// can act on (the prompt then fails with
    /// [`PromptError::ModelUnavailable`](crate::PromptError::ModelUnavailable)
    /// carrying it). The default calls [`resolve`](Self::resolve) and gives
    /// no reason; resolvers that know why (an unknown provider, a missing
    /// key) say so.
    fn resolve_or_explain(&self, model: &ModelRef) -> Result<Arc<dyn LanguageModel>, String> {
        self.resolve(model).ok_or_else(|| {
            "no configured provider serves it: add a `provider` entry for it in opencode.json"
                .to_string()
        })
    }
}
