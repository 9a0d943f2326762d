//! Integration tests of embedding the SDK, in one binary (`cargo test -p
//! agentgate-examples --test all`).

mod suite;
