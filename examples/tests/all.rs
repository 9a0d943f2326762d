//! Integration tests of embedding the SDK, in one binary (`cargo test -p
//! agent-examples --test all`).

mod suite;
