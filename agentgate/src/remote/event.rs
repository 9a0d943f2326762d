//! The typed events of a remote turn, and how the server's events (read
//! with [`crate::protocol`]'s types) become them: only the events of the
//! client's own session, and nothing a malformed event could turn into a
//! panic.

use std::collections::HashSet;

use serde_json::Value;

use super::usage::{RemoteUsage, UsageTally};
use crate::permission::{PermissionRequest, Reply, ToolCallRef};
use crate::protocol::{
    Envelope, MessageUpdated, PartDelta, PartSummary, ServerEvent, SessionError, SessionStatus,
    StatusInfo,
};

/// One tool call's state as the server reported it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteToolCall {
    /// The part's id (stable across the call's updates).
    pub part_id: String,
    /// The provider's id of the call.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// `pending`, `running`, `completed` or `error`.
    pub status: String,
    /// The call's arguments.
    pub input: Value,
    /// The tool's title for the call, once it has one.
    pub title: Option<String>,
    /// The output of a completed call.
    pub output: Option<String>,
    /// The error of a failed call.
    pub error: Option<String>,
}

/// How a remote turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteStop {
    /// The model finished.
    Done,
    /// A permission was rejected (without feedback), which ends a turn.
    Rejected,
    /// The turn was aborted (by this client or another).
    Cancelled,
    /// The turn failed (see [`RemoteTurn::error`]).
    Error,
}

/// The end of a remote turn.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteTurn {
    /// The session.
    pub session_id: String,
    /// How it ended.
    pub stop: RemoteStop,
    /// The answer's text, as streamed.
    pub text: String,
    /// The last assistant message's info (opencode's `AssistantMessage`:
    /// `id`, `finish`, `tokens`, `error`, …), when one was reported.
    pub message: Option<Value>,
    /// What failed, for [`RemoteStop::Error`].
    pub error: Option<String>,
    /// The tokens and cost of every step of the turn.
    pub usage: RemoteUsage,
}

/// One item of a remote turn's stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RemoteEvent {
    /// A step began: the server asked its model (a new assistant
    /// message); nothing has come back yet.
    StepStarted {
        /// The step's assistant message.
        message_id: String,
        /// The model asked, `provider/model` (empty when not reported).
        model: String,
    },
    /// Streamed answer text.
    TextDelta {
        /// The part the text belongs to.
        part_id: String,
        /// The new text.
        delta: String,
    },
    /// Streamed reasoning text.
    ReasoningDelta {
        /// The part the text belongs to.
        part_id: String,
        /// The new text.
        delta: String,
    },
    /// A tool call was added or changed state.
    Tool(RemoteToolCall),
    /// The server asks permission; the client's approver answers it.
    Asked(PermissionRequest),
    /// The client's approver answered an ask (and the answer was sent).
    Replied {
        /// The request.
        request_id: String,
        /// The answer.
        reply: Reply,
    },
    /// The provider failed and the server retries.
    Retry {
        /// Which attempt comes next.
        attempt: u64,
        /// Why.
        message: String,
    },
    /// The server reported an error for the session.
    Error {
        /// opencode's error name (`UnknownError`, `MessageAbortedError`, …).
        name: String,
        /// What it says.
        message: String,
    },
    /// The turn ended; the last item of the stream.
    Finished(RemoteTurn),
}

/// What one server event means to the client's turn.
#[derive(Debug, PartialEq)]
pub(crate) enum Seen {
    /// Nothing for this client (another session, a kind not followed, a
    /// malformed event).
    Nothing,
    /// An event to hand on.
    Event(RemoteEvent),
    /// An ask of this session for the approver.
    Ask(PermissionRequest),
    /// Someone answered request `id` (perhaps another client).
    Answered(String),
    /// The session went idle: the turn ended.
    Idle,
}

/// The event of a step that began with assistant message `info`.
fn step_started(info: &Value) -> RemoteEvent {
    let field = |key: &str| info.get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, model) = (field("providerID"), field("modelID"));
    RemoteEvent::StepStarted {
        message_id: field("id").to_string(),
        model: if provider.is_empty() || model.is_empty() {
            model.to_string()
        } else {
            format!("{provider}/{model}")
        },
    }
}

/// Whether `id` can go into a URL path as it is: what server ids are made
/// of (`ses_…`, `per_…`), nothing that could change the path.
pub(crate) fn is_safe_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Follows the events of one session's turn.
#[derive(Debug)]
pub(crate) struct TurnState {
    session_id: String,
    /// Parts known to be reasoning (their deltas say `field: "text"` too).
    reasoning: HashSet<String>,
    /// The streamed answer.
    pub(crate) text: String,
    /// The last assistant message's info.
    pub(crate) message: Option<Value>,
    /// Every assistant message's latest info, for the turn's usage.
    pub(crate) tally: UsageTally,
    /// The last error the server reported, by name and message.
    pub(crate) error: Option<(String, String)>,
}

impl TurnState {
    pub(crate) fn new(session_id: &str) -> Self {
        TurnState {
            session_id: session_id.to_string(),
            reasoning: HashSet::new(),
            text: String::new(),
            message: None,
            tally: UsageTally::default(),
            error: None,
        }
    }

    /// What the event `data` (one server-sent event's JSON) means.
    pub(crate) fn read(&mut self, data: &str) -> Seen {
        let event = match Envelope::decode(data) {
            Ok(Some(envelope)) => envelope.event,
            // A kind this client does not follow.
            Ok(None) => return Seen::Nothing,
            Err(error) => {
                tracing::debug!(%error, "skipping an event this client cannot read");
                return Seen::Nothing;
            }
        };
        if event.session_id() != Some(self.session_id.as_str()) {
            return Seen::Nothing;
        }
        match event {
            ServerEvent::MessagePartDelta(PartDelta { part_id, delta, .. }) => {
                if self.reasoning.contains(&part_id) {
                    Seen::Event(RemoteEvent::ReasoningDelta { part_id, delta })
                } else {
                    self.text.push_str(&delta);
                    Seen::Event(RemoteEvent::TextDelta { part_id, delta })
                }
            }
            ServerEvent::MessagePartUpdated(updated) => self.part(updated.part),
            ServerEvent::MessageUpdated(MessageUpdated { info, .. }) => {
                if info.get("role").and_then(Value::as_str) != Some("assistant") {
                    return Seen::Nothing;
                }
                let began = self.tally.record(&info).then(|| step_started(&info));
                self.message = Some(info);
                began.map_or(Seen::Nothing, Seen::Event)
            }
            ServerEvent::SessionError(SessionError { error, .. }) => {
                let (name, message) = match error {
                    Some(error) if !error.data.message.is_empty() => {
                        (error.name, error.data.message)
                    }
                    Some(error) => (error.name.clone(), error.name),
                    None => ("UnknownError".to_string(), "UnknownError".to_string()),
                };
                self.error = Some((name.clone(), message.clone()));
                Seen::Event(RemoteEvent::Error { name, message })
            }
            ServerEvent::SessionStatus(SessionStatus {
                status:
                    StatusInfo::Retry {
                        attempt, message, ..
                    },
                ..
            }) => Seen::Event(RemoteEvent::Retry { attempt, message }),
            ServerEvent::SessionIdle(_) => Seen::Idle,
            ServerEvent::PermissionAsked(request) if is_safe_id(&request.id) => {
                Seen::Ask(PermissionRequest {
                    id: request.id,
                    session_id: request.session_id,
                    permission: request.permission,
                    patterns: request.patterns,
                    always: request.always,
                    metadata: request.metadata,
                    tool: request.tool.map(|t| ToolCallRef {
                        message_id: t.message_id,
                        call_id: t.call_id,
                    }),
                })
            }
            ServerEvent::PermissionAsked(_) => {
                tracing::warn!("skipping a permission request this client cannot answer");
                Seen::Nothing
            }
            ServerEvent::PermissionReplied(replied) => Seen::Answered(replied.request_id),
            _ => Seen::Nothing,
        }
    }

    fn part(&mut self, part: Value) -> Seen {
        let Ok(part) = serde_json::from_value::<PartSummary>(part) else {
            return Seen::Nothing;
        };
        match part.kind.as_str() {
            "reasoning" => {
                self.reasoning.insert(part.id);
                Seen::Nothing
            }
            "tool" => {
                let state = part.state.unwrap_or_default();
                Seen::Event(RemoteEvent::Tool(RemoteToolCall {
                    part_id: part.id,
                    call_id: part.call_id.unwrap_or_default(),
                    tool: part.tool.unwrap_or_default(),
                    status: state.status,
                    input: state.input,
                    title: state.title,
                    output: state.output,
                    error: state.error,
                }))
            }
            _ => Seen::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn read(state: &mut TurnState, event: Value) -> Seen {
        state.read(&event.to_string())
    }

    #[test]
    fn only_the_sessions_own_well_formed_events_count() {
        let mut state = TurnState::new("ses_a");
        assert_eq!(state.read("{not json"), Seen::Nothing);
        assert_eq!(state.read("[1,2]"), Seen::Nothing);
        assert_eq!(
            read(
                &mut state,
                json!({"type": "session.idle", "properties": {"sessionID": "ses_b"}})
            ),
            Seen::Nothing
        );
        assert_eq!(
            read(
                &mut state,
                json!({"type": "permission.asked", "properties": {"id": "per_1", "sessionID": "ses_b", "permission": "bash"}})
            ),
            Seen::Nothing
        );
        // An id that would change the reply's path is not answered.
        assert_eq!(
            read(
                &mut state,
                json!({"type": "permission.asked", "properties": {"id": "../abort", "sessionID": "ses_a", "permission": "bash"}})
            ),
            Seen::Nothing
        );
        let Seen::Ask(request) = read(
            &mut state,
            json!({"type": "permission.asked", "properties": {"id": "per_1", "sessionID": "ses_a", "permission": "bash", "patterns": ["ls"], "metadata": {"command": "ls"}, "always": ["ls *"], "tool": {"messageID": "msg_1", "callID": "c1"}}}),
        ) else {
            panic!("an ask of the session")
        };
        assert_eq!(request.patterns, vec!["ls"]);
        assert_eq!(request.tool.unwrap().call_id, "c1");
        assert_eq!(
            read(
                &mut state,
                json!({"type": "session.idle", "properties": {"sessionID": "ses_a"}})
            ),
            Seen::Idle
        );
    }

    #[test]
    fn reasoning_deltas_are_told_from_text_and_tools_are_typed() {
        let mut state = TurnState::new("ses_a");
        read(
            &mut state,
            json!({"type": "message.part.updated", "properties": {"sessionID": "ses_a", "part": {"id": "prt_r", "type": "reasoning", "text": ""}}}),
        );
        assert!(matches!(
            read(
                &mut state,
                json!({"type": "message.part.delta", "properties": {"sessionID": "ses_a", "partID": "prt_r", "field": "text", "delta": "hmm"}})
            ),
            Seen::Event(RemoteEvent::ReasoningDelta { .. })
        ));
        read(
            &mut state,
            json!({"type": "message.part.delta", "properties": {"sessionID": "ses_a", "partID": "prt_t", "field": "text", "delta": "Hi"}}),
        );
        assert_eq!(state.text, "Hi");
        let Seen::Event(RemoteEvent::Tool(call)) = read(
            &mut state,
            json!({"type": "message.part.updated", "properties": {"sessionID": "ses_a", "part": {"id": "prt_1", "type": "tool", "callID": "c1", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}, "title": "ls", "output": "a\n"}}}}),
        ) else {
            panic!("a tool update")
        };
        assert_eq!(
            (call.status.as_str(), call.output.as_deref()),
            ("completed", Some("a\n"))
        );
        let Seen::Event(RemoteEvent::Error { name, message }) = read(
            &mut state,
            json!({"type": "session.error", "properties": {"sessionID": "ses_a", "error": {"name": "UnknownError", "data": {"message": "boom"}}}}),
        ) else {
            panic!("an error")
        };
        assert_eq!((name.as_str(), message.as_str()), ("UnknownError", "boom"));
    }
}
