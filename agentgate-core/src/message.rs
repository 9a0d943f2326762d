//! The transcript: [`Message`]s made of [`Part`]s, and their conversion
//! back to model input ([`to_model_messages`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ContentPart, ModelMessage, ModelRole};
use crate::stream::{FinishReason, ProviderMetadata};
use crate::usage::Usage;

/// Output text of a tool call that never got a result (§11.3).
pub const INTERRUPTED_RESULT: &str = "[Tool execution was interrupted]";
/// Error text of a tool call closed by cancellation or a failed step (§11.3).
pub const ABORTED_ERROR: &str = "Tool execution aborted";
/// Output text of a result pruned by compaction (§11.3).
pub const CLEARED_RESULT: &str = "[Old tool result content cleared]";

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (or the host).
    User,
    /// The model, through the loop.
    Assistant,
}

/// Start and end times of something, in ms since the Unix epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// When it started.
    pub start: u64,
    /// When it ended, if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
}

/// The life of a tool call: `pending` (arguments streaming) → `running`
/// (call complete, executing) → `completed` | `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolState {
    /// The model is still writing the arguments.
    Pending {
        /// `{}` until the call is complete.
        input: Value,
        /// The argument text received so far.
        raw: String,
    },
    /// The call is complete and (about to be) executing.
    Running {
        /// The decoded arguments.
        input: Value,
        /// A title set through `ToolContext::metadata`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Live metadata set through `ToolContext::metadata`.
        metadata: Value,
        /// When it started.
        time: Timing,
    },
    /// The tool returned output.
    Completed {
        /// The decoded arguments.
        input: Value,
        /// The (possibly truncated) output the model sees.
        output: String,
        /// A short title for UIs.
        title: String,
        /// Tool-defined metadata.
        metadata: Value,
        /// Start and end.
        time: Timing,
        /// Set when compaction pruned the output; the model then sees
        /// [`CLEARED_RESULT`].
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        compacted: bool,
        /// Files the tool returned (an image the `read` tool read for a
        /// model that accepts images); sent after the result.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<FilePart>,
    },
    /// The call failed; `error` is the text the model sees.
    Error {
        /// The arguments, as far as known.
        input: Value,
        /// The error text.
        error: String,
        /// Metadata streamed before the failure; `interrupted: true` marks
        /// calls closed by cancellation (§11.3).
        metadata: Value,
        /// Start and end.
        time: Timing,
    },
}

impl ToolState {
    /// The lowercase status name.
    pub fn status(&self) -> &'static str {
        match self {
            ToolState::Pending { .. } => "pending",
            ToolState::Running { .. } => "running",
            ToolState::Completed { .. } => "completed",
            ToolState::Error { .. } => "error",
        }
    }

    /// The call's input.
    pub fn input(&self) -> &Value {
        match self {
            ToolState::Pending { input, .. }
            | ToolState::Running { input, .. }
            | ToolState::Completed { input, .. }
            | ToolState::Error { input, .. } => input,
        }
    }

    /// Whether the call has a final state (completed or error).
    pub fn is_finished(&self) -> bool {
        matches!(self, ToolState::Completed { .. } | ToolState::Error { .. })
    }

    /// Whether this is an error closed by an interruption
    /// (`metadata.interrupted == true`).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, ToolState::Error { metadata, .. }
            if metadata.get("interrupted").and_then(Value::as_bool) == Some(true))
    }
}

/// A tool call in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolPart {
    /// Part id.
    pub id: String,
    /// The provider's call id.
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// Where the call is in its life.
    pub state: ToolState,
    /// Data to send back with the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<ProviderMetadata>,
}

/// A file attached to a message or returned by a tool (opencode's
/// `FilePart`): an image sent to the model as an image, or a record of a
/// text file whose content went into synthetic text parts. Build one with
/// [`FilePart::new`] or [`FilePart::data`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePart {
    /// Part id.
    pub id: String,
    /// MIME type (`image/png`, `text/plain`, ...).
    pub mime: String,
    /// The file's name or path, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Where the content is: a `data:` URL (`data:image/png;base64,…`),
    /// `https:` or `file:`.
    pub url: String,
}

impl FilePart {
    /// A file part with a fresh id pointing at `url`.
    pub fn new(mime: impl Into<String>, url: impl Into<String>) -> Self {
        FilePart {
            id: crate::ids::ascending("prt"),
            mime: mime.into(),
            filename: None,
            url: url.into(),
        }
    }

    /// A file part holding `bytes` as a base64 `data:` URL.
    ///
    /// ```
    /// use agentgate_core::FilePart;
    /// let part = FilePart::data("image/png", b"\x89PNG").with_filename("dot.png");
    /// assert_eq!(part.url, "data:image/png;base64,iVBORw==");
    /// assert!(part.is_image());
    /// ```
    pub fn data(mime: impl Into<String>, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        let mime = mime.into();
        let url = format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        );
        FilePart::new(mime, url)
    }

    /// Sets the file name.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Whether this is an image (`image/…`).
    pub fn is_image(&self) -> bool {
        self.mime.starts_with("image/")
    }

    /// Whether the model sees this part itself. Text files and
    /// directories are only recorded: their content was sent as synthetic
    /// text parts next to them (as opencode does).
    pub fn is_sent(&self) -> bool {
        self.mime != "text/plain" && self.mime != "application/x-directory"
    }

    /// The part as model input.
    pub fn to_content(&self) -> ContentPart {
        ContentPart::File {
            media_type: self.mime.clone(),
            url: self.url.clone(),
            filename: self.filename.clone(),
        }
    }
}

/// One piece of a message.
// Tool parts are the common case in agent transcripts; boxing them would
// add an allocation per call for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Part {
    /// Text.
    Text {
        /// Part id.
        id: String,
        /// The text.
        text: String,
        /// Text added by the SDK rather than written by a person or the model.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        synthetic: bool,
        /// Data to send back with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// Model reasoning, with the signatures/encrypted content providers
    /// need back.
    Reasoning {
        /// Part id.
        id: String,
        /// The reasoning text.
        text: String,
        /// Signatures, encrypted content, item ids.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// A tool call and its result.
    Tool(ToolPart),
    /// A file attached by the user (an image, or the record of a text
    /// file whose content is in the synthetic text parts before it).
    File(FilePart),
    /// A model call (one step) began.
    StepStart {
        /// Part id.
        id: String,
    },
    /// A model call ended.
    StepFinish {
        /// Part id.
        id: String,
        /// Why it ended.
        reason: FinishReason,
        /// Tokens used.
        usage: Usage,
    },
    /// A request to compact the history (in a user message).
    Compaction {
        /// Part id.
        id: String,
        /// Requested automatically rather than by the user.
        auto: bool,
        /// Requested because the context overflowed.
        overflow: bool,
        /// Ids of the messages kept verbatim after the summary (the recent
        /// tail; see compaction in the engine).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<String>,
    },
    /// A request to run a sub-agent (in a user message).
    Subtask {
        /// Part id.
        id: String,
        /// The sub-agent's name.
        agent: String,
        /// A short description.
        description: String,
        /// The sub-agent's prompt.
        prompt: String,
    },
    /// What a step changed in the project's files (its checkpoint, see
    /// [`checkpoint`](crate::checkpoint)): one change per path. Added at the
    /// end of a step that changed something; never sent to the model.
    Patch {
        /// Part id.
        id: String,
        /// The changes, sorted by path.
        files: Vec<crate::checkpoint::FileChange>,
    },
}

impl Part {
    /// The part's id.
    pub fn id(&self) -> &str {
        match self {
            Part::Text { id, .. }
            | Part::Reasoning { id, .. }
            | Part::StepStart { id }
            | Part::StepFinish { id, .. }
            | Part::Compaction { id, .. }
            | Part::Subtask { id, .. }
            | Part::Patch { id, .. } => id,
            Part::Tool(tool) => &tool.id,
            Part::File(file) => &file.id,
        }
    }

    /// The tool part, if this is one.
    pub fn as_tool(&self) -> Option<&ToolPart> {
        match self {
            Part::Tool(tool) => Some(tool),
            _ => None,
        }
    }

    /// A text part with a fresh id.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text {
            id: crate::ids::ascending("prt"),
            text: text.into(),
            synthetic: false,
            provider_metadata: None,
        }
    }
}

/// An error recorded on an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageError {
    /// A stable name: `model`, `context_overflow`, `aborted`, `permission_rejected`, ...
    pub name: String,
    /// Human-readable text.
    pub message: String,
}

/// A message of a session's transcript. Fields grow between versions:
/// build one with [`Message::new`] or [`Message::user`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Message id (`msg_…`, ascending).
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its content, in order.
    pub parts: Vec<Part>,
    /// The agent that handled it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
    /// When it was created and completed (ms since epoch).
    pub time: Timing,
    /// Why the model stopped (assistant messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<FinishReason>,
    /// Tokens used (assistant messages).
    #[serde(default)]
    pub usage: Usage,
    /// What went wrong, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<MessageError>,
    /// Response-level provider data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<ProviderMetadata>,
    /// A compaction summary (assistant messages): once complete, it stands
    /// for every message before it except the kept tail when history is
    /// sent (see compaction in the engine).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary: bool,
    /// The model that answered (assistant messages; opencode's
    /// `providerID`/`modelID`), set by the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::model::ModelRef>,
}

impl Message {
    /// A new, empty message with a fresh id.
    pub fn new(session_id: impl Into<String>, role: Role) -> Self {
        Message {
            id: crate::ids::ascending("msg"),
            session_id: session_id.into(),
            role,
            parts: Vec::new(),
            agent: String::new(),
            time: Timing {
                start: crate::ids::now_ms(),
                end: None,
            },
            finish: None,
            usage: Usage::default(),
            error: None,
            provider_metadata: None,
            summary: false,
            model: None,
        }
    }

    /// A user message with one text part.
    pub fn user(session_id: impl Into<String>, text: impl Into<String>) -> Self {
        let mut message = Message::new(session_id, Role::User);
        message.parts.push(Part::text(text));
        message
    }

    /// The tool parts of this message.
    pub fn tool_parts(&self) -> impl Iterator<Item = &ToolPart> {
        self.parts.iter().filter_map(Part::as_tool)
    }

    /// The concatenated text parts (what a host usually shows as the answer).
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// Closes every tool call that has no result as §11.3 does: its state
    /// becomes `error` with [`ABORTED_ERROR`] and `metadata.interrupted =
    /// true` (earlier metadata kept). Returns the ids of the parts changed.
    pub fn close_open_tool_calls(&mut self, now: u64) -> Vec<String> {
        let mut changed = Vec::new();
        for part in &mut self.parts {
            if let Part::Tool(tool) = part
                && let Some(state) = interrupted_state(&tool.state, now)
            {
                tool.state = state;
                changed.push(tool.id.clone());
            }
        }
        changed
    }
}

/// The error state an unfinished tool call is closed with, or `None` when
/// it is already finished.
pub(crate) fn interrupted_state(state: &ToolState, now: u64) -> Option<ToolState> {
    let (input, metadata, start) = match state {
        ToolState::Pending { input, .. } => (input.clone(), Value::Null, now),
        ToolState::Running {
            input,
            metadata,
            time,
            ..
        } => (input.clone(), metadata.clone(), time.start),
        _ => return None,
    };
    let mut metadata = match metadata {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    metadata.insert("interrupted".into(), Value::Bool(true));
    Some(ToolState::Error {
        input,
        error: ABORTED_ERROR.into(),
        metadata: Value::Object(metadata),
        time: Timing {
            start,
            end: Some(now),
        },
    })
}

/// Converts messages into model input (opencode `message-v2.ts`), every
/// message as given (the engine first picks what a compacted transcript
/// shows, see [`history_for_model`](crate::transcript::history_for_model)):
///
/// - user text parts become a user message; step, compaction and subtask
///   parts are not sent; file parts are sent as [`ContentPart::File`]
///   except text files (their content is in synthetic text parts);
/// - each assistant message becomes an assistant message (text, reasoning
///   with its provider metadata, tool calls) followed by one tool message
///   holding a result for **every** call in it;
/// - a completed call gives its output ([`CLEARED_RESULT`] if compacted);
///   an errored call gives its error text, except an interrupted one whose
///   metadata holds a string `output` (partial output), which is sent as a
///   successful result; a call still pending or running reads
///   [`INTERRUPTED_RESULT`] (§11.3);
/// - a completed call's attachments (unless compacted) follow its result in
///   the tool message as [`ContentPart::File`] parts; each provider sends
///   them as its API allows (inside the tool result, or in a user message
///   after the results).
pub fn to_model_messages(messages: &[Message]) -> Vec<ModelMessage> {
    let mut out = Vec::with_capacity(messages.len() * 2);
    for message in messages {
        append_model_messages(message, &mut out);
    }
    out
}

/// Appends one message's model form to `out` (see [`to_model_messages`]).
pub fn append_model_messages(message: &Message, out: &mut Vec<ModelMessage>) {
    match message.role {
        Role::User => append_user(message, out),
        Role::Assistant => append_assistant(message, out),
    }
}

/// A user message: its text and the files that are sent, as one message.
fn append_user(message: &Message, out: &mut Vec<ModelMessage>) {
    let content: Vec<ContentPart> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text {
                text,
                provider_metadata,
                ..
            } => Some(ContentPart::Text {
                text: text.clone(),
                provider_metadata: provider_metadata.clone(),
            }),
            Part::File(file) if file.is_sent() => Some(file.to_content()),
            _ => None,
        })
        .collect();
    if !content.is_empty() {
        out.push(ModelMessage {
            role: ModelRole::User,
            content,
        });
    }
}

/// An assistant message: its text, reasoning and tool calls as one
/// message, then the calls' results (and attachments) as a tool message.
fn append_assistant(message: &Message, out: &mut Vec<ModelMessage>) {
    let mut content = Vec::new();
    let mut results = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text {
                text,
                provider_metadata,
                ..
            } if !text.is_empty() => content.push(ContentPart::Text {
                text: text.clone(),
                provider_metadata: provider_metadata.clone(),
            }),
            Part::Reasoning {
                text,
                provider_metadata,
                ..
            } => content.push(ContentPart::Reasoning {
                text: text.clone(),
                provider_metadata: provider_metadata.clone(),
            }),
            Part::Tool(tool) => {
                content.push(ContentPart::ToolCall {
                    id: tool.call_id.clone(),
                    name: tool.tool.clone(),
                    input: tool.state.input().clone(),
                    provider_metadata: tool.provider_metadata.clone(),
                });
                let (output, is_error) = tool_result(&tool.state);
                results.push(ContentPart::ToolResult {
                    call_id: tool.call_id.clone(),
                    name: tool.tool.clone(),
                    output,
                    is_error,
                });
                if let ToolState::Completed {
                    attachments,
                    compacted: false,
                    ..
                } = &tool.state
                {
                    results.extend(attachments.iter().map(FilePart::to_content));
                }
            }
            _ => {}
        }
    }
    if !content.is_empty() {
        out.push(ModelMessage {
            role: ModelRole::Assistant,
            content,
        });
    }
    if !results.is_empty() {
        out.push(ModelMessage {
            role: ModelRole::Tool,
            content: results,
        });
    }
}

/// The result text the model sees for a tool call, and whether it is an error.
pub fn tool_result(state: &ToolState) -> (String, bool) {
    match state {
        ToolState::Completed {
            compacted: true, ..
        } => (CLEARED_RESULT.to_string(), false),
        ToolState::Completed { output, .. } => (output.clone(), false),
        ToolState::Error {
            error, metadata, ..
        } => {
            let partial = metadata
                .get("interrupted")
                .and_then(Value::as_bool)
                .filter(|interrupted| *interrupted)
                .and_then(|_| metadata.get("output"))
                .and_then(Value::as_str);
            match partial {
                Some(output) => (output.to_string(), false),
                None => (error.clone(), true),
            }
        }
        ToolState::Pending { .. } | ToolState::Running { .. } => {
            (INTERRUPTED_RESULT.to_string(), true)
        }
    }
}
