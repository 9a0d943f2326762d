//! The integration tests of agent-permission, in one test binary (the
//! modules are in `tests/suite/`).

mod suite;
