//! agentgate-store's integration tests, in one binary (`cargo test -p
//! agentgate-store --test all`); each module of `suite/` is one topic.
//! PostgreSQL tests read the database URL from `AGENTGATE_TEST_POSTGRES`
//! (`.ci/run` starts a throwaway cluster) and print that they are skipped
//! when it is unset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
