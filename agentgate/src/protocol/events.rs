//! The event stream's events (`GET /event`): `{id, type, properties}`,
//! their names ([`EventKind`], one table) and their typed properties
//! ([`ServerEvent`]), for the events this server writes.

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::bodies::{ErrorBody, PermissionInfo, ReplyWord, SessionInfo};

/// The name of an event: its `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum EventKind {
    /// The first event of every stream.
    ServerConnected,
    /// A session was created (or forked).
    SessionCreated,
    /// A session's title or times changed.
    SessionUpdated,
    /// A session was deleted.
    SessionDeleted,
    /// A session became busy, idle, or retries its provider.
    SessionStatus,
    /// A session's turn ended.
    SessionIdle,
    /// A session's turn failed.
    SessionError,
    /// A message was created or completed.
    MessageUpdated,
    /// A part was created or changed.
    MessagePartUpdated,
    /// Streamed text of a part.
    MessagePartDelta,
    /// A permission ask.
    PermissionAsked,
    /// A permission ask was answered.
    PermissionReplied,
}

/// Every event this server writes, with its name on the wire.
const NAMES: &[(EventKind, &str)] = &[
    (EventKind::ServerConnected, "server.connected"),
    (EventKind::SessionCreated, "session.created"),
    (EventKind::SessionUpdated, "session.updated"),
    (EventKind::SessionDeleted, "session.deleted"),
    (EventKind::SessionStatus, "session.status"),
    (EventKind::SessionIdle, "session.idle"),
    (EventKind::SessionError, "session.error"),
    (EventKind::MessageUpdated, "message.updated"),
    (EventKind::MessagePartUpdated, "message.part.updated"),
    (EventKind::MessagePartDelta, "message.part.delta"),
    (EventKind::PermissionAsked, "permission.asked"),
    (EventKind::PermissionReplied, "permission.replied"),
];

impl EventKind {
    /// Every kind, in the table's order.
    #[cfg(test)]
    pub(crate) fn all() -> impl Iterator<Item = EventKind> {
        NAMES.iter().map(|(kind, _)| *kind)
    }

    /// The `type` string.
    pub(crate) fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or("", |(_, name)| name)
    }

    /// The kind named `name`, if this server writes it.
    pub(crate) fn from_name(name: &str) -> Option<EventKind> {
        NAMES
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(kind, _)| *kind)
    }
}

impl Serialize for EventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        EventKind::from_name(&name)
            .ok_or_else(|| D::Error::custom(format!("unknown event type {name:?}")))
    }
}

/// The properties of `session.created`, `session.updated` and
/// `session.deleted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionChange {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    pub(crate) info: SessionInfo,
}

/// The properties of `session.status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionStatus {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    pub(crate) status: StatusInfo,
}

/// opencode's `SessionStatus`: `{type: idle | busy | retry, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum StatusInfo {
    /// No turn runs.
    Idle,
    /// A turn runs.
    Busy,
    /// The provider failed; attempt `attempt` starts at `next` (ms since
    /// the epoch).
    Retry {
        #[serde(default)]
        attempt: u64,
        #[serde(default)]
        message: String,
        #[serde(default)]
        next: u64,
    },
}

/// The properties of `session.idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionIdle {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
}

/// The properties of `session.error` (both optional in opencode's schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionError {
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<ErrorBody>,
}

/// The properties of `message.updated`: the message's info as opencode's
/// `UserMessage` or `AssistantMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MessageUpdated {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    pub(crate) info: Value,
}

/// The properties of `message.part.updated`: the part as opencode's
/// `Part`, and when it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartUpdated {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    pub(crate) part: Value,
    #[serde(default)]
    pub(crate) time: u64,
}

/// The properties of `message.part.delta`: text appended to a part's
/// `field` (`text` for answer and reasoning text alike).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartDelta {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    #[serde(rename = "messageID", default)]
    pub(crate) message_id: String,
    #[serde(rename = "partID")]
    pub(crate) part_id: String,
    #[serde(default)]
    pub(crate) field: String,
    pub(crate) delta: String,
}

/// The properties of `permission.replied`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PermissionReplied {
    #[serde(rename = "sessionID")]
    pub(crate) session_id: String,
    #[serde(rename = "requestID")]
    pub(crate) request_id: String,
    pub(crate) reply: ReplyWord,
}

/// What a client reads of a part (opencode's `Part` carries more): its
/// id and type, and for a tool part the call and its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartSummary {
    pub(crate) id: String,
    #[serde(rename = "type")]
    pub(crate) kind: String,
    #[serde(rename = "callID", default, skip_serializing_if = "Option::is_none")]
    pub(crate) call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<PartState>,
}

/// A tool part's state as a client reads it (opencode's `ToolState`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartState {
    #[serde(default)]
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// One event with its typed properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ServerEvent {
    /// `server.connected` (properties `{}`).
    ServerConnected,
    /// `session.created`.
    SessionCreated(SessionChange),
    /// `session.updated`.
    SessionUpdated(SessionChange),
    /// `session.deleted`.
    SessionDeleted(SessionChange),
    /// `session.status`.
    SessionStatus(SessionStatus),
    /// `session.idle`.
    SessionIdle(SessionIdle),
    /// `session.error`.
    SessionError(SessionError),
    /// `message.updated`.
    MessageUpdated(MessageUpdated),
    /// `message.part.updated`.
    MessagePartUpdated(PartUpdated),
    /// `message.part.delta`.
    MessagePartDelta(PartDelta),
    /// `permission.asked`.
    PermissionAsked(PermissionInfo),
    /// `permission.replied`.
    PermissionReplied(PermissionReplied),
}

impl ServerEvent {
    /// The event's name.
    pub(crate) fn kind(&self) -> EventKind {
        match self {
            ServerEvent::ServerConnected => EventKind::ServerConnected,
            ServerEvent::SessionCreated(_) => EventKind::SessionCreated,
            ServerEvent::SessionUpdated(_) => EventKind::SessionUpdated,
            ServerEvent::SessionDeleted(_) => EventKind::SessionDeleted,
            ServerEvent::SessionStatus(_) => EventKind::SessionStatus,
            ServerEvent::SessionIdle(_) => EventKind::SessionIdle,
            ServerEvent::SessionError(_) => EventKind::SessionError,
            ServerEvent::MessageUpdated(_) => EventKind::MessageUpdated,
            ServerEvent::MessagePartUpdated(_) => EventKind::MessagePartUpdated,
            ServerEvent::MessagePartDelta(_) => EventKind::MessagePartDelta,
            ServerEvent::PermissionAsked(_) => EventKind::PermissionAsked,
            ServerEvent::PermissionReplied(_) => EventKind::PermissionReplied,
        }
    }

    /// The session the event belongs to (none for `server.connected`, nor
    /// for a `session.error` that names none).
    pub(crate) fn session_id(&self) -> Option<&str> {
        match self {
            ServerEvent::ServerConnected => None,
            ServerEvent::SessionCreated(p)
            | ServerEvent::SessionUpdated(p)
            | ServerEvent::SessionDeleted(p) => Some(&p.session_id),
            ServerEvent::SessionStatus(p) => Some(&p.session_id),
            ServerEvent::SessionIdle(p) => Some(&p.session_id),
            ServerEvent::SessionError(p) => p.session_id.as_deref(),
            ServerEvent::MessageUpdated(p) => Some(&p.session_id),
            ServerEvent::MessagePartUpdated(p) => Some(&p.session_id),
            ServerEvent::MessagePartDelta(p) => Some(&p.session_id),
            ServerEvent::PermissionAsked(p) => Some(&p.session_id),
            ServerEvent::PermissionReplied(p) => Some(&p.session_id),
        }
    }

    /// The event of kind `kind` with `properties`.
    fn from_parts(kind: EventKind, properties: Value) -> Result<Self, serde_json::Error> {
        use serde_json::from_value as props;
        Ok(match kind {
            EventKind::ServerConnected => ServerEvent::ServerConnected,
            EventKind::SessionCreated => ServerEvent::SessionCreated(props(properties)?),
            EventKind::SessionUpdated => ServerEvent::SessionUpdated(props(properties)?),
            EventKind::SessionDeleted => ServerEvent::SessionDeleted(props(properties)?),
            EventKind::SessionStatus => ServerEvent::SessionStatus(props(properties)?),
            EventKind::SessionIdle => ServerEvent::SessionIdle(props(properties)?),
            EventKind::SessionError => ServerEvent::SessionError(props(properties)?),
            EventKind::MessageUpdated => ServerEvent::MessageUpdated(props(properties)?),
            EventKind::MessagePartUpdated => ServerEvent::MessagePartUpdated(props(properties)?),
            EventKind::MessagePartDelta => ServerEvent::MessagePartDelta(props(properties)?),
            EventKind::PermissionAsked => ServerEvent::PermissionAsked(props(properties)?),
            EventKind::PermissionReplied => ServerEvent::PermissionReplied(props(properties)?),
        })
    }
}

/// The properties of an event, serialised as its own type says.
struct Properties<'a>(&'a ServerEvent);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ServerEvent::ServerConnected => serializer.serialize_struct("Empty", 0)?.end(),
            ServerEvent::SessionCreated(p)
            | ServerEvent::SessionUpdated(p)
            | ServerEvent::SessionDeleted(p) => p.serialize(serializer),
            ServerEvent::SessionStatus(p) => p.serialize(serializer),
            ServerEvent::SessionIdle(p) => p.serialize(serializer),
            ServerEvent::SessionError(p) => p.serialize(serializer),
            ServerEvent::MessageUpdated(p) => p.serialize(serializer),
            ServerEvent::MessagePartUpdated(p) => p.serialize(serializer),
            ServerEvent::MessagePartDelta(p) => p.serialize(serializer),
            ServerEvent::PermissionAsked(p) => p.serialize(serializer),
            ServerEvent::PermissionReplied(p) => p.serialize(serializer),
        }
    }
}

/// One event as the stream carries it: `{id, type, properties}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    /// The event's ascending `evt_…` id (empty when a server sent none).
    pub(crate) id: String,
    /// The event.
    pub(crate) event: ServerEvent,
}

impl Serialize for Envelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Event", 3)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("type", &self.event.kind())?;
        out.serialize_field("properties", &Properties(&self.event))?;
        out.end()
    }
}

/// An event as read, before its type is known.
#[derive(Deserialize)]
struct RawEnvelope {
    #[serde(default)]
    id: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    properties: Value,
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawEnvelope::deserialize(deserializer)?;
        let kind = EventKind::from_name(&raw.kind)
            .ok_or_else(|| D::Error::custom(format!("unknown event type {:?}", raw.kind)))?;
        let event = ServerEvent::from_parts(kind, raw.properties).map_err(D::Error::custom)?;
        Ok(Envelope { id: raw.id, event })
    }
}

impl Envelope {
    /// The event one server-sent event's `data` holds: `Ok(None)` for an
    /// event of a kind this server never writes (opencode's server writes
    /// many more), an error for one that is not `{type, properties}` JSON
    /// or whose properties do not fit its type.
    pub(crate) fn decode(data: &str) -> Result<Option<Envelope>, serde_json::Error> {
        let raw: RawEnvelope = serde_json::from_str(data)?;
        let Some(kind) = EventKind::from_name(&raw.kind) else {
            return Ok(None);
        };
        let event = ServerEvent::from_parts(kind, raw.properties)?;
        Ok(Some(Envelope { id: raw.id, event }))
    }

    /// The event's JSON, as one server-sent event's `data`.
    pub(crate) fn encode(&self) -> String {
        // Serialising plain structs and JSON values into a string cannot
        // fail (no map has non-string keys).
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::protocol::{ErrorBody, ReplyWord, SessionInfo, SessionTime, ToolRef};
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn every_kind_is_named_once_and_reads_back() {
        let names: Vec<&str> = EventKind::all().map(EventKind::name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for kind in EventKind::all() {
            assert_eq!(EventKind::from_name(kind.name()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.name()));
            let back: EventKind = serde_json::from_value(json!(kind.name())).unwrap();
            assert_eq!(back, kind);
        }
        assert!(serde_json::from_value::<EventKind>(json!("tui.toast.show")).is_err());
    }

    #[test]
    fn unknown_kinds_are_none_and_misshapen_ones_errors() {
        let other = r#"{"id":"evt_1","type":"lsp.updated","properties":{}}"#;
        assert!(Envelope::decode(other).unwrap().is_none());
        assert!(Envelope::decode("not json").is_err());
        assert!(Envelope::decode(r#"{"type":"session.idle","properties":{}}"#).is_err());
        assert!(Envelope::decode(r#"{"properties":{"sessionID":"ses_1"}}"#).is_err());
        // opencode leaves `time` and `messageID` out of some events.
        let delta = r#"{"type":"message.part.delta","properties":{"sessionID":"s","partID":"p","delta":"d"}}"#;
        let read = Envelope::decode(delta).unwrap().unwrap();
        assert_eq!(read.event.kind(), EventKind::MessagePartDelta);
        assert_eq!(read.event.session_id(), Some("s"));
    }

    /// A session as the server describes it, from the values given.
    fn session(text: &str, id: &str, number: u64) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            slug: id.into(),
            project_id: "global".into(),
            directory: text.into(),
            parent_id: Some(text.into()),
            title: text.into(),
            agent: "build".into(),
            model: None,
            version: "0.1.0".into(),
            time: SessionTime {
                created: number,
                updated: number,
            },
            revert: None,
        }
    }

    /// One event of every kind, from the strings and numbers given.
    fn every_event(text: &str, id: &str, number: u64, value: &Value) -> Vec<ServerEvent> {
        let change = SessionChange {
            session_id: id.into(),
            info: session(text, id, number),
        };
        let status = |status| {
            ServerEvent::SessionStatus(SessionStatus {
                session_id: id.into(),
                status,
            })
        };
        vec![
            ServerEvent::ServerConnected,
            ServerEvent::SessionCreated(change.clone()),
            ServerEvent::SessionUpdated(change.clone()),
            ServerEvent::SessionDeleted(change),
            status(StatusInfo::Busy),
            status(StatusInfo::Idle),
            status(StatusInfo::Retry {
                attempt: number,
                message: text.into(),
                next: number,
            }),
            ServerEvent::SessionIdle(SessionIdle {
                session_id: id.into(),
            }),
            ServerEvent::SessionError(SessionError {
                session_id: Some(id.into()),
                error: Some(ErrorBody::new("UnknownError", text)),
            }),
            ServerEvent::MessageUpdated(MessageUpdated {
                session_id: id.into(),
                info: value.clone(),
            }),
            ServerEvent::MessagePartUpdated(PartUpdated {
                session_id: id.into(),
                part: value.clone(),
                time: number,
            }),
            ServerEvent::MessagePartDelta(PartDelta {
                session_id: id.into(),
                message_id: id.into(),
                part_id: id.into(),
                field: "text".into(),
                delta: text.into(),
            }),
            ServerEvent::PermissionAsked(PermissionInfo {
                id: id.into(),
                session_id: id.into(),
                permission: text.into(),
                patterns: vec![text.into()],
                metadata: value.clone(),
                always: vec![text.into()],
                tool: Some(ToolRef {
                    message_id: id.into(),
                    call_id: text.into(),
                }),
                always_choices: Vec::new(),
            }),
            ServerEvent::PermissionReplied(PermissionReplied {
                session_id: id.into(),
                request_id: id.into(),
                reply: ReplyWord::Reject,
            }),
        ]
    }

    #[test]
    fn the_sample_covers_every_kind() {
        let kinds: Vec<EventKind> = every_event("t", "ses_1", 1, &json!({}))
            .iter()
            .map(ServerEvent::kind)
            .collect();
        for kind in EventKind::all() {
            assert!(kinds.contains(&kind), "{kind:?} has no sample");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            ".*".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec(("[a-z]{1,6}", inner), 0..4)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// What the server writes the client reads back as the same event,
        /// and writing it again gives the same bytes.
        #[test]
        fn every_event_round_trips(
            text in ".*",
            id in "[a-zA-Z0-9_-]{0,24}",
            number in any::<u64>(),
            value in json_value(),
        ) {
            for event in every_event(&text, &id, number, &value) {
                let written = Envelope { id: format!("evt_{id}"), event }.encode();
                let read = Envelope::decode(&written).unwrap().unwrap();
                prop_assert_eq!(read.encode(), written.clone());
                let generic: Envelope = serde_json::from_str(&written).unwrap();
                prop_assert_eq!(generic, read);
            }
        }
    }
}
