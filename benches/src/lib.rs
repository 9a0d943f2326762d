//! Shared fixtures for the criterion benchmarks of the agent SDK.
