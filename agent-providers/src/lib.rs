//! # agent-providers
//!
//! Streaming model clients for the agent SDK, over `reqwest` (rustls) and
//! server-sent events.
//!
//! * [`sse`]: the incremental event-stream parser every client uses.

pub use agent_core as core;

pub mod error;
pub mod sse;

pub use error::ProviderError;
pub use sse::{SseError, SseEvent, SseParser, sse_events};
