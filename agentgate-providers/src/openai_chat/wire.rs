//! Chat Completions on the wire: the request body and the stream chunks,
//! as typed serde structs.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error_body::ErrorField;

// ---- request ----------------------------------------------------------

/// `POST /chat/completions` body. It borrows the history's texts (tool
/// outputs above all) from the request instead of copying them.
#[derive(Debug, Serialize)]
pub(crate) struct ChatRequest<'a> {
    pub model: String,
    pub messages: Vec<Message<'a>>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
}

/// `{"include_usage": true}`.
#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

/// A message, tagged by `role`.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum Message<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// `null` when the turn only called tools.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The turn's reasoning, for servers that want it back.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
    },
    Tool {
        tool_call_id: Cow<'a, str>,
        content: Cow<'a, str>,
    },
}

/// A user message's content: plain text, or parts when files are attached.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<UserPart>),
}

/// One part of a multi-part user message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum UserPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
    File { file: FileData },
}

/// `{"url": …}`.
#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl {
    pub url: String,
}

/// An inline file.
#[derive(Debug, Serialize)]
pub(crate) struct FileData {
    pub filename: String,
    pub file_data: String,
}

/// A call the assistant made.
#[derive(Debug, Serialize)]
pub(crate) struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
}

/// The function of a call: arguments as JSON text.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

/// A tool definition.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionDefinition<'a>,
}

/// A function's name, description and JSON Schema (free-form).
#[derive(Debug, Serialize)]
pub(crate) struct FunctionDefinition<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// Borrowed: a tool's schema is serialized at each request, never copied.
    pub parameters: &'a Value,
}

/// `"auto"`, `"none"`, `"required"` or a named function.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolChoice {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: FunctionName,
    },
}

/// `{"name": …}`.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionName {
    pub name: String,
}

// ---- stream -------------------------------------------------------------

/// One `data:` chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub usage: Option<ChunkUsage>,
    #[serde(default)]
    pub error: Option<ErrorField>,
    /// Some servers put the message at the top level of an error chunk.
    #[serde(default)]
    pub message: Option<String>,
}

/// A choice of a chunk (only the first is read).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// What a chunk adds.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub content: Option<DeltaContent>,
    #[serde(default)]
    pub refusal: Option<String>,
    /// DeepSeek, vLLM.
    #[serde(default)]
    pub reasoning_content: Option<String>,
    /// OpenRouter, Ollama, Groq.
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// `delta.content`: text, or (Mistral) a list of typed chunks, where
/// reasoning arrives as `thinking` chunks.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum DeltaContent {
    Text(String),
    Chunks(Vec<ContentChunk>),
}

/// One chunk of a list-valued `delta.content`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentChunk {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: Vec<ThinkingChunk>,
    },
    /// Images, references and later chunk types.
    #[serde(other)]
    Other,
}

/// A piece of a `thinking` chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ThinkingChunk {
    #[serde(default)]
    pub text: String,
}

/// A fragment of a tool call, matched by `index`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

/// A fragment of a function call.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    /// A text fragment normally; some servers send the whole arguments as
    /// a JSON object instead, so this stays free-form.
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// Token counts of the usage chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
}

/// `prompt_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// `completion_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}
