//! The test modules, one per command group.

mod agents_cli;
mod chat_cli;
mod cli;
mod run_cli;
