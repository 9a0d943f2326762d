//! The integration tests of agentgate-permission, in one test binary (the
//! modules are in `tests/suite/`).

mod suite;
