//! `streamGenerateContent` on the wire: the request body and the stream
//! chunks, as typed serde structs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// ---- request ----------------------------------------------------------

/// The request body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerateRequest<'a> {
    pub contents: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<SystemInstruction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub generation_config: GenerationConfig,
}

/// A turn. Its parts are [`Part`]s, or (in `request_bytes`) cached raw
/// JSON: one struct, so both are written with the same fields in the same
/// order.
#[derive(Debug, Serialize)]
pub(crate) struct Content<P = Part> {
    pub role: &'static str,
    pub parts: Vec<P>,
}

/// The system prompt's parts.
#[derive(Debug, Serialize)]
pub(crate) struct SystemInstruction {
    pub parts: Vec<Part>,
}

/// A part of a turn; exactly one of the payload fields is set.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Part {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_data: Option<InlineData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_data: Option<FileData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse>,
}

/// Base64 data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InlineData {
    pub mime_type: String,
    pub data: String,
}

/// A file by URI.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileData {
    pub mime_type: String,
    pub file_uri: String,
}

/// A call the model made.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    /// The arguments: free-form JSON.
    pub args: Value,
}

/// A tool's result.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionResponse {
    pub name: String,
    pub response: FunctionOutput,
}

/// `{"name", "content"}`.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionOutput {
    pub name: String,
    pub content: String,
}

/// `{"functionDeclarations": [...]}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tools<'a> {
    pub function_declarations: Vec<FunctionDeclaration<'a>>,
}

/// A function the model may call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FunctionDeclaration<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// JSON Schema: free-form; borrowed, serialized at each request, never copied.
    pub parameters_json_schema: &'a Value,
}

/// `{"functionCallingConfig": …}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolConfig {
    pub function_calling_config: FunctionCallingConfig,
}

/// The calling mode.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FunctionCallingConfig {
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_function_names: Option<Vec<String>>,
}

/// Sampling and output settings.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Pass-through settings (thinkingConfig, ...): free-form.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GenerationConfig {
    fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.max_output_tokens.is_none()
            && self.extra.is_empty()
    }
}

// ---- stream -------------------------------------------------------------

/// One `data:` chunk.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Chunk {
    #[serde(default)]
    pub candidates: Option<Vec<Candidate>>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    pub prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub error: Option<ChunkError>,
}

/// A candidate (only the first is read).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Candidate {
    #[serde(default)]
    pub content: Option<CandidateContent>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// A candidate's parts.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CandidateContent {
    #[serde(default)]
    pub parts: Option<Vec<ResponsePart>>,
}

/// A part of a streamed candidate.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResponsePart {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub thought: Option<bool>,
    #[serde(default)]
    pub thought_signature: Option<String>,
    #[serde(default)]
    pub function_call: Option<ResponseFunctionCall>,
}

/// A function call as streamed. Whole (`name` and `args`), or — with
/// streamed function-call arguments — opened by `name` with
/// `willContinue`, filled by `partialArgs`, and closed by a call part with
/// neither.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResponseFunctionCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// The arguments: free-form JSON.
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default)]
    pub will_continue: Option<bool>,
    #[serde(default)]
    pub partial_args: Option<Vec<PartialArg>>,
}

/// One streamed argument value at a JSON path (`$.a.b[0]`); string values
/// arrive in pieces that are appended.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PartialArg {
    #[serde(default)]
    pub json_path: String,
    #[serde(default)]
    pub string_value: Option<String>,
    #[serde(default)]
    pub number_value: Option<serde_json::Number>,
    #[serde(default)]
    pub bool_value: Option<bool>,
    /// Present (any value) for a JSON `null`.
    #[serde(default)]
    pub null_value: Option<Value>,
}

/// Token counts.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageMetadata {
    #[serde(default)]
    pub prompt_token_count: Option<u64>,
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub candidates_token_count: Option<u64>,
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    #[serde(default)]
    pub total_token_count: Option<u64>,
}

/// Why the prompt was blocked.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptFeedback {
    #[serde(default)]
    pub block_reason: Option<String>,
}

/// An error inside the stream.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkError {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
}
