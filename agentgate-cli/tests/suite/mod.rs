//! The test modules, one per command group.

mod agents_cli;
mod chat_cli;
mod cli;
mod config_cli;
mod run_cli;
