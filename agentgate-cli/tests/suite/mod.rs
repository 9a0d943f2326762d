//! The test modules, one per command group.

mod acp_cli;
mod acp_usage;
mod agents_cli;
mod attach_cli;
mod attach_usage;
mod chat_cli;
mod check_equals_run;
mod cli;
mod commands_cli;
mod config_cli;
mod interrupt_cli;
mod opencode_differential;
mod project_trust_cli;
mod run_attachments;
mod run_cli;
mod run_faults;
mod run_hooks_output;
mod run_limits;
mod run_progress;
mod serve_browser;
mod serve_cli;
mod serve_postgres;
mod sessions_cli;
mod store_cli;
mod terminal_cli;
