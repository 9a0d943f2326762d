//! The `agent` reference CLI.
//!
//! ```text
//! agent run [--agent NAME] [--model PROVIDER/MODEL] [--auto] [--continue | --session ID]
//!           [--format text|json] [--sandbox MODE] [--command NAME] [PROMPT | ARGS]
//! agent chat [--agent NAME] [--model PROVIDER/MODEL] [--continue | --session ID] [--sandbox MODE]
//! agent tui  [--agent NAME] [--model PROVIDER/MODEL] [--continue | --session ID] [--sandbox MODE]
//! agent tui  --attach URL [--session ID]
//! agent                       (at a terminal: agent tui)
//! agent sessions [list | show ID | export ID]
//! agent approvals [list | revoke PERMISSION PATTERN]
//! agent debug config
//! agent debug prompt AGENT [--model PROVIDER/MODEL]
//! agent permission check [--config FILE] [--agent NAME] [--json] PERMISSION PATTERN
//! agent permission rules [--config FILE] [--agent NAME]
//! agent permission lint  [--config FILE] [--agent NAME] [--known NAME]... [--json]
//! agent permission eval  < requests.jsonl > answers.jsonl
//! agent agents [--config FILE] [--json]
//! agent commands [--json]
//! agent debug agent NAME [--config FILE]
//! agent mcp list [--config FILE] [--json]
//! ```

//!
//! The modules: `args` is the command line as clap parses it, `dispatch`
//! turns it into calls of the commands (on one tokio runtime; `cli_error`
//! is what they fail with), one module per command or output format:
//!
//! - `permission_cli`: `agent permission check | rules | lint | eval`, and
//!   the config loading every command shares (`permission_cli::Project`:
//!   `opencode.json(c)` plus markdown agents under `.opencode/`);
//! - `agents_cli`: `agent agents` and `agent debug agent NAME`;
//! - `run_cli`: `agent run`, on `model_choice` (which model, the offline
//!   `agentgate_core::demo::DemoModel` when none is configured), `render`
//!   (printing a turn's events), `interrupt` (Ctrl-C and SIGTERM),
//!   `progress` (naming what a run waits for), `model_wait` (naming a
//!   model that has not started answering) and `workspace` (the data
//!   directory, its session and approval stores);
//! - `commands_cli`: `agent commands`, and the custom commands `agent run
//!   --command` and `/NAME` in `agent chat` run;
//! - `chat_cli`: `agent chat`, with `line_reader` (the line editor) and
//!   `spinner` (the progress line);
//! - `tui`: `agent tui`, the full-screen interface (ratatui on crossterm;
//!   its own module tree, see there);
//! - `sessions_cli`: `agent sessions` and `agent approvals`;
//! - `debug_cli`: `agent debug config` and `agent debug prompt`;
//! - `mcp_cli`: `agent mcp list`;
//! - `terminal_text`: the one renderer of text that did not come from the
//!   program (model, tool, server, project text; `Untrusted` wraps it),
//!   and `ask_frame`: how an ask is drawn so that no model text passes
//!   for one.
//! - `telemetry_cli`: the OpenTelemetry export of `agent run`, `chat`,
//!   `serve` and `acp` (feature `otel`);
//! - `trust_cli`: `agent trust`, and the question `agent run` and `agent
//!   chat` ask about an untrusted project at a terminal.

mod acp_cli;
mod agent_choice;
mod agents_cli;
mod args;
mod ask_frame;
mod attach_cli;
mod audit_cli;
mod chat_cli;
mod cli_error;
mod commands_cli;
mod debug_cli;
mod dispatch;
mod interrupt;
mod line_reader;
mod mcp_cli;
mod model_choice;
mod model_wait;
mod pending_asks_cli;
mod permission_cli;
mod progress;
mod render;
mod run_cli;
mod run_output;
mod serve_cli;
mod sessions_cli;
mod spinner;
mod telemetry_cli;
mod terminal_text;
mod trust_cli;
mod tui;
mod undo_cli;
mod workspace;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: under 100 concurrent clients glibc's
/// allocator (its frees and consolidations) was a quarter of `agent
/// serve`'s CPU (`benches/src/bin/serve-load.rs`). The library crates
/// leave the choice to the program that embeds them.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // `agent` alone at a terminal opens `agent tui`, as `opencode` does;
    // off a terminal it says what it always said (a subcommand is needed).
    let outcome = if alone_at_a_terminal() {
        dispatch::tui(args::TuiArgs::default())
    } else {
        dispatch::run(args::Cli::parse())
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            // An error may quote a server, a model or a project.
            eprintln!("agent: {}", terminal_text::Untrusted::new(error));
            ExitCode::from(2)
        }
    }
}

/// Whether `agent` was run with no argument, its input and output a
/// terminal.
fn alone_at_a_terminal() -> bool {
    use std::io::IsTerminal;
    std::env::args_os().len() == 1
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
}
