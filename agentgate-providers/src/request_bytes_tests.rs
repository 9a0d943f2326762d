//! Differential test of the request bytes: what each client sends
//! (`request_bytes`, the typed request serialised straight to bytes) is
//! byte for byte its `request_body` value serialised (what clients sent
//! before), over random transcripts: texts with escapes and non-ASCII,
//! reasoning with provider metadata, tool calls and results (errors too),
//! files, system sections, tools, tool choices, sampling, and provider
//! options (merged, or for another provider). The second property runs a
//! conversation through one client of each kind, step after step, as the
//! engine does (messages appended, changed, dropped, a history rebuilt or
//! forked): the bytes stay exact while the clients reuse the encodings of
//! the messages they have sent before.

use std::sync::Arc;

use agentgate_core::{
    ContentPart, ModelMessage, ModelRequest, ModelRole, ProviderMetadata, ToolChoice, ToolSpec,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::anthropic::Anthropic;
use crate::gemini::Gemini;
use crate::openai_chat::OpenAiCompatible;
use crate::request_body::WritesBody;
use crate::responses::OpenAiResponses;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{0,12}",
        "\\PC{0,24}",
        // Control characters, quotes and backslashes (escaped on the wire).
        proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\n'),
                Just('\u{1}'),
                Just('é'),
                Just('😀'),
                Just('x')
            ],
            0..16
        )
        .prop_map(|chars| chars.into_iter().collect()),
        // Long enough to be sent as a chunk of its own, without a copy.
        ("[a-z\"\\\\\n]{1,4}", 1100..1600usize).prop_map(|(unit, n)| unit.repeat(n)),
    ]
}

fn metadata() -> impl Strategy<Value = Option<ProviderMetadata>> {
    prop_oneof![
        Just(None),
        text().prop_map(|signature| {
            let mut metadata = ProviderMetadata::new();
            metadata.insert("anthropic".into(), json!({"signature": signature}));
            metadata.insert(
                "google".into(),
                json!({"thoughtSignature": signature.clone()}),
            );
            metadata.insert(
                "openai".into(),
                json!({"itemId": "rs_1", "reasoningEncryptedContent": signature}),
            );
            Some(metadata)
        }),
    ]
}

fn input() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({})),
        text().prop_map(|command| json!({"command": command, "timeout": 5})),
        (text(), 0i64..1000).prop_map(|(path, n)| json!({"path": path, "n": n, "z": [1.5, null]})),
    ]
}

fn part(role: ModelRole) -> BoxedStrategy<ContentPart> {
    let text_part = (text(), metadata()).prop_map(|(text, provider_metadata)| ContentPart::Text {
        text,
        provider_metadata,
    });
    let file = (
        prop_oneof![
            Just("image/png"),
            Just("application/pdf"),
            Just("text/plain")
        ],
        prop_oneof![
            Just("data:image/png;base64,AAAA"),
            Just("https://example.com/a.png")
        ],
        proptest::option::of("[a-z]{1,6}\\.(png|pdf|txt)"),
    )
        .prop_map(|(media_type, url, filename)| ContentPart::File {
            media_type: media_type.into(),
            url: url.into(),
            filename,
        });
    match role {
        ModelRole::User => prop_oneof![4 => text_part, 1 => file].boxed(),
        ModelRole::Assistant => prop_oneof![
            text_part,
            (text(), metadata()).prop_map(|(text, provider_metadata)| ContentPart::Reasoning {
                text,
                provider_metadata
            }),
            ("call_[a-z0-9]{1,6}", "[a-z_]{1,8}", input(), metadata()).prop_map(
                |(id, name, input, provider_metadata)| ContentPart::ToolCall {
                    id,
                    name,
                    input,
                    provider_metadata,
                }
            ),
        ]
        .boxed(),
        ModelRole::Tool => prop_oneof![
            4 => ("call_[a-z0-9]{1,6}", "[a-z_]{1,8}", text(), any::<bool>()).prop_map(
                |(call_id, name, output, is_error)| ContentPart::ToolResult {
                    call_id,
                    name,
                    output,
                    is_error,
                }
            ),
            1 => text_part,
        ]
        .boxed(),
    }
}

fn message() -> impl Strategy<Value = ModelMessage> {
    prop_oneof![
        Just(ModelRole::User),
        Just(ModelRole::Assistant),
        Just(ModelRole::Tool)
    ]
    .prop_flat_map(|role| {
        proptest::collection::vec(part(role), 0..4)
            .prop_map(move |content| ModelMessage { role, content })
    })
}

fn request() -> impl Strategy<Value = ModelRequest> {
    (
        proptest::collection::vec(message(), 0..8),
        proptest::collection::vec(text(), 0..3),
        0..3usize,
        0..4usize,
        proptest::option::of(0.0f32..2.0),
        proptest::option::of(0.0f32..1.0),
        proptest::option::of(1u32..100_000),
        0..6usize,
    )
        .prop_map(
            |(messages, system, tools, choice, temperature, top_p, max_output, options)| {
                let mut request = ModelRequest::new(messages).with_system(system);
                if tools > 0 {
                    // A long list (one long description) is sent as a
                    // chunk of its own, without a copy.
                    let description = if tools == 2 {
                        "Runs a command.\n".repeat(400)
                    } else {
                        "Runs a command.".into()
                    };
                    request = request.with_tools(vec![ToolSpec {
                        name: "bash".into(),
                        description,
                        parameters: std::sync::Arc::new(json!({"type": "object", "properties": {"command": {"type": "string"}}})),
                    }]);
                }
                request.tool_choice = match choice {
                    0 => ToolChoice::Auto,
                    1 => ToolChoice::None,
                    2 => ToolChoice::Required,
                    _ => ToolChoice::Tool("bash".into()),
                };
                request.temperature = temperature;
                request.top_p = top_p;
                request.max_output_tokens = max_output;
                match options {
                    // Nothing to merge: the bytes are written straight.
                    0 => {}
                    1 => {
                        request = request.with_options("openai", json!({"reasoning_effort": "high", "store": false}));
                    }
                    2 => {
                        request = request.with_options(
                            "anthropic",
                            json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}),
                        );
                    }
                    3 => {
                        request = request.with_options(
                            "google",
                            json!({"generationConfig": {"thinkingConfig": {"thinkingBudget": 512}}}),
                        );
                    }
                    // Options that replace the tool list (merged over the
                    // kept encoding).
                    4 => {
                        request = request.with_options(
                            "openai",
                            json!({"tools": [{"type": "web_search"}], "parallel_tool_calls": false}),
                        );
                    }
                    // Options of another provider, and an empty object.
                    _ => {
                        request = request
                            .with_options("elsewhere", json!({"x": 1}))
                            .with_options("openai", json!({}));
                    }
                }
                request
            },
        )
}

/// `value` as `RequestBuilder::json` wrote it.
fn bytes_of(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn each_client_sends_its_request_body_byte_for_byte(request in request()) {
        let chat = OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1");
        prop_assert_eq!(chat.request_bytes(&request), bytes_of(&chat.request_body(&request)));
        let deepseek = OpenAiCompatible::new("deepseek", "deepseek-reasoner", "http://127.0.0.1:9/v1");
        prop_assert_eq!(
            deepseek.request_bytes(&request),
            bytes_of(&deepseek.request_body(&request))
        );
        let anthropic = Anthropic::new("claude-sonnet-4-5", "k");
        prop_assert_eq!(
            anthropic.request_bytes(&request),
            bytes_of(&anthropic.request_body(&request))
        );
        let uncached = Anthropic::new("claude-sonnet-4-5", "k").with_prompt_caching(false);
        prop_assert_eq!(
            uncached.request_bytes(&request),
            bytes_of(&uncached.request_body(&request))
        );
        let responses = OpenAiResponses::new("gpt-5", "k");
        prop_assert_eq!(
            responses.request_bytes(&request),
            bytes_of(&responses.request_body(&request))
        );
        let gemini = Gemini::new("gemini-2.5-pro", "k");
        prop_assert_eq!(gemini.request_bytes(&request), bytes_of(&gemini.request_body(&request)));
    }
}

/// What happens to the history between two steps.
#[derive(Debug, Clone)]
enum Edit {
    /// A new message at the end (the usual step).
    Push(ModelMessage),
    /// A message changed in place (`Arc::make_mut`).
    Change(usize, ModelMessage),
    /// The history cut short (compaction keeps a part).
    Truncate(usize),
    /// The same contents in new `Arc`s (a history reloaded from the store).
    Reload,
    /// Another conversation's history sharing this one's `Arc`s (a fork),
    /// sent in between.
    Fork(ModelMessage),
    /// Another tool list (a new turn, another agent): `n` tools, in a new
    /// `Arc`.
    Tools(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => message().prop_map(Edit::Push),
        1 => (0..3usize).prop_map(Edit::Tools),
        1 => (0..16usize, message()).prop_map(|(i, m)| Edit::Change(i, m)),
        1 => (0..16usize).prop_map(Edit::Truncate),
        1 => Just(Edit::Reload),
        1 => message().prop_map(Edit::Fork),
    ]
}

/// Checks what each client sends for `request` against its body.
fn check_all(clients: &Clients, request: &ModelRequest) -> Result<(), TestCaseError> {
    let (chat, deepseek, anthropic, uncached, responses, gemini) = clients;
    prop_assert_eq!(
        chat.request_bytes(request),
        bytes_of(&chat.request_body(request))
    );
    prop_assert_eq!(
        deepseek.request_bytes(request),
        bytes_of(&deepseek.request_body(request))
    );
    prop_assert_eq!(
        anthropic.request_bytes(request),
        bytes_of(&anthropic.request_body(request))
    );
    prop_assert_eq!(
        uncached.request_bytes(request),
        bytes_of(&uncached.request_body(request))
    );
    prop_assert_eq!(
        responses.request_bytes(request),
        bytes_of(&responses.request_body(request))
    );
    prop_assert_eq!(
        gemini.request_bytes(request),
        bytes_of(&gemini.request_body(request))
    );
    Ok(())
}

type Clients = (
    OpenAiCompatible,
    OpenAiCompatible,
    Anthropic,
    Anthropic,
    OpenAiResponses,
    Gemini,
);

fn clients() -> Clients {
    (
        OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1"),
        OpenAiCompatible::new("deepseek", "deepseek-reasoner", "http://127.0.0.1:9/v1"),
        Anthropic::new("claude-sonnet-4-5", "k"),
        Anthropic::new("claude-sonnet-4-5", "k").with_prompt_caching(false),
        OpenAiResponses::new("gpt-5", "k"),
        Gemini::new("gemini-2.5-pro", "k"),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_conversation_is_sent_exactly_at_every_step(
        start in request(),
        edits in proptest::collection::vec(edit(), 1..12),
    ) {
        let clients = clients();
        let mut request = start;
        check_all(&clients, &request)?;
        for edit in edits {
            let history = Arc::make_mut(&mut request.messages);
            match edit {
                Edit::Push(message) => history.push(Arc::new(message)),
                Edit::Change(index, message) => {
                    if !history.is_empty() {
                        let at = index % history.len();
                        *Arc::make_mut(&mut history[at]) = message;
                    }
                }
                Edit::Truncate(keep) => history.truncate(keep),
                Edit::Reload => {
                    *history = history.iter().map(|m| Arc::new((**m).clone())).collect();
                }
                Edit::Tools(n) => {
                    request.tools = Arc::new(
                        (0..n)
                            .map(|i| ToolSpec {
                                name: format!("tool_{i}"),
                                description: format!("Tool {i}."),
                                parameters: Arc::new(json!({"type": "object"})),
                            })
                            .collect(),
                    );
                }
                Edit::Fork(message) => {
                    let mut fork = request.clone();
                    Arc::make_mut(&mut fork.messages).push(Arc::new(message));
                    check_all(&clients, &fork)?;
                }
            }
            check_all(&clients, &request)?;
        }
    }
}

/// A client that sent a large body sizes the next one's buffer from it,
/// and still sends the exact body of a smaller request after it.
#[test]
fn a_smaller_request_after_a_large_one_is_sent_exactly() {
    let chat = OpenAiCompatible::new("openai", "gpt-4.1", "http://127.0.0.1:9/v1");
    let large = ModelRequest::new(vec![ModelMessage {
        role: ModelRole::Tool,
        content: vec![ContentPart::ToolResult {
            call_id: "call_1".into(),
            name: "bash".into(),
            output: "x\"\n".repeat(20_000),
            is_error: false,
        }],
    }]);
    let small = ModelRequest::new(vec![ModelMessage::user("hi")]);
    let first = chat.request_bytes(&large);
    assert_eq!(first, bytes_of(&chat.request_body(&large)));
    assert!(first.len() > 60_000);
    let second = chat.request_bytes(&small);
    assert_eq!(second, bytes_of(&chat.request_body(&small)));
    assert!(second.len() < 1_000);
}
