//! The server's event bus and `GET /event`: every event as opencode's
//! `{id, type, properties}`, as server-sent events.
//!
//! A turn's engine events become opencode's `message.updated`,
//! `message.part.updated`, `message.part.delta` (streamed text),
//! `session.status` and `session.error` ([`TurnTranslator`]); the gate's
//! events become `permission.asked` and `permission.replied`. A client that
//! falls more than the bus capacity behind is disconnected (it reconnects
//! and re-reads the state) rather than buffered without bound.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::wire::{MessageContext, PermissionInfo, error_body, message_info, part_json};
use crate::permission::{PermissionEvent, Reply};
use crate::protocol::{
    Envelope, ErrorBody, MessageUpdated, PartDelta, PartUpdated, PermissionReplied, ReplyWord,
    ServerEvent, SessionChange, SessionError, SessionIdle, SessionInfo, StatusInfo,
};
use crate::{DeltaField, Event, Message, ModelCost, Role, SessionStatus, Usage};

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

static EVENT_COUNTER: AtomicU64 = AtomicU64::new(0);

/// An ascending `evt_…` id.
fn event_id() -> String {
    let n = EVENT_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("evt_{:012x}{:08x}", now_ms() & 0xffff_ffff_ffff, n)
}

/// The bus every `GET /event` client reads: events already serialised.
#[derive(Debug, Clone)]
pub(crate) struct Bus {
    sender: broadcast::Sender<Arc<str>>,
}

impl Bus {
    pub(crate) fn new(capacity: usize) -> Self {
        Bus {
            sender: broadcast::channel(capacity.max(1)).0,
        }
    }

    /// Publishes `event` as `{id, type, properties}`.
    pub(crate) fn publish(&self, event: ServerEvent) {
        if self.sender.receiver_count() == 0 {
            return;
        }
        let event = Envelope {
            id: event_id(),
            event,
        };
        let _ = self.sender.send(Arc::from(event.encode()));
    }

    /// `session.created`, `session.updated` or `session.deleted` (`change`
    /// makes the event of the three) for `info`.
    pub(crate) fn session_changed(
        &self,
        change: fn(SessionChange) -> ServerEvent,
        session_id: &str,
        info: &SessionInfo,
    ) {
        self.publish(change(SessionChange {
            session_id: session_id.to_string(),
            info: info.clone(),
        }));
    }

    fn status(&self, session_id: &str, status: StatusInfo) {
        self.publish(ServerEvent::SessionStatus(crate::protocol::SessionStatus {
            session_id: session_id.to_string(),
            status,
        }));
    }

    /// The gate's event as opencode's.
    pub(crate) fn publish_permission(&self, event: &PermissionEvent) {
        match event {
            PermissionEvent::Asked(request) => {
                self.publish(ServerEvent::PermissionAsked(PermissionInfo::of(request)));
            }
            PermissionEvent::Replied {
                session_id,
                request_id,
                reply,
            } => self.publish(ServerEvent::PermissionReplied(PermissionReplied {
                session_id: session_id.clone(),
                request_id: request_id.clone(),
                reply: reply_word(reply),
            })),
            _ => {}
        }
    }

    /// `session.status` busy.
    pub(crate) fn busy(&self, session_id: &str) {
        self.status(session_id, StatusInfo::Busy);
    }

    /// `session.status` idle, then `session.idle`.
    pub(crate) fn idle(&self, session_id: &str) {
        self.status(session_id, StatusInfo::Idle);
        self.publish(ServerEvent::SessionIdle(SessionIdle {
            session_id: session_id.to_string(),
        }));
    }

    /// A prompt refused before its turn started: `session.error` with
    /// `message`, then idle, so a client following the session ends.
    pub(crate) fn refused(&self, session_id: &str, message: &str) {
        self.publish(ServerEvent::SessionError(SessionError {
            session_id: Some(session_id.to_string()),
            error: Some(ErrorBody::new("UnknownError", message)),
        }));
        self.idle(session_id);
    }

    /// An SSE response: `server.connected` first, then every event. Ends
    /// when the client lags behind the bus capacity or the bus closes.
    pub(crate) fn sse(
        &self,
        stop: CancellationToken,
    ) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>> + use<>> {
        let receiver = self.sender.subscribe();
        let connected = connected();
        let first = futures::stream::once(async move {
            Ok::<_, Infallible>(SseEvent::default().data(connected))
        });
        let rest = futures::stream::unfold(receiver, |mut receiver| async move {
            match receiver.recv().await {
                Ok(event) => Some((Ok(SseEvent::default().data(&*event)), receiver)),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "an event client lagged behind; disconnecting it");
                    None
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        });
        let stream = futures::StreamExt::take_until(
            futures::StreamExt::chain(first, rest),
            stop.cancelled_owned(),
        );
        Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
    }
}

/// The first event of every stream.
fn connected() -> String {
    Envelope {
        id: event_id(),
        event: ServerEvent::ServerConnected,
    }
    .encode()
}

/// opencode's word for a reply (`grant` is a `once` with a sandbox grant,
/// `always_exact` an `always` that stores the asked patterns).
fn reply_word(reply: &Reply) -> ReplyWord {
    match reply {
        Reply::Always | Reply::AlwaysExact => ReplyWord::Always,
        Reply::Reject { .. } => ReplyWord::Reject,
        _ => ReplyWord::Once,
    }
}

/// A message of the turn as far as its events tell.
struct Known {
    message: Message,
    parent: Option<String>,
}

/// Turns one turn's engine events into opencode's events.
pub(crate) struct TurnTranslator {
    directory: PathBuf,
    provider_id: String,
    model_id: String,
    agent: String,
    /// The model's configured prices, for each answer's `cost`.
    price: Option<ModelCost>,
    last_user: HashMap<String, String>,
    messages: HashMap<String, Known>,
}

impl TurnTranslator {
    pub(crate) fn new(
        directory: PathBuf,
        provider_id: String,
        model_id: String,
        agent: String,
    ) -> Self {
        TurnTranslator {
            directory,
            provider_id,
            model_id,
            agent,
            price: None,
            last_user: HashMap::new(),
            messages: HashMap::new(),
        }
    }

    /// With the model's configured prices: each answer's `cost` is what
    /// its tokens cost (0 without prices, as opencode shows it).
    pub(crate) fn priced(mut self, price: Option<ModelCost>) -> Self {
        self.price = price;
        self
    }

    fn info(&self, known: &Known) -> Value {
        message_info(
            &known.message,
            &MessageContext {
                directory: &self.directory,
                provider_id: &self.provider_id,
                model_id: &self.model_id,
                parent_id: known.parent.as_deref(),
                price: self.price,
            },
        )
    }

    fn updated(&self, message_id: &str, bus: &Bus) {
        if let Some(known) = self.messages.get(message_id) {
            bus.publish(ServerEvent::MessageUpdated(MessageUpdated {
                session_id: known.message.session_id.clone(),
                info: self.info(known),
            }));
        }
    }

    /// Publishes what `event` means to opencode's clients.
    pub(crate) fn publish(&mut self, event: &Event, bus: &Bus) {
        match event {
            Event::MessageCreated {
                session_id,
                message_id,
                role,
            } => {
                let mut message = Message::new(session_id.as_str(), *role);
                message.id = message_id.clone();
                message.agent = self.agent.clone();
                message.time.start = now_ms();
                if *role == Role::User {
                    message.time.end = Some(message.time.start);
                    self.last_user
                        .insert(session_id.clone(), message_id.clone());
                }
                let parent = match role {
                    Role::Assistant => self.last_user.get(session_id).cloned(),
                    Role::User => None,
                };
                self.messages
                    .insert(message_id.clone(), Known { message, parent });
                self.updated(message_id, bus);
            }
            Event::StepFinished {
                message_id, usage, ..
            } => {
                if let Some(known) = self.messages.get_mut(message_id) {
                    add_usage(&mut known.message.usage, usage);
                }
            }
            Event::MessageCompleted {
                message_id,
                finish,
                error,
                ..
            } => {
                if let Some(known) = self.messages.get_mut(message_id) {
                    known.message.time.end = Some(now_ms());
                    known.message.finish = *finish;
                    known.message.error = error.clone();
                }
                self.updated(message_id, bus);
            }
            Event::PartCreated {
                session_id,
                message_id,
                part,
            }
            | Event::PartUpdated {
                session_id,
                message_id,
                part,
            } => {
                let now = now_ms();
                bus.publish(ServerEvent::MessagePartUpdated(PartUpdated {
                    session_id: session_id.clone(),
                    part: part_json(part, (session_id, message_id), now, &self.directory),
                    time: now,
                }));
            }
            Event::PartDelta {
                session_id,
                message_id,
                part_id,
                field: DeltaField::Text | DeltaField::Reasoning,
                delta,
            } if !delta.is_empty() => bus.publish(ServerEvent::MessagePartDelta(PartDelta {
                session_id: session_id.clone(),
                message_id: message_id.clone(),
                part_id: part_id.clone(),
                field: "text".into(),
                delta: delta.clone(),
            })),
            Event::SessionStatus {
                session_id,
                status:
                    SessionStatus::Retry {
                        attempt,
                        message,
                        next,
                    },
            } => bus.status(
                session_id,
                StatusInfo::Retry {
                    attempt: u64::from(*attempt),
                    message: message.clone(),
                    next: *next,
                },
            ),
            Event::Error {
                session_id, error, ..
            } => bus.publish(ServerEvent::SessionError(SessionError {
                session_id: Some(session_id.clone()),
                error: Some(error_body(error)),
            })),
            // Busy and idle are the server's own (around the whole turn);
            // permission events come from the gate, once for all sessions.
            _ => {}
        }
    }
}

fn add_usage(total: &mut Usage, step: &Usage) {
    total.input += step.input;
    total.output += step.output;
    total.reasoning += step.reasoning;
    total.cache_read += step.cache_read;
    total.cache_write += step.cache_write;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::Part;
    use serde_json::json;

    fn next(receiver: &mut broadcast::Receiver<Arc<str>>) -> Value {
        serde_json::from_str(&receiver.try_recv().unwrap()).unwrap()
    }

    #[test]
    fn a_turn_reads_as_opencode_events() {
        let bus = Bus::new(64);
        let mut receiver = bus.sender.subscribe();
        let mut turn = TurnTranslator::new("/w".into(), "mock".into(), "m1".into(), "build".into());
        turn.publish(
            &Event::MessageCreated {
                session_id: "ses_1".into(),
                message_id: "msg_1".into(),
                role: Role::User,
            },
            &bus,
        );
        turn.publish(
            &Event::MessageCreated {
                session_id: "ses_1".into(),
                message_id: "msg_2".into(),
                role: Role::Assistant,
            },
            &bus,
        );
        turn.publish(
            &Event::PartDelta {
                session_id: "ses_1".into(),
                message_id: "msg_2".into(),
                part_id: "prt_1".into(),
                field: DeltaField::Text,
                delta: "Hel".into(),
            },
            &bus,
        );
        turn.publish(
            &Event::PartUpdated {
                session_id: "ses_1".into(),
                message_id: "msg_2".into(),
                part: Part::Text {
                    id: "prt_1".into(),
                    text: "Hello".into(),
                    synthetic: false,
                    provider_metadata: None,
                },
            },
            &bus,
        );
        let user = next(&mut receiver);
        assert_eq!(user["type"], "message.updated");
        assert_eq!(user["properties"]["info"]["role"], "user");
        assert!(user["id"].as_str().unwrap().starts_with("evt_"));
        let assistant = next(&mut receiver);
        assert_eq!(assistant["properties"]["info"]["parentID"], "msg_1");
        assert_eq!(assistant["properties"]["info"]["providerID"], "mock");
        let delta = next(&mut receiver);
        assert_eq!(delta["type"], "message.part.delta");
        assert_eq!(delta["properties"]["delta"], "Hel");
        assert_eq!(delta["properties"]["field"], "text");
        let part = next(&mut receiver);
        assert_eq!(part["type"], "message.part.updated");
        assert_eq!(part["properties"]["part"]["text"], "Hello");
        assert_eq!(part["properties"]["part"]["messageID"], "msg_2");
    }

    #[test]
    fn replies_read_as_opencode_words() {
        let bus = Bus::new(4);
        let mut receiver = bus.sender.subscribe();
        bus.publish_permission(&PermissionEvent::Replied {
            session_id: "ses_1".into(),
            request_id: "per_1".into(),
            reply: Reply::correct("no"),
        });
        let replied = next(&mut receiver);
        assert_eq!(
            replied["properties"],
            json!({"sessionID": "ses_1", "requestID": "per_1", "reply": "reject"})
        );
    }

    /// An engine event of each kind the translator publishes.
    fn turn_events() -> [Event; 5] {
        [
            Event::MessageCreated {
                session_id: "ses_1".into(),
                message_id: "msg_1".into(),
                role: Role::Assistant,
            },
            Event::PartDelta {
                session_id: "ses_1".into(),
                message_id: "msg_1".into(),
                part_id: "prt_1".into(),
                field: DeltaField::Reasoning,
                delta: "hm".into(),
            },
            Event::PartCreated {
                session_id: "ses_1".into(),
                message_id: "msg_1".into(),
                part: Part::Text {
                    id: "prt_2".into(),
                    text: "Hi".into(),
                    synthetic: false,
                    provider_metadata: None,
                },
            },
            Event::SessionStatus {
                session_id: "ses_1".into(),
                status: SessionStatus::Retry {
                    attempt: 2,
                    message: "busy".into(),
                    next: 9,
                },
            },
            Event::Error {
                session_id: "ses_1".into(),
                message_id: None,
                error: crate::transcript::MessageError {
                    name: "aborted".into(),
                    message: "stop".into(),
                },
            },
        ]
    }

    /// Everything the server writes on the stream: the connection event,
    /// a turn's events, the gate's, the status events and the session
    /// changes of the routes.
    fn everything_written() -> Vec<String> {
        let bus = Bus::new(256);
        let mut receiver = bus.sender.subscribe();
        let mut written = vec![connected()];
        let mut turn = TurnTranslator::new("/w".into(), "mock".into(), "m1".into(), "build".into());
        for event in &turn_events() {
            turn.publish(event, &bus);
        }
        let request = crate::permission::PermissionRequest {
            id: "per_1".into(),
            session_id: "ses_1".into(),
            permission: "bash".into(),
            patterns: vec!["ls".into()],
            metadata: json!({"command": "ls"}),
            always: vec!["ls *".into()],
            tool: None,
        };
        bus.publish_permission(&PermissionEvent::Asked(request));
        bus.publish_permission(&PermissionEvent::Replied {
            session_id: "ses_1".into(),
            request_id: "per_1".into(),
            reply: Reply::AlwaysExact,
        });
        bus.busy("ses_1");
        bus.refused("ses_1", "no");
        let info = SessionInfo::of(&crate::Session::new("build", "/w"), None);
        bus.session_changed(ServerEvent::SessionCreated, &info.id, &info);
        bus.session_changed(ServerEvent::SessionUpdated, &info.id, &info);
        bus.session_changed(ServerEvent::SessionDeleted, &info.id, &info);
        while let Ok(event) = receiver.try_recv() {
            written.push(event.to_string());
        }
        written
    }

    #[test]
    fn every_event_written_reads_back_with_the_clients_types() {
        let written = everything_written();
        let mut kinds = std::collections::HashSet::new();
        for data in &written {
            let read = Envelope::decode(data)
                .unwrap()
                .unwrap_or_else(|| panic!("a kind outside the table: {data}"));
            assert_eq!(&read.encode(), data, "written again, the same bytes");
            let raw: Value = serde_json::from_str(data).unwrap();
            assert_eq!(raw["type"], read.event.kind().name());
            kinds.insert(read.event.kind());
        }
        let all: std::collections::HashSet<_> = crate::protocol::EventKind::all().collect();
        assert_eq!(kinds, all, "the server writes exactly the table's events");
    }

    #[test]
    fn the_typed_events_keep_the_bytes_of_the_json_they_replace() {
        let written = everything_written();
        let properties = |kind: &str| -> Vec<String> {
            written
                .iter()
                .filter_map(|data| {
                    let raw: Value = serde_json::from_str(data).unwrap();
                    (raw["type"] == kind).then(|| raw["properties"].to_string())
                })
                .collect()
        };
        // What the server wrote with `json!` before the protocol module
        // (serde_json keeps insertion order).
        assert_eq!(
            properties("session.status"),
            [
                json!({"sessionID": "ses_1", "status": {"type": "retry", "attempt": 2, "message": "busy", "next": 9}}),
                json!({"sessionID": "ses_1", "status": {"type": "busy"}}),
                json!({"sessionID": "ses_1", "status": {"type": "idle"}}),
            ]
            .map(|v| v.to_string())
        );
        assert_eq!(
            properties("message.part.delta"),
            [json!({"sessionID": "ses_1", "messageID": "msg_1", "partID": "prt_1", "field": "text", "delta": "hm"}).to_string()]
        );
        assert_eq!(
            properties("permission.replied"),
            [json!({"sessionID": "ses_1", "requestID": "per_1", "reply": "always"}).to_string()]
        );
        assert_eq!(
            properties("session.error"),
            [
                json!({"sessionID": "ses_1", "error": {"name": "MessageAbortedError", "data": {"message": "stop"}}}),
                json!({"sessionID": "ses_1", "error": {"name": "UnknownError", "data": {"message": "no"}}}),
            ]
            .map(|v| v.to_string())
        );
        assert_eq!(
            properties("session.idle"),
            [json!({"sessionID": "ses_1"}).to_string()]
        );
        assert_eq!(properties("server.connected"), ["{}".to_string()]);
        let first: Value = serde_json::from_str(&written[0]).unwrap();
        let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "type", "properties"]);
    }
}
