//! The client side of `agent serve` (feature `remote`): run prompts in a
//! server's sessions and answer their asks locally, as opencode's
//! `attach` does.
//!
//! [`RemoteAgent`] connects (with the server's password when it has one),
//! opens or creates a [`RemoteSession`], and
//! [`RemoteSession::stream`] runs a prompt: it subscribes to `GET /event`
//! before sending the prompt, so nothing is missed, and yields the turn's
//! [`RemoteEvent`]s — text, tool calls, asks and the answers given, errors
//! — until [`RemoteEvent::Finished`]. The session's asks are decided by the
//! agent's [`Approver`](crate::permission::Approver), exactly as a local
//! agent's are, and the answers posted back; asks of other sessions are
//! never answered.
//!
//! The server is untrusted input: events are read with the providers'
//! bounded SSE parser ([`SseParser`](crate::providers::SseParser), at most
//! [`max_event_size`](RemoteAgentBuilder::max_event_size) bytes each) and
//! decoded with the server's own wire types; malformed events are
//! skipped, ids are checked before they go into a URL, and a silent or
//! vanished server ends the stream with an error ([`RemoteError::Idle`],
//! [`RemoteError::Disconnected`]) rather than a hang.

mod client;
mod commands;
mod error;
mod event;
mod history;
mod turn;
mod usage;

pub use client::{RemoteAgent, RemoteAgentBuilder, RemoteSession};
pub use error::RemoteError;
pub use event::{RemoteEvent, RemoteStop, RemoteToolCall, RemoteTurn};
pub use history::{RemoteMessage, RemotePart};
pub use turn::RemoteStream;
pub use usage::RemoteUsage;
