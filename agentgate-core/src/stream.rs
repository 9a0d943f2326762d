//! What a model stream yields: [`StreamEvent`], [`ToolCall`], [`FinishReason`].

use serde::{Deserialize, Serialize};

use crate::usage::Usage;

/// Provider-specific data that must travel with a piece of output and go
/// back to the same provider on the next request, keyed by provider name:
/// `{"anthropic": {"signature": "…"}}` on a thinking block,
/// `{"openai": {"itemId": "rs_…", "encryptedContent": "…"}}` on a reasoning
/// item, `{"google": {"thoughtSignature": "…"}}` on a function call.
/// The core never interprets it; it stores it on the part and hands it
/// back unchanged in [`crate::ContentPart`]s.
pub type ProviderMetadata = serde_json::Map<String, serde_json::Value>;

/// Why the model stopped generating.
///
/// Serialised in kebab-case as opencode does (`"tool-calls"`,
/// `"content-filter"`); any unknown string deserialises to
/// [`FinishReason::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end (`end_turn`, `stop`, Gemini `STOP`).
    Stop,
    /// The output token limit was reached (`max_tokens`, `length`).
    Length,
    /// The model wants tool results (`tool_use`, `tool_calls`).
    ToolCalls,
    /// Output was blocked by a safety filter (`content_filter`, `SAFETY`, `refusal`).
    ContentFilter,
    /// The provider reported an error as its finish reason.
    Error,
    /// A reason the provider gave that fits none of the above
    /// (`pause_turn`, `RECITATION`, ...); the raw value can go in the
    /// finish event's provider metadata.
    Other,
    /// No reason given, or one this version does not know.
    #[serde(other)]
    Unknown,
}

impl FinishReason {
    /// The kebab-case name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool-calls",
            FinishReason::ContentFilter => "content-filter",
            FinishReason::Error => "error",
            FinishReason::Other => "other",
            FinishReason::Unknown => "unknown",
        }
    }
}

/// A complete tool call: the provider's call id, the tool name and the
/// decoded JSON arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (Anthropic `toolu_…`, OpenAI `call_…`; minted
    /// by the provider adapter where the API has none, as for Gemini).
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments. Adapters that receive argument text which is not
    /// valid JSON pass it as a JSON string so the tool's decoding reports it
    /// to the model.
    pub input: serde_json::Value,
    /// Data to send back with this call (OpenAI Responses item id, Gemini
    /// thought signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<ProviderMetadata>,
}

/// One event of a model's streamed answer.
///
/// `id`s tie start/delta/end events of one block together; they are
/// chosen by the provider adapter and only need to be unique within one
/// stream. A stream ends with exactly one [`StreamEvent::Finish`]; a stream
/// that ends without it is treated as cut off (a retryable
/// [`crate::ModelError::Interrupted`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StreamEvent {
    /// A text block begins.
    TextStart {
        /// Block id.
        id: String,
    },
    /// More text for an open text block.
    TextDelta {
        /// Block id.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A text block is complete.
    TextEnd {
        /// Block id.
        id: String,
        /// Data to send back with this text (e.g. a Gemini thought signature).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// A reasoning block begins.
    ReasoningStart {
        /// Block id.
        id: String,
        /// Data known at the start (e.g. an OpenAI reasoning item id, or a
        /// whole Anthropic `redacted_thinking` payload).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// More reasoning text.
    ReasoningDelta {
        /// Block id.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A reasoning block is complete.
    ReasoningEnd {
        /// Block id.
        id: String,
        /// Data that must go back with this block: Anthropic `signature`,
        /// OpenAI `encryptedContent`, Gemini `thoughtSignature`. Merged over
        /// the start event's metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
    /// The model started a tool call; arguments follow as deltas.
    ToolInputStart {
        /// The call id (same as the final [`ToolCall::id`]).
        id: String,
        /// The tool name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments (not valid JSON by itself).
    ToolInputDelta {
        /// The call id.
        id: String,
        /// The argument text fragment.
        delta: String,
    },
    /// A tool call is complete. Providers that send calls whole (Gemini,
    /// Ollama) may emit only this event.
    ToolCall(ToolCall),
    /// Response-level provider data (e.g. an OpenAI response id), stored on
    /// the assistant message.
    ProviderMetadata {
        /// The data, keyed by provider name.
        metadata: ProviderMetadata,
    },
    /// The model finished this response.
    Finish {
        /// Why it stopped.
        reason: FinishReason,
        /// Tokens used.
        usage: Usage,
        /// Extra data, e.g. the provider's raw finish reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_metadata: Option<ProviderMetadata>,
    },
}
