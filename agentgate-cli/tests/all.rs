//! The `agent` CLI's integration tests, in one binary (`cargo test -p
//! agentgate-cli --test all`); each module of `suite/` is one command group.

mod suite;
