//! [`ModelRequest`] → Messages request body.
//!
//! System sections go out as text blocks, the first two marked as cache
//! breakpoints, and the last two conversation messages get a breakpoint on
//! their last block that may carry one (§15).

use agentgate_core::{ContentPart, ModelMessage, ModelRequest, ModelRole, ToolChoice};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::wire::{
    CacheControl, ContentBlock, Message, MessagesRequest, Role, Source, ThinkingOption, Tool,
    ToolChoice as WireToolChoice, ToolResultContent,
};
use crate::encode_cache::{EncodeCache, GroupedHistory, Turn};
use crate::metadata::metadata_str;
use crate::request_body::RequestBody;
use serde::Deserialize;

/// What the client contributes besides the request itself.
pub(crate) struct EncodeSettings<'a> {
    pub model: &'a str,
    pub prompt_caching: bool,
    /// The cap sent when the request has none.
    pub default_max_tokens: u32,
    /// The model's output limit (`0` when unknown).
    pub output_limit: u64,
}

/// The typed request for `request`.
pub(crate) fn encode<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> MessagesRequest<'a> {
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
    MessagesRequest {
        messages,
        ..encode_settings(request, settings)
    }
}

/// The typed request without its messages: model, system, tools,
/// settings.
fn encode_settings<'a>(
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> MessagesRequest<'a> {
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
    let (tools, tool_choice) = if request.tools.is_empty() {
        (Vec::new(), None)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
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
        messages: Vec::new(),
        system,
        tools,
        tool_choice,
        temperature: request.temperature.map(crate::sampling::exact),
        top_p: request.top_p.map(crate::sampling::exact),
    }
}

/// The request body: the typed request with the pass-through options of
/// `request.options["anthropic"]` merged over it, then the thinking rules
/// of the Claude family applied: extended thinking rejects `temperature`
/// and `top_p` (dropped, as the AI SDK does), needs `max_tokens` above its
/// `budget_tokens` (the budget is added on top of the requested output),
/// and cannot be combined with a forced tool choice (thinking is dropped,
/// the caller's tool choice kept).
pub(crate) fn request_body(request: &ModelRequest, settings: &EncodeSettings<'_>) -> Value {
    let mut typed = encode(request, settings);
    let options = thinking_rules(&mut typed, request, settings);
    crate::http::body_value(&typed, &options, PROVIDER)
}

/// The bytes of [`request_body`], serialised without the JSON tree (see
/// [`crate::http::body_bytes`]). Each history message's blocks come from
/// `cache` when an earlier request of this client encoded the same
/// message (see [`crate::encode_cache`]), so a step encodes only what it
/// adds; with prompt caching, the last two messages, which carry the
/// breakpoints, are encoded (and marked) anew every time.
pub(crate) fn request_bytes(
    request: &ModelRequest,
    settings: &EncodeSettings<'_>,
    size_hint: &crate::http::SizeHint,
    cache: &EncodeCache<Turn<Role>>,
) -> RequestBody {
    let mut head = encode_settings(request, settings);
    let options = thinking_rules(&mut head, request, settings);
    let marked = if settings.prompt_caching { 2 } else { 0 };
    let cached = GroupedHistory::encode(cache, &request.messages, marked, |message, fresh| {
        let (role, mut blocks) = encode_message(message);
        if fresh {
            mark_last_cacheable(&mut blocks);
        }
        (role, blocks)
    })
    .and_then(|history| {
        let messages: Vec<Message<_>> = history
            .turns()
            .into_iter()
            .map(|(role, content)| Message { role, content })
            .collect();
        crate::http::body_bytes_with_history(
            &head,
            "messages",
            &messages,
            None,
            &options,
            PROVIDER,
            size_hint,
            history.shared(),
        )
    });
    if let Some(body) = cached {
        return body;
    }
    let mut typed = encode(request, settings);
    let options = thinking_rules(&mut typed, request, settings);
    RequestBody::from(crate::http::body_bytes(
        &typed, &options, PROVIDER, size_hint,
    ))
}

/// Applies the thinking rules (see [`request_body`]) to `typed`, and
/// returns the options to merge over it. They read only the settings and
/// the options, never the messages.
fn thinking_rules<'a>(
    typed: &mut MessagesRequest<'_>,
    request: &'a ModelRequest,
    settings: &EncodeSettings<'_>,
) -> std::borrow::Cow<'a, Map<String, Value>> {
    let thinking = request
        .options
        .get(PROVIDER)
        .and_then(|options| options.get("thinking"))
        .and_then(|thinking| ThinkingOption::deserialize(thinking).ok())
        .filter(|thinking| thinking.kind == "enabled");
    let forced = matches!(
        typed.tool_choice,
        Some(WireToolChoice::Any | WireToolChoice::Tool { .. })
    );
    let mut drop_thinking = false;
    if let Some(thinking) = thinking {
        if forced {
            drop_thinking = true;
        } else {
            typed.temperature = None;
            typed.top_p = None;
            if let Some(budget) = thinking.budget_tokens
                && typed.max_tokens <= budget
            {
                let mut raised = budget.saturating_add(typed.max_tokens);
                if u64::from(budget) < settings.output_limit {
                    raised = raised.min(u32::try_from(settings.output_limit).unwrap_or(u32::MAX));
                }
                typed.max_tokens = raised;
            }
        }
    }
    if drop_thinking {
        let mut options = request.options.clone();
        if let Some(Value::Object(ours)) = options.get_mut(PROVIDER) {
            ours.remove("thinking");
        }
        std::borrow::Cow::Owned(options)
    } else {
        std::borrow::Cow::Borrowed(&request.options)
    }
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
    let blocks = message.content.iter().filter_map(encode_part);
    let blocks = match message.role {
        ModelRole::Tool => into_tool_results(blocks),
        _ => blocks.collect(),
    };
    (role, blocks)
}

/// A tool message's blocks with each image or document a tool returned
/// (it follows its result, see `to_model_messages`) moved into that
/// `tool_result`'s content: the API wants every `tool_result` before any
/// other block of the message.
fn into_tool_results(blocks: impl Iterator<Item = ContentBlock>) -> Vec<ContentBlock> {
    let mut out: Vec<ContentBlock> = Vec::new();
    for block in blocks {
        let attached = matches!(
            block,
            ContentBlock::Image { .. } | ContentBlock::Document { .. }
        );
        match out.last_mut() {
            Some(ContentBlock::ToolResult { content, .. }) if attached => {
                let mut inner =
                    match std::mem::replace(content, ToolResultContent::Blocks(Vec::new())) {
                        // The API rejects empty text blocks.
                        ToolResultContent::Text(text) if text.is_empty() => Vec::new(),
                        ToolResultContent::Text(text) => vec![ContentBlock::Text {
                            text,
                            cache_control: None,
                        }],
                        ToolResultContent::Blocks(blocks) => blocks,
                    };
                inner.push(block);
                *content = ToolResultContent::Blocks(inner);
            }
            _ => out.push(block),
        }
    }
    out
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
            content: ToolResultContent::Text(output.clone()),
            is_error: is_error.then_some(true),
            cache_control: None,
        },
        // A kind of content newer than this encoder: left out of the request.
        _ => return None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode_cache::check_growing_history;

    #[test]
    fn a_growing_history_encodes_only_what_it_adds() {
        for prompt_caching in [true, false] {
            let settings = EncodeSettings {
                model: "claude-sonnet-4-5",
                prompt_caching,
                default_max_tokens: 32_000,
                output_limit: 64_000,
            };
            let cache = EncodeCache::default();
            let size_hint = crate::http::SizeHint::default();
            // With prompt caching the last two messages carry the
            // breakpoints: encoded anew at every step, never kept.
            let fresh_tail = if prompt_caching { 2 } else { 0 };
            check_growing_history(&cache, fresh_tail, |request| {
                let bytes = request_bytes(request, &settings, &size_hint, &cache);
                let body = request_body(request, &settings);
                assert_eq!(
                    bytes.to_vec(),
                    serde_json::to_vec(&body).unwrap_or_default()
                );
            });
        }
    }
}
