//! Test support for the workspace's test suites (a dev-dependency only,
//! never published).
//!
//! Each crate's `tests/all.rs` used to carry its own copy of this
//! machinery; here it is written once:
//!
//! - [`conformance`]: loads opencode's conformance vectors and runs a
//!   crate's cases through one tally, printing the one-line
//!   `conformance[<crate>]: …` summary CI collects.
//! - [`scratch`]: fresh scratch directories under the temporary folder.
//! - [`imports`] and [`function_length`]: the module import graph of a
//!   crate and the length of its functions, read from its sources, for the
//!   layering and function-length tests of every crate.
//! - `approver` (feature `approver`): an approver that records what it is
//!   asked and answers by a fixed reply or a function.
//! - `replay` (feature `replay`): loopback wiremock servers replaying
//!   server-sent-event streams, and an HTTP client for them.
//! - `otlp` (feature `otlp`): a loopback OTLP/HTTP receiver that decodes
//!   the trace exports it gets.
//!
//! The API speaks std types, `serde_json` values and agentgate-permission's
//! request types only: the crates above agentgate-permission depend on this one
//! from their integration tests, so it must not name their types.

#[cfg(feature = "approver")]
pub mod approver;
pub mod conformance;
pub mod function_length;
pub mod imports;
#[cfg(feature = "otlp")]
pub mod otlp;
#[cfg(feature = "replay")]
pub mod replay;
pub mod scratch;

#[cfg(feature = "approver")]
pub use approver::RecordingApprover;
pub use conformance::{Deviation, Verdict};
pub use scratch::{ScratchDir, scratch_dir, scratch_dir_in};
