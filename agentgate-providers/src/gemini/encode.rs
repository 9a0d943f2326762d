//! [`ModelRequest`] → `streamGenerateContent` request body.

use agentgate_core::{ContentPart, ModelRequest, ModelRole, ProviderMetadata, ToolChoice};
use serde_json::Value;

use super::PROVIDER;
use super::wire::{
    Content, FileData, FunctionCall, FunctionCallingConfig, FunctionDeclaration, FunctionOutput,
    FunctionResponse, GenerateRequest, GenerationConfig, InlineData, Part, SystemInstruction,
    ToolConfig, Tools,
};
use crate::encode_cache::{EncodeCache, GroupedHistory, Turn};
use crate::metadata::metadata_str;
use crate::request_body::RequestBody;

/// The typed request for `request`.
pub(crate) fn encode(request: &ModelRequest) -> GenerateRequest<'_> {
    let mut contents: Vec<Content> = Vec::new();
    for message in request.messages.iter() {
        let (role, parts) = encode_message(message.role, &message.content);
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => contents.push(Content { role, parts }),
        }
    }
    GenerateRequest {
        contents,
        ..encode_settings(request)
    }
}

/// The typed request without its contents: system instruction, tools,
/// generation config.
fn encode_settings(request: &ModelRequest) -> GenerateRequest<'_> {
    let system: Vec<Part> = request
        .system
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| Part {
            text: Some(s.clone()),
            ..Part::default()
        })
        .collect();
    let (tools, tool_config) = if request.tools.is_empty() {
        (Vec::new(), None)
    } else {
        let declarations = request
            .tools
            .iter()
            .map(|t| FunctionDeclaration {
                name: &t.name,
                description: &t.description,
                parameters_json_schema: &t.parameters,
            })
            .collect();
        let (mode, allowed) = match &request.tool_choice {
            ToolChoice::None => ("NONE", None),
            ToolChoice::Required => ("ANY", None),
            ToolChoice::Tool(name) => ("ANY", Some(vec![name.clone()])),
            _ => ("AUTO", None),
        };
        (
            vec![Tools {
                function_declarations: declarations,
            }],
            Some(ToolConfig {
                function_calling_config: FunctionCallingConfig {
                    mode,
                    allowed_function_names: allowed,
                },
            }),
        )
    };
    GenerateRequest {
        contents: Vec::new(),
        system_instruction: (!system.is_empty()).then_some(SystemInstruction { parts: system }),
        tools,
        tool_config,
        generation_config: GenerationConfig {
            temperature: request.temperature.map(crate::sampling::exact),
            top_p: request.top_p.map(crate::sampling::exact),
            max_output_tokens: request.max_output_tokens,
            extra: Default::default(),
        },
    }
}

/// The request body: the typed request with the pass-through options of
/// `request.options["google"]` merged over it.
pub(crate) fn request_body(request: &ModelRequest) -> Value {
    crate::http::body_value(&encode(request), &request.options, PROVIDER)
}

/// The bytes of [`request_body`], serialised without the JSON tree (see
/// [`crate::http::body_bytes`]). Each history message's parts come from
/// `cache` when an earlier request of this client encoded the same
/// message (see [`crate::encode_cache`]), so a step encodes only what it
/// adds.
pub(crate) fn request_bytes(
    request: &ModelRequest,
    size_hint: &crate::http::SizeHint,
    cache: &EncodeCache<Turn<&'static str>>,
) -> RequestBody {
    let cached = GroupedHistory::encode(cache, &request.messages, 0, |message, _| {
        encode_message(message.role, &message.content)
    })
    .and_then(|history| {
        let contents: Vec<Content<_>> = history
            .turns()
            .into_iter()
            .map(|(role, parts)| Content { role, parts })
            .collect();
        crate::http::body_bytes_with_history(
            &encode_settings(request),
            "contents",
            &contents,
            None,
            &request.options,
            PROVIDER,
            size_hint,
            history.shared(),
        )
    });
    if let Some(body) = cached {
        return body;
    }
    RequestBody::from(crate::http::body_bytes(
        &encode(request),
        &request.options,
        PROVIDER,
        size_hint,
    ))
}

fn signature(metadata: Option<&ProviderMetadata>) -> Option<String> {
    metadata_str(metadata, PROVIDER, "thoughtSignature").map(str::to_string)
}

fn encode_message(role: ModelRole, content: &[ContentPart]) -> (&'static str, Vec<Part>) {
    let wire_role = match role {
        ModelRole::Assistant => "model",
        _ => "user",
    };
    let mut parts: Vec<Part> = content.iter().filter_map(encode_part).collect();
    if role == ModelRole::Tool {
        // The files tools returned (each follows its result) go after all
        // the function responses, as inline data of the same content.
        parts.sort_by_key(|part| part.function_response.is_none());
    }
    (wire_role, parts)
}

fn encode_part(part: &ContentPart) -> Option<Part> {
    Some(match part {
        ContentPart::Text { text, .. } if text.is_empty() => return None,
        ContentPart::Text {
            text,
            provider_metadata,
        } => Part {
            text: Some(text.clone()),
            thought_signature: signature(provider_metadata.as_ref()),
            ..Part::default()
        },
        // Thoughts go back only with the signature Gemini gave them.
        ContentPart::Reasoning {
            text,
            provider_metadata,
        } => Part {
            text: Some(text.clone()),
            thought: Some(true),
            thought_signature: Some(signature(provider_metadata.as_ref())?),
            ..Part::default()
        },
        ContentPart::File {
            media_type, url, ..
        } => match url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(','))
        {
            Some((header, data)) if header.ends_with(";base64") => Part {
                inline_data: Some(InlineData {
                    mime_type: media_type.clone(),
                    data: data.to_string(),
                }),
                ..Part::default()
            },
            _ => Part {
                file_data: Some(FileData {
                    mime_type: media_type.clone(),
                    file_uri: url.clone(),
                }),
                ..Part::default()
            },
        },
        ContentPart::ToolCall {
            name,
            input,
            provider_metadata,
            ..
        } => Part {
            function_call: Some(FunctionCall {
                name: name.clone(),
                args: input.clone(),
            }),
            thought_signature: signature(provider_metadata.as_ref()),
            ..Part::default()
        },
        ContentPart::ToolResult { name, output, .. } => Part {
            function_response: Some(FunctionResponse {
                name: name.clone(),
                response: FunctionOutput {
                    name: name.clone(),
                    content: output.clone(),
                },
            }),
            ..Part::default()
        },
        // A kind of content newer than this encoder: left out of the request.
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode_cache::check_growing_history;

    #[test]
    fn a_growing_history_encodes_only_what_it_adds() {
        let cache = EncodeCache::default();
        let size_hint = crate::http::SizeHint::default();
        check_growing_history(&cache, 0, |request| {
            let bytes = request_bytes(request, &size_hint, &cache);
            let body = request_body(request);
            assert_eq!(
                bytes.to_vec(),
                serde_json::to_vec(&body).unwrap_or_default()
            );
        });
    }
}
