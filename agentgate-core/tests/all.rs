//! agentgate-core's integration tests, in one binary (`cargo test -p
//! agentgate-core --test all`); each module of `suite/` is one topic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
