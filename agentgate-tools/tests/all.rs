//! agentgate-tools' integration tests in one binary (see `suite/mod.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
