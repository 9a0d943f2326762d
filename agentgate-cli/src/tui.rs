//! `agent tui`: the full-screen terminal interface (ratatui on
//! crossterm), built on the `agentgate` facade: a [`CodingAgent`]'s turn
//! stream and its gate's asks.
//!
//! The modules:
//! - `state`: everything shown, as data; `update`: the reducer
//!   (`update(state, msg) -> effects`) every key and event goes through;
//! - `transcript`: the transcript's entries, built from the turn's events
//!   and the stored messages, all foreign text made terminal-safe as it
//!   enters; `editor`: the multi-line prompt editor and its history;
//!   `ask_modal`: an ask as the modal shows it, and its keys;
//! - the views: `view` (the layout), `transcript_view` (with `markdown`
//!   and `highlight` for the model's text), `status_line`,
//!   `sessions_panel`;
//! - `local`: the agent and what each effect does with it; `driver`: the
//!   loop that ties input, turn, asks and redraws together; `terminal`:
//!   raw mode and the alternate screen, given back on every exit.
//!
//! The agent is assembled (and an untrusted project asked about) before
//! the screen is taken, in line mode, as `agent chat` does.

mod ask_modal;
mod backend;
mod driver;
mod editor;
mod highlight;
mod local;
mod markdown;
mod remote;
mod sessions_panel;
mod state;
mod status_line;
mod terminal;
mod transcript;
mod transcript_view;
mod update;
mod view;
mod work;
mod wrap;

#[cfg(test)]
mod snapshot_tests;

use std::sync::Arc;

use agentgate::CodingAgent;
use agentgate::permission::{Answerer, ChannelApprover};

use crate::run_cli::{RunOptions, build_agent};

/// Picks the colours of highlighted code: `flag` is `--theme` (`light`,
/// `dark` or `auto`), else `AGENT_TUI_THEME` decides, else dark.
pub fn set_theme(flag: Option<&str>) {
    highlight::choose_theme(flag);
}

/// Runs `agent tui` with `options` (agent, model, session or
/// `--continue`, sandbox); the exit status.
pub async fn tui(mut options: RunOptions) -> Result<u8, String> {
    let directory = match &options.directory {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    options.directory = Some(directory.clone());
    let permissions = crate::workspace::gate(&directory)?;
    let (approver, asks) = ChannelApprover::new(8);
    let approver = Arc::new(approver.answered_by(Answerer::Terminal));
    let built = build_agent(&options, approver, Some(permissions)).await?;
    let local = local::Local {
        commands: built.commands.clone(),
        agents: built.agents.clone(),
        agent: built.agent,
        directory,
        model: None,
    };
    let commands = crate::commands_cli::help_lines(&local.commands)
        .iter()
        .map(|line| crate::terminal_text::terminal_safe(line))
        .collect();
    let agents = local.agents.clone();
    let backend = backend::Backend::Local(Box::new(local));
    let driver = run_screen(backend, asks, commands, agents).await?;
    if let backend::Backend::Local(local) = &driver.backend {
        finish(&local.agent).await;
    }
    Ok(0)
}

/// Shows `backend`'s session full screen until the person leaves.
async fn run_screen(
    backend: backend::Backend,
    asks: tokio::sync::mpsc::Receiver<agentgate::permission::ApprovalRequest>,
    commands: Vec<String>,
    agents: Vec<String>,
) -> Result<driver::Driver, String> {
    let mut state = state::State::new(backend.status());
    state.transcript = backend.transcript().await;
    state.agents = agents;
    state.commands = commands;
    let mut driver = driver::Driver::new(backend, state, asks);
    let mut screen = terminal::FullScreen::enter()?;
    let outcome = driver.run(&mut screen.terminal, &mut screen.inputs).await;
    drop(screen);
    outcome?;
    Ok(driver)
}

/// Lets a session title still being written land before `agent` exits,
/// and names the session for `agent sessions show`.
async fn finish(agent: &CodingAgent) {
    let wait = agent.engine().wait_for_titles();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), wait).await;
    eprintln!(
        "agent tui: session {} (agent sessions show {} prints it)",
        crate::terminal_text::Untrusted::new(&agent.session().id),
        crate::terminal_text::Untrusted::new(&agent.session().id)
    );
}

/// Runs `agent tui --attach URL [--session ID]`: the same screen on a
/// session of an `agent serve` (or `opencode serve`) server (a new one
/// unless `session`); its asks are answered in the modal. The password
/// comes from OPENCODE_SERVER_PASSWORD or AGENT_SERVER_PASSWORD.
pub async fn attach(url: String, session: Option<String>) -> Result<u8, String> {
    let (approver, asks) = ChannelApprover::new(8);
    let approver = Arc::new(approver.answered_by(Answerer::Terminal));
    let agent = agentgate::remote::RemoteAgent::builder(&url)
        .credentials_from_env()
        .approver(approver)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let session = match &session {
        Some(id) => agent.session(id).await,
        None => agent.new_session().await,
    }
    .map_err(|e| e.to_string())?;
    let remote = remote::Remote {
        agent,
        session,
        model: String::new(),
    };
    let commands = remote.commands().await;
    let driver = run_screen(backend::Backend::Remote(remote), asks, commands, Vec::new()).await?;
    if let backend::Backend::Remote(remote) = &driver.backend {
        eprintln!(
            "agent tui: session {} at {}",
            crate::terminal_text::Untrusted::new(remote.session.id()),
            crate::terminal_text::Untrusted::new(remote.agent.url())
        );
    }
    Ok(0)
}
