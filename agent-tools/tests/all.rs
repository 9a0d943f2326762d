//! agent-tools' integration tests in one binary (`tests/suite/`); the older
//! test files beside this one move here as the crate is converted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
