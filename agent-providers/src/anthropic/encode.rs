//! [`ModelRequest`] → Messages request body.
//!
//! System sections go out as text blocks, the first two marked as cache
//! breakpoints, and the last two conversation messages get a breakpoint on
//! their last block that may carry one (§15).

use agent_core::{ContentPart, ModelMessage, ModelRequest, ModelRole, ToolChoice};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::wire::{
    CacheControl, ContentBlock, Message, MessagesRequest, Role, Source, Tool,
    ToolChoice as WireToolChoice,
};
use crate::metadata::metadata_str;

/// What the client contributes besides the request itself.
pub(crate) struct EncodeSettings<'a> {
    pub model: &'a str,
    pub prompt_caching: bool,
    /// The cap sent when the request has none.
    pub default_max_tokens: u32,
}

/// The typed request for `request`.
pub(crate) fn encode(request: &ModelRequest, settings: &EncodeSettings<'_>) -> MessagesRequest {
    let system: Vec<ContentBlock> = request
        .system
        .iter()
        .filter(|s| !s.is_empty())
        .enumerate()
        .map(|(i, text)| ContentBlock::Text {
            text: text.clone(),
            cache_control: (settings.prompt_caching && i < 2).then_some(CacheControl::EPHEMERAL),
        })
        .collect();

    let count = request.messages.len();
    let mut messages: Vec<Message> = Vec::new();
    for (i, message) in request.messages.iter().enumerate() {
        let (role, mut blocks) = encode_message(message);
        if blocks.is_empty() {
            continue;
        }
        if settings.prompt_caching && i + 2 >= count {
            mark_last_cacheable(&mut blocks);
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(Message {
                role,
                content: blocks,
            }),
        }
    }

    let (tools, tool_choice) = if request.tools.is_empty() {
        (Vec::new(), None)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| Tool {
                name: t.name.clone(),
                description: t.description.clone(),
                input_schema: t.parameters.clone(),
            })
            .collect();
        let choice = match &request.tool_choice {
            ToolChoice::None => WireToolChoice::None,
            ToolChoice::Required => WireToolChoice::Any,
            ToolChoice::Tool(name) => WireToolChoice::Tool { name: name.clone() },
            _ => WireToolChoice::Auto,
        };
        (tools, Some(choice))
    };

    MessagesRequest {
        model: settings.model.to_string(),
        max_tokens: request
            .max_output_tokens
            .unwrap_or(settings.default_max_tokens),
        stream: true,
        messages,
        system,
        tools,
        tool_choice,
        temperature: request.temperature.map(f64::from),
        top_p: request.top_p.map(f64::from),
    }
}

/// The request body: the typed request with the pass-through options of
/// `request.options["anthropic"]` merged over it.
pub(crate) fn request_body(request: &ModelRequest, settings: &EncodeSettings<'_>) -> Value {
    let typed = encode(request, settings);
    let mut body = serde_json::to_value(&typed).unwrap_or(Value::Null);
    crate::http::merge_options(&mut body, &request.options, PROVIDER);
    // Extended thinking rejects sampling settings (as the AI SDK does,
    // drop them rather than fail the call).
    if thinking_enabled(&request.options)
        && let Value::Object(map) = &mut body
    {
        map.remove("temperature");
        map.remove("top_p");
    }
    body
}

/// Whether the pass-through options turn extended thinking on.
fn thinking_enabled(options: &Map<String, Value>) -> bool {
    options
        .get(PROVIDER)
        .and_then(|o| o.get("thinking"))
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        == Some("enabled")
}

/// Puts a cache breakpoint on the last block that may carry one (thinking
/// blocks may not).
fn mark_last_cacheable(blocks: &mut [ContentBlock]) {
    for block in blocks.iter_mut().rev() {
        if block.set_cache_control() {
            return;
        }
    }
}

/// A message's wire role and content blocks.
pub(crate) fn encode_message(message: &ModelMessage) -> (Role, Vec<ContentBlock>) {
    let role = match message.role {
        ModelRole::Assistant => Role::Assistant,
        _ => Role::User,
    };
    let blocks = message.content.iter().filter_map(encode_part).collect();
    (role, blocks)
}

fn encode_part(part: &ContentPart) -> Option<ContentBlock> {
    Some(match part {
        // The API rejects empty text blocks.
        ContentPart::Text { text, .. } if text.is_empty() => return None,
        ContentPart::Text { text, .. } => ContentBlock::Text {
            text: text.clone(),
            cache_control: None,
        },
        ContentPart::Reasoning {
            text,
            provider_metadata,
        } => {
            let meta = provider_metadata.as_ref();
            if let Some(data) = metadata_str(meta, PROVIDER, "redactedData") {
                ContentBlock::RedactedThinking {
                    data: data.to_string(),
                }
            } else {
                // Unsigned thinking (from another provider) cannot be
                // sent back: the API rejects it.
                let signature = metadata_str(meta, PROVIDER, "signature")?;
                ContentBlock::Thinking {
                    thinking: text.clone(),
                    signature: signature.to_string(),
                }
            }
        }
        ContentPart::File {
            media_type,
            url,
            filename,
        } => file_block(media_type, url, filename.as_deref()),
        ContentPart::ToolCall {
            id, name, input, ..
        } => ContentBlock::ToolUse {
            id: id.clone(),
            name: name.clone(),
            // `input` must be an object; arguments that were not valid
            // JSON were already answered with an error result.
            input: if input.is_object() {
                input.clone()
            } else {
                Value::Object(Map::new())
            },
            cache_control: None,
        },
        ContentPart::ToolResult {
            call_id,
            output,
            is_error,
            ..
        } => ContentBlock::ToolResult {
            tool_use_id: call_id.clone(),
            content: output.clone(),
            is_error: is_error.then_some(true),
            cache_control: None,
        },
    })
}

fn file_block(media_type: &str, url: &str, filename: Option<&str>) -> ContentBlock {
    let source = match url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
    {
        Some((header, data)) if header.ends_with(";base64") => Source::Base64 {
            media_type: media_type.to_string(),
            data: data.to_string(),
        },
        _ => Source::Url {
            url: url.to_string(),
        },
    };
    if media_type.starts_with("image/") {
        ContentBlock::Image {
            source,
            cache_control: None,
        }
    } else if media_type == "application/pdf" {
        ContentBlock::Document {
            source,
            cache_control: None,
        }
    } else {
        ContentBlock::Text {
            text: format!(
                "[attached file {} ({media_type}) cannot be sent to this API]",
                filename.unwrap_or(""),
            ),
            cache_control: None,
        }
    }
}
