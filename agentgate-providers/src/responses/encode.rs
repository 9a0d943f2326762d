//! [`ModelRequest`] → Responses request body (stateless: `store: false`,
//! reasoning and calls sent back as input items).

use agentgate_core::{ContentPart, ModelRequest, ModelRole, ToolChoice};
use serde_json::Value;

use super::PROVIDER;
use super::wire::{
    ContentPart as WirePart, InputItem, Item, ResponsesRequest, SummaryText, Tool,
    ToolChoice as WireToolChoice,
};
use crate::encode_cache::{Elements, EncodeCache, elements, flat_history_body};
use crate::families::{ModelFamily, Reasoning};
use crate::http::KeptField;
use crate::metadata::metadata_str;
use crate::request_body::RequestBody;

/// What the client contributes besides the request itself.
pub(crate) struct EncodeSettings<'a> {
    pub model: &'a str,
    /// The model family's request rules: a reasoning family gets system
    /// prompts as `developer` and its encrypted reasoning requested.
    pub family: &'a ModelFamily,
}

/// The typed request for `request`.
pub(crate) fn encode<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> ResponsesRequest<'a> {
    let mut input = system_items(request, settings);
    for message in request.messages.iter() {
        encode_message(message.role, &message.content, &mut input);
    }
    ResponsesRequest {
        input,
        ..encode_settings(request, settings)
    }
}

/// Whether the model reasons the OpenAI way (system prompts as
/// `developer`, encrypted reasoning requested).
fn reasons(settings: &EncodeSettings<'_>) -> bool {
    settings.family.reasoning == Reasoning::OpenAiEffort
}

/// The system prompt's input items.
fn system_items(request: &ModelRequest, settings: &EncodeSettings<'_>) -> Vec<InputItem> {
    let system_role = if reasons(settings) {
        "developer"
    } else {
        "system"
    };
    request
        .system
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| InputItem::System {
            role: system_role,
            content: s.clone(),
        })
        .collect()
}

/// The typed request without its input items: model, tools, settings.
fn encode_settings<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> ResponsesRequest<'a> {
    let reasoning = reasons(settings);
    let (tools, tool_choice) = if request.tools.is_empty() {
        (Vec::new(), None)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
                strict: false,
            })
            .collect();
        let choice = match &request.tool_choice {
            ToolChoice::None => WireToolChoice::Mode("none"),
            ToolChoice::Required => WireToolChoice::Mode("required"),
            ToolChoice::Tool(name) => WireToolChoice::Function {
                kind: "function",
                name: name.clone(),
            },
            _ => WireToolChoice::Mode("auto"),
        };
        (tools, Some(choice))
    };
    ResponsesRequest {
        model: settings.model.to_string(),
        input: Vec::new(),
        stream: true,
        store: false,
        include: if reasoning {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
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
        max_output_tokens: request.max_output_tokens,
    }
}

/// The request body: the typed request with the pass-through options of
/// `request.options["openai"]` merged over it.
pub(crate) fn request_body(request: &ModelRequest, settings: &EncodeSettings<'_>) -> Value {
    crate::http::body_value(&encode(request, settings), &request.options, PROVIDER)
}

/// The bytes of [`request_body`], serialised without the JSON tree (see
/// [`crate::http::body_bytes`]). Each history message's items come from
/// `cache` when an earlier request of this client encoded the same
/// message (see [`crate::encode_cache`]), so a step encodes only what it
/// adds.
pub(crate) fn request_bytes(
    request: &ModelRequest,
    settings: &EncodeSettings<'_>,
    size_hint: &crate::http::SizeHint,
    cache: &EncodeCache<Elements>,
) -> RequestBody {
    // The tool list is encoded once, not per step (see crate::tools_encoding).
    let (head, tools) = cache.tools().split(
        &request.tools,
        || encode_settings(request, settings),
        |head| &mut head.tools,
    );
    let cached = flat_history_body(
        cache,
        request,
        system_items(request, settings),
        |message| {
            let mut wire = Vec::new();
            encode_message(message.role, &message.content, &mut wire);
            elements(&wire)
        },
        &head,
        tools.as_ref().map(|encoded| KeptField {
            name: "tools",
            before: "tool_choice",
            encoded,
        }),
        "input",
        PROVIDER,
        size_hint,
    );
    if let Some(body) = cached {
        return body;
    }
    RequestBody::from(crate::http::body_bytes(
        &encode(request, settings),
        &request.options,
        PROVIDER,
        size_hint,
    ))
}

fn user_part(part: &ContentPart) -> Option<WirePart> {
    Some(match part {
        ContentPart::Text { text, .. } => WirePart::InputText { text: text.clone() },
        ContentPart::File {
            media_type, url, ..
        } if media_type.starts_with("image/") => WirePart::InputImage {
            image_url: url.clone(),
        },
        ContentPart::File {
            media_type,
            url,
            filename,
        } if media_type == "application/pdf" && url.starts_with("data:") => WirePart::InputFile {
            filename: filename.clone().unwrap_or_else(|| "file.pdf".into()),
            file_data: url.clone(),
        },
        ContentPart::File {
            media_type,
            filename,
            ..
        } => WirePart::InputText {
            text: format!(
                "[attached file {} ({media_type}) cannot be sent to this API]",
                filename.as_deref().unwrap_or(""),
            ),
        },
        _ => return None,
    })
}

/// Appends the input items of one message.
fn encode_message(role: ModelRole, parts: &[ContentPart], out: &mut Vec<InputItem>) {
    match role {
        ModelRole::User => {
            let content: Vec<WirePart> = parts.iter().filter_map(user_part).collect();
            if !content.is_empty() {
                out.push(InputItem::Message {
                    role: "user",
                    content,
                });
            }
        }
        ModelRole::Assistant => encode_assistant(parts, out),
        ModelRole::Tool => encode_tool_outputs(parts, out),
    }
}

/// An assistant turn: each text, reasoning this API produced (with its
/// encrypted content) and call as its own item.
fn encode_assistant(parts: &[ContentPart], out: &mut Vec<InputItem>) {
    for part in parts {
        match part {
            ContentPart::Text { text, .. } if !text.is_empty() => out.push(InputItem::Message {
                role: "assistant",
                content: vec![WirePart::OutputText { text: text.clone() }],
            }),
            ContentPart::Reasoning {
                text,
                provider_metadata,
            } => {
                // Only reasoning this API produced can go back, and
                // with `store: false` only with its encrypted
                // content: by id alone the server cannot find it.
                let meta = provider_metadata.as_ref();
                let (Some(id), Some(encrypted)) = (
                    metadata_str(meta, PROVIDER, "itemId"),
                    metadata_str(meta, PROVIDER, "encryptedContent"),
                ) else {
                    continue;
                };
                let summary = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![SummaryText {
                        kind: "summary_text",
                        text: text.clone(),
                    }]
                };
                out.push(InputItem::Item(Item::Reasoning {
                    id: id.to_string(),
                    summary,
                    encrypted_content: Some(encrypted.to_string()),
                }));
            }
            ContentPart::ToolCall {
                id, name, input, ..
            } => out.push(InputItem::Item(Item::FunctionCall {
                call_id: id.clone(),
                name: name.clone(),
                arguments: match input {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                },
            })),
            _ => {}
        }
    }
}

/// Tool outputs, one item each; the files they returned follow in one
/// user message, each introduced by its call.
fn encode_tool_outputs(parts: &[ContentPart], out: &mut Vec<InputItem>) {
    // Files tools returned (each follows its result) go in one user
    // message after the outputs, each introduced by its call.
    let mut files = Vec::new();
    let mut last_call = None;
    for part in parts {
        match part {
            ContentPart::ToolResult {
                call_id,
                name,
                output,
                ..
            } => {
                last_call = Some((name, call_id));
                out.push(InputItem::Item(Item::FunctionCallOutput {
                    call_id: call_id.clone(),
                    output: output.clone(),
                }));
            }
            ContentPart::File { .. } => {
                if let Some((name, call_id)) = last_call.take() {
                    files.push(WirePart::InputText {
                        text: format!("Attached by the {name} tool call {call_id}:"),
                    });
                }
                files.extend(user_part(part));
            }
            _ => {}
        }
    }
    if !files.is_empty() {
        out.push(InputItem::Message {
            role: "user",
            content: files,
        });
    }
}
