//! The wire format of `agent serve` (opencode's server API, 1.18) as types
//! both sides share: the server (`crate::server`) writes them and the
//! client (`crate::remote`) reads them, so what one writes the other
//! decodes by construction (the tests of both modules check it).
//!
//! * [`bodies`]: the request and response bodies (sessions, prompts,
//!   permission requests and replies, errors).
//! * [`events`]: the event stream's `{id, type, properties}` events, their
//!   names as [`EventKind`] and their typed properties as [`ServerEvent`].
//!
//! Messages and parts stay JSON values (the server builds them field for
//! field as opencode's `Message` and `Part` schemas name them); the client
//! reads what it needs of a part through [`PartSummary`].
//!
//! Decoding is lenient where opencode's own server may leave a field out
//! (the client also talks to `opencode serve`) and strict where the client
//! acts on a value: an event whose properties do not decode is skipped as
//! a whole.

// Each side uses part of the wire: the server writes every type, the
// client reads some of them; a build with one of the features only
// leaves the other side's helpers unused.
#![cfg_attr(
    not(all(feature = "server", feature = "remote")),
    allow(dead_code, unused_imports)
)]

mod bodies;
mod command_bodies;
mod events;

pub(crate) use command_bodies::{CommandBody, CommandInfo, ShellBody, SummarizeBody};

pub(crate) use bodies::{
    AlwaysChoiceInfo, CreateSession, ErrorBody, ErrorData, ForkSession, Health, MessageWithParts,
    PartInput, PermissionInfo, PromptBody, ReplyBody, ReplyWord, RespondBody, RevertBody,
    RevertInfo, SessionInfo, SessionModel, SessionTime, SnapshotFileDiff, ToolRef, UnrevertBody,
    UpdateSession,
};
#[cfg(test)]
pub(crate) use events::EventKind;
pub(crate) use events::{
    Envelope, MessageUpdated, PartDelta, PartSummary, PartUpdated, PermissionReplied, ServerEvent,
    SessionChange, SessionError, SessionIdle, SessionStatus, StatusInfo,
};
