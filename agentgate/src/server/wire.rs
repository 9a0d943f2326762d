//! The server's side of the wire: the engine's sessions, messages, parts,
//! permission requests and errors in opencode's (1.18) shapes. The typed
//! shapes live in [`crate::protocol`], which the remote client reads with
//! (re-exported here for the routes); messages and parts are built as
//! JSON, field for field as opencode's `Message` and `Part` schemas name
//! them.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::permission::{AlwaysChoice, PermissionRequest, ReplyKind};
pub(crate) use crate::protocol::{
    AlwaysChoiceInfo, CommandBody, CommandInfo, CreateSession, ErrorBody, ErrorData, ForkSession,
    Health, MessageWithParts, PartInput, PermissionInfo, PromptBody, ReplyBody, ReplyWord,
    RespondBody, RevertBody, RevertInfo, SessionInfo, SessionModel, SessionTime, ShellBody,
    SnapshotFileDiff, SummarizeBody, ToolRef, UnrevertBody, UpdateSession,
};
use crate::transcript::MessageError;
use crate::{Message, ModelCost, Part, Role, Session, ToolState, Usage};

/// The creation time an ascending id (`ses_`, `msg_`, …) carries: its
/// first 12 hex digits are ms since the epoch.
pub(crate) fn id_time(id: &str) -> u64 {
    id.split_once('_')
        .and_then(|(_, rest)| rest.get(..12))
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .unwrap_or(0)
}

impl SessionInfo {
    pub(crate) fn of(session: &Session, updated: Option<u64>) -> Self {
        // The session's own times; for one stored before sessions had
        // times, the time its id carries and its last message's.
        let created = if session.time.created > 0 {
            session.time.created
        } else {
            id_time(&session.id)
        };
        let updated = updated.unwrap_or(0).max(session.time.updated);
        let updated = (updated > 0).then_some(updated);
        SessionInfo {
            id: session.id.clone(),
            slug: session.id.clone(),
            project_id: "global".to_string(),
            directory: session.directory.display().to_string(),
            parent_id: session.parent_id.clone(),
            title: session.title.clone(),
            agent: session.agent.clone(),
            model: session.model.as_ref().map(|m| SessionModel {
                id: m.model_id.clone(),
                provider_id: m.provider_id.clone(),
            }),
            version: env!("CARGO_PKG_VERSION").to_string(),
            time: SessionTime {
                created,
                updated: updated.unwrap_or(created).max(created),
            },
            revert: session.revert.as_ref().map(|point| RevertInfo {
                message_id: point.message_id.clone(),
                part_id: point.part_id.clone(),
            }),
        }
    }
}

impl AlwaysChoiceInfo {
    fn of(choice: AlwaysChoice) -> Option<Self> {
        let reply = match choice.kind {
            ReplyKind::Always => ReplyWord::Always,
            ReplyKind::AlwaysExact => ReplyWord::AlwaysExact,
            _ => return None,
        };
        Some(AlwaysChoiceInfo {
            reply,
            rules: serde_json::to_value(&choice.rules).unwrap_or(Value::Null),
            label: choice.label,
            meaning: choice.meaning,
        })
    }
}

impl PermissionInfo {
    pub(crate) fn of(request: &PermissionRequest) -> Self {
        PermissionInfo {
            id: request.id.clone(),
            session_id: request.session_id.clone(),
            permission: request.permission.clone(),
            patterns: request.patterns.clone(),
            metadata: request.metadata.clone(),
            always: request.always.clone(),
            tool: request.tool.as_ref().map(|t| ToolRef {
                message_id: t.message_id.clone(),
                call_id: t.call_id.clone(),
            }),
            always_choices: request
                .always_choices()
                .into_iter()
                .filter_map(AlwaysChoiceInfo::of)
                .collect(),
        }
    }
}

/// What a message's info needs besides the message: where the session
/// runs, on which model, and (for an assistant message) the user message
/// it answers.
#[derive(Debug, Clone)]
pub(crate) struct MessageContext<'a> {
    pub(crate) directory: &'a Path,
    pub(crate) provider_id: &'a str,
    pub(crate) model_id: &'a str,
    pub(crate) parent_id: Option<&'a str>,
    /// The model's configured prices: an answer's `cost` (0 without).
    pub(crate) price: Option<ModelCost>,
}

fn tokens(usage: &Usage) -> Value {
    json!({
        "total": usage.input + usage.output + usage.cache_read + usage.cache_write,
        "input": usage.input,
        "output": usage.output,
        "reasoning": usage.reasoning,
        "cache": {"read": usage.cache_read, "write": usage.cache_write},
    })
}

/// A recorded error as opencode names its kinds.
pub(crate) fn error_json(error: &MessageError) -> Value {
    serde_json::to_value(error_body(error)).unwrap_or(Value::Null)
}

/// A recorded error as opencode's `{name, data: {message}}`.
pub(crate) fn error_body(error: &MessageError) -> ErrorBody {
    let name = match error.name.as_str() {
        "aborted" => "MessageAbortedError",
        "context_overflow" => "ContextOverflowError",
        "output_length" | "length" => "MessageOutputLengthError",
        "content_filter" => "ContentFilterError",
        _ => "UnknownError",
    };
    ErrorBody::new(name, error.message.clone())
}

/// opencode's `UserMessage` or `AssistantMessage` for `message`.
pub(crate) fn message_info(message: &Message, ctx: &MessageContext<'_>) -> Value {
    let model = json!({"providerID": ctx.provider_id, "modelID": ctx.model_id});
    match message.role {
        Role::User => json!({
            "id": message.id,
            "sessionID": message.session_id,
            "role": "user",
            "time": {"created": message.time.start},
            "agent": message.agent,
            "model": model,
        }),
        Role::Assistant => {
            // The model that answered, as recorded; the session's for a
            // message stored before messages recorded it.
            let (provider_id, model_id) = match &message.model {
                Some(model) => (model.provider_id.as_str(), model.model_id.as_str()),
                None => (ctx.provider_id, ctx.model_id),
            };
            let mut info = json!({
                "id": message.id,
                "sessionID": message.session_id,
                "role": "assistant",
                "time": {"created": message.time.start},
                "parentID": ctx.parent_id.unwrap_or_default(),
                "modelID": model_id,
                "providerID": provider_id,
                "mode": message.agent,
                "agent": message.agent,
                "path": {"cwd": ctx.directory.display().to_string(), "root": ctx.directory.display().to_string()},
                "cost": ctx.price.map_or(0.0, |price| price.of(&message.usage)),
                "tokens": tokens(&message.usage),
            });
            if let Some(end) = message.time.end {
                info["time"]["completed"] = json!(end);
            }
            if let Some(finish) = &message.finish {
                info["finish"] = serde_json::to_value(finish).unwrap_or(Value::Null);
            }
            if let Some(error) = &message.error {
                info["error"] = error_json(error);
            }
            if message.summary {
                info["summary"] = json!(true);
            }
            info
        }
    }
}

/// opencode's `Part` for `part` of message `message_id`.
/// `directory` is the session's (a patch lists its files' absolute paths).
pub(crate) fn part_json(
    part: &Part,
    (session_id, message_id): (&str, &str),
    time: u64,
    directory: &Path,
) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(part.id()));
    out.insert("sessionID".into(), json!(session_id));
    out.insert("messageID".into(), json!(message_id));
    match part {
        Part::Text {
            text, synthetic, ..
        } => {
            out.insert("type".into(), json!("text"));
            out.insert("text".into(), json!(text));
            if *synthetic {
                out.insert("synthetic".into(), json!(true));
            }
        }
        Part::Reasoning { text, .. } => {
            out.insert("type".into(), json!("reasoning"));
            out.insert("text".into(), json!(text));
            out.insert("time".into(), json!({"start": time}));
        }
        Part::Tool(tool) => {
            out.insert("type".into(), json!("tool"));
            out.insert("callID".into(), json!(tool.call_id));
            out.insert("tool".into(), json!(tool.tool));
            out.insert("state".into(), tool_state(&tool.tool, &tool.state));
        }
        Part::StepStart { .. } => {
            out.insert("type".into(), json!("step-start"));
        }
        Part::StepFinish { reason, usage, .. } => {
            out.insert("type".into(), json!("step-finish"));
            out.insert(
                "reason".into(),
                serde_json::to_value(reason).unwrap_or(Value::Null),
            );
            out.insert("cost".into(), json!(0));
            out.insert("tokens".into(), tokens(usage));
        }
        Part::Compaction { auto, overflow, .. } => {
            out.insert("type".into(), json!("compaction"));
            out.insert("auto".into(), json!(auto));
            out.insert("overflow".into(), json!(overflow));
        }
        Part::Subtask {
            agent,
            description,
            prompt,
            ..
        } => {
            out.insert("type".into(), json!("subtask"));
            out.insert("agent".into(), json!(agent));
            out.insert("description".into(), json!(description));
            out.insert("prompt".into(), json!(prompt));
        }
        Part::Patch { files, .. } => {
            // opencode's `PatchPart`: its `hash` names a snapshot tree; a
            // step's checkpoint here is its part, so the part's id.
            out.insert("type".into(), json!("patch"));
            out.insert("hash".into(), json!(part.id()));
            let files: Vec<String> = files
                .iter()
                .map(|change| directory.join(&change.path).display().to_string())
                .collect();
            out.insert("files".into(), json!(files));
        }
        _ => {
            out.insert("type".into(), json!("unknown"));
        }
    }
    Value::Object(out)
}

/// How much of a finished `bash` call's output its `metadata.output`
/// shows (opencode's bash tool keeps at most 30,000 characters there).
const METADATA_OUTPUT_BYTES: usize = 30_000;

/// A tool state as opencode's `ToolState` (the same fields; `compacted`
/// is left out, opencode records it as a time). A finished `bash` call
/// gets its `metadata.output` back (opencode's clients show a command's
/// output from there): the agent stores the output once, in `output`.
fn tool_state(tool: &str, state: &ToolState) -> Value {
    let mut value = serde_json::to_value(state).unwrap_or_else(|_| json!({}));
    if let Some(object) = value.as_object_mut() {
        object.remove("compacted");
        if let ToolState::Completed {
            output, metadata, ..
        } = state
            && tool == "bash"
            && metadata.get("output").is_none()
            && let Some(Value::Object(shown)) = object.get_mut("metadata")
        {
            shown.insert("output".into(), json!(tail(output, METADATA_OUTPUT_BYTES)));
        }
        if let ToolState::Error { .. } = state
            && let Some(time) = object.get_mut("time")
            && time.get("end").is_none()
        {
            let start = time.get("start").cloned().unwrap_or(json!(0));
            time["end"] = start;
        }
    }
    value
}

/// The last `max` bytes of `text` (cut at a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// A message and its parts as `{info, parts}`.
pub(crate) fn with_parts(message: &Message, ctx: &MessageContext<'_>) -> MessageWithParts {
    MessageWithParts {
        info: message_info(message, ctx),
        parts: message
            .parts
            .iter()
            .map(|part| {
                part_json(
                    part,
                    (&message.session_id, &message.id),
                    message.time.start,
                    ctx.directory,
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::permission::Reply;

    #[test]
    fn ids_carry_their_creation_time() {
        let id = crate::Session::new("build", "/tmp").id;
        assert!(id_time(&id) > 1_700_000_000_000);
        assert_eq!(id_time("ses_019abc12ef0000000001"), 0x019a_bc12_ef00);
        assert_eq!(id_time("nonsense"), 0);
    }

    #[test]
    fn a_reject_with_feedback_corrects_and_an_empty_one_rejects() {
        assert_eq!(
            ReplyWord::Reject.reply(Some("use cargo".into())),
            Reply::correct("use cargo")
        );
        assert_eq!(ReplyWord::Reject.reply(Some("  ".into())), Reply::reject());
        assert_eq!(ReplyWord::Once.reply(Some("ignored".into())), Reply::Once);
    }

    #[test]
    fn an_answers_cost_is_its_tokens_at_the_models_prices() {
        let mut answer = Message::new("ses_1", Role::Assistant);
        answer.usage.input = 1_000_000;
        answer.usage.output = 100_000;
        let ctx = |price| MessageContext {
            directory: Path::new("/w"),
            provider_id: "local",
            model_id: "m",
            parent_id: None,
            price,
        };
        // $3/M in, $15/M out: $3 + $1.5.
        let priced = message_info(&answer, &ctx(Some(ModelCost::new(3.0, 15.0))));
        assert_eq!(priced["cost"], json!(4.5));
        assert_eq!(message_info(&answer, &ctx(None))["cost"], json!(0.0));
    }

    fn completed(output: &str, metadata: Value) -> ToolState {
        ToolState::Completed {
            input: json!({"command": "x"}),
            output: output.into(),
            title: "x".into(),
            metadata,
            time: crate::Timing {
                start: 1,
                end: Some(2),
            },
            compacted: false,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn a_finished_bash_call_gets_its_metadata_output_from_the_output() {
        // Stored once (in `output`), served as opencode's clients read it.
        let state = tool_state("bash", &completed("hello\n", json!({"exit": 0})));
        assert_eq!(state["metadata"]["output"], "hello\n");
        assert_eq!(state["metadata"]["exit"], 0);
        // At most 30,000 bytes: the end, cut on a character boundary.
        let long = format!("{}{}", "é".repeat(20_000), "end");
        let state = tool_state("bash", &completed(&long, json!({})));
        let shown = state["metadata"]["output"].as_str().unwrap();
        assert!(shown.len() <= METADATA_OUTPUT_BYTES && shown.ends_with("end"));
        // A metadata output the tool kept, and other tools, are left alone.
        let state = tool_state("bash", &completed("a", json!({"output": "live"})));
        assert_eq!(state["metadata"]["output"], "live");
        let state = tool_state("read", &completed("a", json!({})));
        assert!(state["metadata"].get("output").is_none());
    }
}
