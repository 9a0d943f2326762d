//! The request and response bodies of opencode's server (1.18) that this
//! server shares with it: sessions, prompts, permission requests and their
//! answers, errors. The server derives their OpenAPI schema (`GET /doc`)
//! from them; field order is the order they are written in.

use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "server")]
use utoipa::ToSchema;

use crate::permission::Reply;

/// `{healthy, version}` of `GET /global/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct Health {
    pub(crate) healthy: bool,
    pub(crate) version: String,
}

/// Start and last-update times of a session, ms since the epoch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct SessionTime {
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) created: u64,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) updated: u64,
}

/// The model a session runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct SessionModel {
    pub(crate) id: String,
    #[serde(rename = "providerID")]
    pub(crate) provider_id: String,
}

/// opencode's `Session`. Only `id` is required when reading one: the
/// client also reads opencode's own server, whose sessions name no agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionInfo {
    pub(crate) id: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) slug: String,
    #[serde(rename = "projectID", default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) project_id: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) directory: String,
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub(crate) parent_id: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) title: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<SessionModel>,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) version: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) time: SessionTime,
    /// Where the session is reverted to, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) revert: Option<RevertInfo>,
}

/// opencode's `Session.revert`: the messages from `messageID` (or its part
/// `partID`) on are taken back and hidden.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct RevertInfo {
    #[serde(rename = "messageID")]
    pub(crate) message_id: String,
    #[serde(rename = "partID", default, skip_serializing_if = "Option::is_none")]
    pub(crate) part_id: Option<String>,
}

/// The body of `POST /session/{id}/revert`: opencode's `{messageID,
/// partID?}`, and `force` (this server's own) to overwrite files changed
/// since.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct RevertBody {
    #[serde(rename = "messageID")]
    pub(crate) message_id: String,
    #[serde(rename = "partID", default, skip_serializing_if = "Option::is_none")]
    pub(crate) part_id: Option<String>,
    /// Restore even files changed since by someone else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) force: bool,
}

/// The optional body of `POST /session/{id}/unrevert`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct UnrevertBody {
    /// Put files back even when they changed since the revert.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) force: bool,
}

/// One file of `GET /session/{id}/diff` (opencode's `SnapshotFileDiff`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct SnapshotFileDiff {
    pub(crate) file: String,
    pub(crate) patch: String,
    pub(crate) additions: usize,
    pub(crate) deletions: usize,
    /// `added`, `deleted` or `modified`.
    pub(crate) status: String,
}

/// A model named by a request: `{providerID, modelID}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ModelChoice {
    #[serde(rename = "providerID")]
    pub(crate) provider_id: String,
    #[serde(rename = "modelID")]
    pub(crate) model_id: String,
}

/// The body of `PATCH /session/{id}`: only `title` changes anything here
/// (opencode's `metadata`, `permission` and `time.archived` are accepted
/// and left alone).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct UpdateSession {
    /// The new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
}

/// The body of `POST /session/{id}/fork`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ForkSession {
    /// Copy the messages before this one (default: all).
    #[serde(default, rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub(crate) message_id: Option<String>,
}

/// The body of `POST /session`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct CreateSession {
    /// A title for UIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    /// The agent the session starts in (default: the configured default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
}

/// One part of a prompt: `text`, `file` (named, not read: the model reads
/// files through its tools, past the permission gate), `agent` or
/// `subtask`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct PartInput {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
}

impl PartInput {
    /// A `text` part.
    pub(crate) fn text(text: impl Into<String>) -> Self {
        PartInput {
            kind: "text".into(),
            text: Some(text.into()),
            ..PartInput::default()
        }
    }
}

/// The body of `POST /session/{id}/message` and `prompt_async`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptBody {
    /// The prompt's parts, in order.
    pub(crate) parts: Vec<PartInput>,
    /// The agent to run this prompt (and the next ones) on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// The model to run this prompt (and the next ones) on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<ModelChoice>,
    /// Store the prompt without running it: not supported (400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) no_reply: Option<bool>,
}

/// The body of `POST /permission/{requestID}/reply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ReplyBody {
    /// `once`, `always`, `always_exact` or `reject`.
    pub(crate) reply: ReplyWord,
    /// With `reject`: feedback the model reads (reject-with-feedback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

impl ReplyBody {
    /// The body that answers with `reply`: a grant is a `once` (the
    /// server decides its own sandbox), a reject carries its feedback.
    pub(crate) fn of(reply: &Reply) -> Self {
        let (reply, message) = match reply {
            Reply::Always => (ReplyWord::Always, None),
            // An agentgate server's extension: the asked patterns only.
            Reply::AlwaysExact => (ReplyWord::AlwaysExact, None),
            Reply::Once | Reply::Grant => (ReplyWord::Once, None),
            Reply::Reject { feedback } => (ReplyWord::Reject, feedback.clone()),
            _ => (ReplyWord::Reject, None),
        };
        ReplyBody { reply, message }
    }
}

/// The body of `POST /session/{id}/permissions/{permissionID}` (the route
/// of opencode's first SDK).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct RespondBody {
    /// `once`, `always` or `reject`.
    pub(crate) response: ReplyWord,
}

/// An answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReplyWord {
    /// Allow this call.
    Once,
    /// Allow, and approve the request's `always` patterns for the project.
    Always,
    /// Allow, and approve exactly the request's asked patterns for the
    /// project (offered where `always` would approve more; see the
    /// request's `alwaysChoices`). An extension of opencode's API.
    #[serde(rename = "always_exact")]
    AlwaysExact,
    /// Refuse (and every other pending ask of the session).
    Reject,
}

impl ReplyWord {
    /// The reply this word (and a reject's `message`) gives.
    pub(crate) fn reply(self, message: Option<String>) -> Reply {
        match self {
            ReplyWord::Once => Reply::Once,
            ReplyWord::Always => Reply::Always,
            ReplyWord::AlwaysExact => Reply::AlwaysExact,
            ReplyWord::Reject => Reply::Reject {
                feedback: message.filter(|m| !m.trim().is_empty()),
            },
        }
    }
}

/// The tool call a permission request belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ToolRef {
    #[serde(rename = "messageID")]
    pub(crate) message_id: String,
    #[serde(rename = "callID")]
    pub(crate) call_id: String,
}

/// opencode's `PermissionRequest` (the properties of `permission.asked`
/// and the items of `GET /permission`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct PermissionInfo {
    pub(crate) id: String,
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    pub(crate) permission: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) patterns: Vec<String>,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(value_type = Object))]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) metadata: Value,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) always: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool: Option<ToolRef>,
    /// Each "always" answer the request offers, with the rules it stores
    /// and how to say so (an extension of opencode's shape: the approval
    /// page and `agent attach` show these words).
    #[serde(rename = "alwaysChoices", default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) always_choices: Vec<AlwaysChoiceInfo>,
}

/// One "always" answer of a request: the `reply` word that picks it, a
/// label naming the rules it stores, the same in words, and the rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct AlwaysChoiceInfo {
    /// `always` or `always_exact`.
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub(crate) reply: ReplyWord,
    /// `Always allow bash "rm *"`.
    pub(crate) label: String,
    /// What the rules cover, in words, and for how long.
    pub(crate) meaning: String,
    /// The `{permission, pattern, action}` rules stored for the project.
    #[cfg_attr(feature = "server", schema(value_type = Vec<Object>))]
    pub(crate) rules: Value,
}

/// An error: `{name, data: {message}}`, as opencode's errors read (the
/// body of an error answer and the `error` of `session.error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ErrorBody {
    pub(crate) name: String,
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) data: ErrorData,
}

/// What an error says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ErrorData {
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub(crate) message: String,
    /// For an unknown route: the routes this server serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) routes: Option<Vec<String>>,
}

impl ErrorBody {
    /// `{name, data: {message}}`.
    pub(crate) fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorBody {
            name: name.into(),
            data: ErrorData {
                message: message.into(),
                routes: None,
            },
        }
    }
}

/// A message with its parts, `{info, parts}`, in opencode's shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct MessageWithParts {
    #[cfg_attr(feature = "server", schema(value_type = Object))]
    pub(crate) info: Value,
    #[cfg_attr(feature = "server", schema(value_type = Vec<Object>))]
    pub(crate) parts: Vec<Value>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_clients_bodies_are_the_ones_the_server_reads() {
        let cases = [
            (Reply::Once, json!({"reply": "once"})),
            (Reply::Grant, json!({"reply": "once"})),
            (Reply::Always, json!({"reply": "always"})),
            (Reply::AlwaysExact, json!({"reply": "always_exact"})),
            (Reply::reject(), json!({"reply": "reject"})),
            (
                Reply::correct("use cargo"),
                json!({"reply": "reject", "message": "use cargo"}),
            ),
        ];
        for (reply, wire) in cases {
            let body = ReplyBody::of(&reply);
            assert_eq!(serde_json::to_value(&body).unwrap(), wire, "{reply:?}");
            let read: ReplyBody = serde_json::from_value(wire).unwrap();
            let back = read.reply.reply(read.message);
            let expected = if reply == Reply::Grant {
                Reply::Once
            } else {
                reply
            };
            assert_eq!(back, expected);
        }
        let prompt = PromptBody {
            parts: vec![PartInput::text("hi")],
            agent: None,
            model: None,
            no_reply: None,
        };
        let wire = serde_json::to_string(&prompt).unwrap();
        assert_eq!(wire, r#"{"parts":[{"type":"text","text":"hi"}]}"#);
        assert_eq!(serde_json::from_str::<PromptBody>(&wire).unwrap(), prompt);
        assert_eq!(
            serde_json::to_string(&CreateSession::default()).unwrap(),
            "{}"
        );
    }

    #[test]
    fn an_opencode_session_and_error_read_with_the_servers_types() {
        // opencode's required fields only, and fields this server lacks.
        let session: SessionInfo = serde_json::from_value(json!({
            "id": "ses_1", "slug": "s", "projectID": "p", "directory": "/w",
            "title": "t", "version": "1.18.0", "time": {"created": 1, "updated": 2},
            "share": {"url": "x"}, "model": {"id": "m", "providerID": "p", "variant": "v"}
        }))
        .unwrap();
        assert_eq!((session.id.as_str(), session.time.updated), ("ses_1", 2));
        let error: ErrorBody = serde_json::from_value(
            json!({"name": "ProviderAuthError", "data": {"providerID": "x", "message": "no key"}}),
        )
        .unwrap();
        assert_eq!(error.data.message, "no key");
        let written = serde_json::to_value(ErrorBody::new("NotFoundError", "gone")).unwrap();
        assert_eq!(
            written,
            json!({"name": "NotFoundError", "data": {"message": "gone"}})
        );
    }
}
