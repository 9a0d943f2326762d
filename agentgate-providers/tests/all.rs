//! agentgate-providers integration tests: one binary, modules in `suite/`.

mod suite;
