//! # agentgate-store
//!
//! Where a host outside one process keeps what its agents share:
//!
//! - [`AskRelay`]: permission asks that every process of a deployment can
//!   list and answer. An ask raised by a turn in one process is published;
//!   an answer given in any process reaches the process whose gate waits.
//!   [`LocalRelay`] is the in-process relay (one server, no database).

mod relay;

pub use relay::{AskRelay, LocalRelay, RelayError, RelayedReply};
