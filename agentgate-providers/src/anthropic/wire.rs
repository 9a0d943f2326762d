//! The Messages API on the wire: the request body and the stream events,
//! as typed serde structs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

// ---- request ----------------------------------------------------------

/// `POST /v1/messages` body.
#[derive(Debug, Serialize)]
pub(crate) struct MessagesRequest<'a> {
    pub model: String,
    pub max_tokens: u32,
    pub stream: bool,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<ContentBlock>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
}

/// A conversation message. Its blocks are [`ContentBlock`]s, or (in
/// `request_bytes`) blocks some of which are cached raw JSON: one struct,
/// so both are written with the same fields in the same order.
#[derive(Debug, Serialize)]
pub(crate) struct Message<B = ContentBlock> {
    pub role: Role,
    pub content: Vec<B>,
}

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// `{"type": "ephemeral"}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl CacheControl {
    pub const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };
}

/// A content block of a request message or of the system prompt.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    Image {
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Document {
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        /// The tool's arguments: free-form JSON (an object).
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl ContentBlock {
    /// Puts a cache breakpoint on this block; `false` for thinking blocks,
    /// which may not carry one.
    pub fn set_cache_control(&mut self) -> bool {
        match self {
            ContentBlock::Text { cache_control, .. }
            | ContentBlock::Image { cache_control, .. }
            | ContentBlock::Document { cache_control, .. }
            | ContentBlock::ToolUse { cache_control, .. }
            | ContentBlock::ToolResult { cache_control, .. } => {
                *cache_control = Some(CacheControl::EPHEMERAL);
                true
            }
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => false,
        }
    }
}

/// A `tool_result`'s content: its text, or blocks when the tool returned
/// images (text first, then the images).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolResultContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// Where an image or document comes from.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Source {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// A tool definition.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// JSON Schema: free-form; borrowed, serialized at each request, never copied.
    pub input_schema: &'a Value,
}

/// Whether and which tool the model must call.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToolChoice {
    Auto,
    None,
    Any,
    Tool { name: String },
}

/// The `thinking` pass-through option, as far as the request rules read
/// it (`{"type": "enabled", "budget_tokens": N}`).
#[derive(Debug, Deserialize)]
pub(crate) struct ThinkingOption {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub budget_tokens: Option<u32>,
}

// ---- stream -------------------------------------------------------------

/// One `data:` payload of the Messages stream, tagged by `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        #[serde(default)]
        index: u64,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        #[serde(default)]
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {
        #[serde(default)]
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        #[serde(default)]
        error: Option<StreamError>,
    },
    /// `ping` and event types added later.
    #[serde(other)]
    Other,
}

/// The message announced by `message_start`. Programmatic tool calling
/// sends whole messages here: content and stop reason already filled in.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct MessageStart {
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub content: Vec<StartBlock>,
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// A block opened by `content_block_start`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        /// The whole input, when it is not streamed (programmatic tool
        /// calling); `{}` when deltas follow. Free-form JSON.
        #[serde(default)]
        input: Option<Value>,
    },
    /// Server tools, their results, ...: not part of this model.
    #[serde(other)]
    Other,
}

/// A `content_block_delta` payload.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Delta {
    #[serde(rename = "text_delta")]
    Text {
        #[serde(default)]
        text: String,
    },
    #[serde(rename = "thinking_delta")]
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(rename = "signature_delta")]
    Signature {
        #[serde(default)]
        signature: String,
    },
    #[serde(rename = "input_json_delta")]
    InputJson {
        #[serde(default)]
        partial_json: String,
    },
    /// Citations and later delta types.
    #[serde(other)]
    Other,
}

/// `message_delta.delta`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// Token counts; cumulative, so present fields overwrite earlier ones.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
}

/// The `error` of an `error` event.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct StreamError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}
