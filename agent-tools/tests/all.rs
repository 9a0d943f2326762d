//! The one integration test binary of agent-tools (more suites move here).

mod suite;
