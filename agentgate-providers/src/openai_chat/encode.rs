//! [`ModelRequest`] → Chat Completions request body.

use std::borrow::Cow;

use agentgate_core::{ContentPart, ModelMessage, ModelRequest, ModelRole, ToolChoice};
use serde_json::Value;

use super::wire::{
    ChatRequest, FileData, FunctionCall, FunctionDefinition, FunctionName, ImageUrl, Message,
    StreamOptions, Tool, ToolCall, ToolChoice as WireToolChoice, UserContent, UserPart,
};
use crate::encode_cache::{Elements, EncodeCache, elements, flat_history_body};
use crate::families::{MaxTokensField, ModelFamily, Reasoning};
use crate::http::KeptField;
use crate::request_body::RequestBody;

/// What the client contributes besides the request itself.
pub(crate) struct EncodeSettings<'a> {
    pub model: &'a str,
    /// The key of the pass-through options (the provider id).
    pub provider: &'a str,
    /// The model family's request rules.
    pub family: &'a ModelFamily,
    pub max_tokens_field: MaxTokensField,
}

/// The typed request for `request`.
pub(crate) fn encode<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> ChatRequest<'a> {
    let mut messages = system_messages(request);
    let echo_reasoning = echoes_reasoning(settings);
    for message in request.messages.iter() {
        encode_message(message, echo_reasoning, &mut messages);
    }
    ChatRequest {
        messages,
        ..encode_settings(request, settings)
    }
}

/// The system prompt's messages.
fn system_messages(request: &ModelRequest) -> Vec<Message<'_>> {
    request
        .system
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| Message::System {
            content: Cow::Borrowed(s.as_str()),
        })
        .collect()
}

/// Whether assistant turns carry their reasoning back (DeepSeek).
fn echoes_reasoning(settings: &EncodeSettings<'_>) -> bool {
    settings.family.reasoning == Reasoning::ReasoningContentEcho
}

/// The typed request without its messages: model, tools, settings.
fn encode_settings<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> ChatRequest<'a> {
    let (tools, tool_choice) = if request.tools.is_empty() {
        (Vec::new(), None)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: FunctionDefinition {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect();
        let choice = match &request.tool_choice {
            ToolChoice::None => WireToolChoice::Mode("none"),
            ToolChoice::Required => WireToolChoice::Mode("required"),
            ToolChoice::Tool(name) => WireToolChoice::Function {
                kind: "function",
                function: FunctionName { name: name.clone() },
            },
            _ => WireToolChoice::Mode("auto"),
        };
        (tools, Some(choice))
    };
    let (max_tokens, max_completion_tokens) = match settings.max_tokens_field {
        MaxTokensField::MaxTokens => (request.max_output_tokens, None),
        MaxTokensField::MaxCompletionTokens => (None, request.max_output_tokens),
    };
    ChatRequest {
        model: settings.model.to_string(),
        messages: Vec::new(),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools,
        tool_choice,
        temperature: request
            .temperature
            .filter(|_| settings.family.temperature)
            .map(crate::sampling::exact),
        top_p: request
            .top_p
            .filter(|_| settings.family.top_p)
            .map(crate::sampling::exact),
        max_tokens,
        max_completion_tokens,
    }
}

/// The request body: the typed request with the pass-through options of
/// `request.options[provider]` merged over it.
pub(crate) fn request_body(request: &ModelRequest, settings: &EncodeSettings<'_>) -> Value {
    crate::http::body_value(
        &encode(request, settings),
        &request.options,
        settings.provider,
    )
}

/// The bytes of [`request_body`], serialised without the JSON tree (see
/// [`crate::http::body_bytes`]).
/// Each history message's encoding comes from `cache` when an earlier
/// request of this client encoded the same message (see
/// [`crate::encode_cache`]), so a step encodes only what it adds.
pub(crate) fn request_bytes(
    request: &ModelRequest,
    settings: &EncodeSettings<'_>,
    size_hint: &crate::http::SizeHint,
    cache: &EncodeCache<Elements>,
) -> RequestBody {
    let echo_reasoning = echoes_reasoning(settings);
    // The tool list is encoded once, not per step (see crate::tools_encoding).
    let (head, tools) = cache.tools().split(
        &request.tools,
        || encode_settings(request, settings),
        |head| &mut head.tools,
    );
    let cached = flat_history_body(
        cache,
        request,
        system_messages(request),
        |message| {
            let mut wire = Vec::new();
            encode_message(message, echo_reasoning, &mut wire);
            elements(&wire)
        },
        &head,
        tools.as_ref().map(|encoded| KeptField {
            name: "tools",
            before: "tool_choice",
            encoded,
        }),
        "messages",
        settings.provider,
        size_hint,
    );
    if let Some(body) = cached {
        return body;
    }
    RequestBody::from(crate::http::body_bytes(
        &encode(request, settings),
        &request.options,
        settings.provider,
        size_hint,
    ))
}

/// Appends the wire messages of `message`. With `echo_reasoning` (DeepSeek
/// thinking mode), an assistant turn that called tools carries its
/// reasoning back in `reasoning_content`, which that API requires; other
/// turns never do (the same API rejects it there).
pub(crate) fn encode_message<'a>(
    message: &'a ModelMessage,
    echo_reasoning: bool,
    out: &mut Vec<Message<'a>>,
) {
    match message.role {
        ModelRole::User => out.push(Message::User {
            content: user_content(&message.content),
        }),
        ModelRole::Assistant => encode_assistant(message, echo_reasoning, out),
        ModelRole::Tool => encode_tool_results(message, out),
    }
}

/// A user turn's content: a lone text part as a string, anything else as
/// an array of content parts, one per part (as the AI SDK's
/// OpenAI-compatible provider sends it). Parts are never glued together:
/// a prompt and the attached file's text stay two parts.
fn user_content(parts: &[ContentPart]) -> UserContent<'_> {
    match parts {
        [] => UserContent::Text(Cow::Borrowed("")),
        [ContentPart::Text { text, .. }] => UserContent::Text(Cow::Borrowed(text.as_str())),
        _ => UserContent::Parts(parts.iter().filter_map(user_part).collect()),
    }
}

/// An assistant turn: its text and tool calls (and, with `echo_reasoning`,
/// its reasoning when it called tools); nothing for a reasoning-only turn.
fn encode_assistant<'a>(
    message: &'a ModelMessage,
    echo_reasoning: bool,
    out: &mut Vec<Message<'a>>,
) {
    let text = joined_text(&message.content);
    let tool_calls: Vec<ToolCall> = message
        .content
        .iter()
        .filter_map(|p| match p {
            ContentPart::ToolCall {
                id, name, input, ..
            } => Some(ToolCall {
                id: id.clone(),
                kind: "function",
                function: FunctionCall {
                    name: name.clone(),
                    arguments: input.to_string(),
                },
            }),
            _ => None,
        })
        .collect();
    if text.is_empty() && tool_calls.is_empty() {
        // Reasoning-only turns: the API rejects an empty assistant message.
        return;
    }
    let reasoning: String = message
        .content
        .iter()
        .filter_map(|p| match p {
            ContentPart::Reasoning { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let reasoning_content = (echo_reasoning && !tool_calls.is_empty())
        .then_some(reasoning)
        .filter(|r| !r.is_empty());
    out.push(Message::Assistant {
        content: (!text.is_empty()).then(|| text.into_owned()),
        tool_calls,
        reasoning_content,
    });
}

/// Tool results, one wire message each; the files they returned follow in
/// one user message, each introduced by its call.
fn encode_tool_results<'a>(message: &'a ModelMessage, out: &mut Vec<Message<'a>>) {
    // A tool message cannot hold images: the files tools returned
    // (each follows its result) go in one user message after the
    // results, each introduced by the call it came from.
    let mut files = Vec::new();
    let mut last_call = None;
    for part in &message.content {
        match part {
            ContentPart::ToolResult {
                call_id,
                name,
                output,
                ..
            } => {
                last_call = Some((name, call_id));
                out.push(Message::Tool {
                    tool_call_id: Cow::Borrowed(call_id.as_str()),
                    content: Cow::Borrowed(output.as_str()),
                });
            }
            ContentPart::Text { text, .. } if !text.is_empty() => out.push(Message::User {
                content: UserContent::Text(Cow::Borrowed(text.as_str())),
            }),
            ContentPart::File { .. } => {
                if let Some((name, call_id)) = last_call.take() {
                    files.push(UserPart::Text {
                        text: format!("Attached by the {name} tool call {call_id}:"),
                    });
                }
                files.extend(user_part(part));
            }
            _ => {}
        }
    }
    if !files.is_empty() {
        out.push(Message::User {
            content: UserContent::Parts(files),
        });
    }
}

/// The text parts of `parts`, joined (borrowed when there is one).
fn joined_text(parts: &[ContentPart]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(|p| match p {
        ContentPart::Text { text, .. } => Some(text.as_str()),
        _ => None,
    });
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = String::from(first);
            joined.push_str(second);
            texts.for_each(|text| joined.push_str(text));
            Cow::Owned(joined)
        }
    }
}

fn user_part(part: &ContentPart) -> Option<UserPart> {
    match part {
        ContentPart::Text { text, .. } => Some(UserPart::Text { text: text.clone() }),
        ContentPart::File {
            media_type, url, ..
        } if media_type.starts_with("image/") => Some(UserPart::ImageUrl {
            image_url: ImageUrl { url: url.clone() },
        }),
        ContentPart::File {
            media_type,
            url,
            filename,
        } if media_type == "application/pdf" && url.starts_with("data:") => Some(UserPart::File {
            file: FileData {
                filename: filename.clone().unwrap_or_else(|| "file.pdf".into()),
                file_data: url.clone(),
            },
        }),
        ContentPart::File {
            media_type,
            url,
            filename,
        } => Some(UserPart::Text {
            text: format!(
                "[attached file {} ({media_type}) cannot be sent to this API: {}]",
                filename.as_deref().unwrap_or(""),
                if url.starts_with("data:") {
                    "inline data"
                } else {
                    url.as_str()
                },
            ),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_only_assistant_turns_are_left_out() {
        let message = ModelMessage {
            role: ModelRole::Assistant,
            content: vec![ContentPart::Reasoning {
                text: "thinking".into(),
                provider_metadata: None,
            }],
        };
        let mut out = Vec::new();
        encode_message(&message, true, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_user_turn_with_several_parts_is_an_array_of_parts() {
        let text = |text: &str| ContentPart::Text {
            text: text.into(),
            provider_metadata: None,
        };
        let message = ModelMessage {
            role: ModelRole::User,
            content: vec![text("summarise"), text("1: hello")],
        };
        let mut out = Vec::new();
        encode_message(&message, false, &mut out);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            serde_json::json!([{"role": "user", "content": [
                {"type": "text", "text": "summarise"},
                {"type": "text", "text": "1: hello"},
            ]}])
        );
        let mut out = Vec::new();
        let lone = ModelMessage::user("hi");
        encode_message(&lone, false, &mut out);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            serde_json::json!([{"role": "user", "content": "hi"}])
        );
    }
}
