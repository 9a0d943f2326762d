//! The one integration test binary of agent-tools (more suites move here).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
