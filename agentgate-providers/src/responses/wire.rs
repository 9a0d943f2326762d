//! The Responses API on the wire: the request body and the stream events,
//! as typed serde structs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

// ---- request ----------------------------------------------------------

/// `POST /responses` body.
#[derive(Debug, Serialize)]
pub(crate) struct ResponsesRequest<'a> {
    pub model: String,
    pub input: Vec<InputItem>,
    pub stream: bool,
    pub store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

/// An input item: a role message or a typed item.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum InputItem {
    /// `{"role": "developer", "content": "…"}`.
    System { role: &'static str, content: String },
    /// `{"role": "user"|"assistant", "content": [parts]}`.
    Message {
        role: &'static str,
        content: Vec<ContentPart>,
    },
    /// A reasoning item, function call or function output.
    Item(Item),
}

/// A part of a role message's content.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentPart {
    InputText { text: String },
    InputImage { image_url: String },
    InputFile { filename: String, file_data: String },
    OutputText { text: String },
}

/// A typed input item.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Item {
    Reasoning {
        id: String,
        summary: Vec<SummaryText>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: String,
    },
}

/// `{"type": "summary_text", "text": …}`.
#[derive(Debug, Serialize)]
pub(crate) struct SummaryText {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
}

/// A function tool.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'a str,
    pub description: &'a str,
    /// JSON Schema: free-form; borrowed, serialized at each request, never copied.
    pub parameters: &'a Value,
    pub strict: bool,
}

/// `"auto"`, `"none"`, `"required"` or a named function.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolChoice {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        name: String,
    },
}

// ---- stream -------------------------------------------------------------

/// One `data:` payload, tagged by `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum StreamEvent {
    #[serde(rename = "response.created")]
    Created {
        #[serde(default)]
        response: Response,
    },
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: Option<u64>,
        item: OutputItem,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: Option<u64>,
        item: OutputItem,
    },
    #[serde(rename = "response.output_text.delta")]
    TextDelta {
        #[serde(default)]
        item_id: String,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryDelta {
        #[serde(default)]
        item_id: String,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        summary_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        item_id: String,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.completed")]
    Completed {
        #[serde(default)]
        response: Response,
    },
    #[serde(rename = "response.incomplete")]
    Incomplete {
        #[serde(default)]
        response: Response,
    },
    #[serde(rename = "response.failed")]
    Failed {
        #[serde(default)]
        response: Response,
    },
    #[serde(rename = "error")]
    Error(ErrorEvent),
    /// Events this client does not use.
    #[serde(other)]
    Other,
}

/// The response object of created/completed/incomplete/failed.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Response {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub usage: Option<ResponseUsage>,
    #[serde(default)]
    pub error: Option<ResponseError>,
}

/// Why a response is incomplete.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct IncompleteDetails {
    #[serde(default)]
    pub reason: Option<String>,
}

/// The error of a failed response or an `error` event.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseError {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// An `error` event. The API nests the fields
/// (`{"type":"error","error":{"code","message"}}`); older documentation
/// and some proxies put them at the top level.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorEvent {
    #[serde(default)]
    pub error: Option<ResponseError>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// An output item as announced and finished.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutputItem {
    Message {
        #[serde(default)]
        id: String,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        #[serde(default)]
        id: String,
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    /// Web search, file search, ...: not part of this model.
    #[serde(other)]
    Other,
}

/// Token counts.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    pub output_tokens_details: Option<OutputDetails>,
}

/// `input_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct InputDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// `output_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct OutputDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}
