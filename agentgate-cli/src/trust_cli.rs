//! `agent trust`: which projects' configuration is trusted (issue 39), and
//! the question `agent run` and `agent chat` ask at a terminal.
//!
//! The record is `trusted-projects.json` in the data directory (0600); the
//! library reads it through [`agentgate::TrustPolicy::recorded_for`], so
//! `agent acp`, `agent serve` and an embedder under the same application
//! name see the same trust.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use agentgate::project_trust::{RiskyPart, TrustStore};
use agentgate::{ConfigLoader, ProjectTrust, TrustPolicy, Workspace};

use crate::terminal_text::terminal_safe;

/// The record of trusted projects in the data directory.
pub fn store() -> TrustStore {
    TrustStore::in_data_dir(&crate::workspace::data_dir())
}

/// The lines of what the parts would do, made safe for a terminal.
fn part_lines(parts: &[RiskyPart]) -> String {
    parts
        .iter()
        .map(|part| format!("  - {}\n", terminal_safe(&part.describe())))
        .collect()
}

/// `agent trust [DIR]`: shows what the project's configuration can do and
/// records it as trusted.
pub fn trust(dir: &Path) -> Result<String, String> {
    let workspace = Workspace::with_trust(dir, ConfigLoader::new(dir), &TrustPolicy::untrusted())
        .map_err(|e| e.to_string())?;
    let root = workspace.project_root();
    let parts = workspace.trust_state().parts().to_vec();
    let record = store().record(&root, &parts).map_err(|e| e.to_string())?;
    let mut out = format!("trusted {}\n", record.directory);
    if parts.is_empty() {
        out.push_str(
            "its configuration sets nothing that trust changes; if it adds a command, a URL or \
             a looser rule, `agent run` and `agent chat` ask again\n",
        );
    } else {
        out.push_str("its configuration may now:\n");
        out.push_str(&part_lines(&parts));
        out.push_str(&format!(
            "(fingerprint {}; a change to these asks again; `agent trust --revoke {}` undoes it)\n",
            record.fingerprint, record.directory
        ));
    }
    Ok(out)
}

/// `agent trust --list`: the trusted projects.
pub fn list() -> Result<String, String> {
    let records = store().list().map_err(|e| e.to_string())?;
    if records.is_empty() {
        return Ok("no trusted projects\n".into());
    }
    let mut out = String::new();
    for record in records {
        out.push_str(&format!(
            "{}  (fingerprint {}, {} part{})\n",
            terminal_safe(&record.directory),
            record.fingerprint,
            record.parts.len(),
            if record.parts.len() == 1 { "" } else { "s" }
        ));
        out.push_str(&part_lines(&record.parts));
    }
    Ok(out)
}

/// `agent trust --revoke DIR`.
pub fn revoke(dir: &Path) -> Result<String, String> {
    let root = ConfigLoader::new(dir).resolved_worktree();
    let store = store();
    let found = store.revoke(&root).map_err(|e| e.to_string())?
        || store.revoke(dir).map_err(|e| e.to_string())?;
    Ok(if found {
        format!("no longer trusted: {}\n", root.display())
    } else {
        format!("{} was not trusted\n", root.display())
    })
}

/// The question has been asked in this process (`agent chat` builds its
/// agent again on /new and /model).
static ASKED: AtomicBool = AtomicBool::new(false);

/// The question for an untrusted project.
fn question(workspace: &Workspace) -> String {
    let root = workspace.project_root();
    let mut out = match workspace.trust_state() {
        ProjectTrust::Changed { .. } => format!(
            "agent: the configuration of {} changed since you trusted it; it would now also:\n",
            terminal_safe(&root.display().to_string())
        ),
        _ => format!(
            "agent: {} is not a trusted project; its configuration would:\n",
            terminal_safe(&root.display().to_string())
        ),
    };
    for line in workspace.trust_state().lines() {
        out.push_str(&format!("  - {}\n", terminal_safe(&line)));
    }
    out.push_str("Trust this project (recorded; `agent trust --revoke` undoes it)? [y/N] ");
    out
}

/// At a terminal, asks once whether to trust an untrusted project whose
/// configuration would do something trust changes; a yes records it and
/// loads the project again trusted. Elsewhere (or after a no) the
/// workspace stays as it is, its warnings saying what was set aside.
pub async fn confirm(workspace: Workspace) -> Result<Workspace, String> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if let ProjectTrust::Changed { what, .. } = workspace.trust_state()
        && !interactive
    {
        eprintln!(
            "agent: the configuration of {} changed since you trusted it, so it is not trusted now; new:\n{}`agent trust` trusts it again",
            terminal_safe(&workspace.project_root().display().to_string()),
            part_lines(what)
        );
    }
    if workspace.trust_state().is_trusted() || !interactive || ASKED.swap(true, Ordering::SeqCst) {
        return Ok(workspace);
    }
    let text = question(&workspace);
    let answer = tokio::task::spawn_blocking(move || {
        let mut stderr = std::io::stderr();
        let _ = stderr.write_all(terminal_safe(&text).as_bytes());
        let _ = stderr.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| format!("asking about the project failed: {e}"))?
    .map_err(|e| format!("reading the answer failed: {e}"))?;
    if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        return Ok(workspace);
    }
    let trusted = tokio::task::spawn_blocking(move || workspace.trust_and_reload(&store()))
        .await
        .map_err(|e| format!("trusting the project failed: {e}"))?
        .map_err(|e| e.to_string())?;
    Ok(trusted)
}

/// The directory `agent trust` is about: as given, else the current one.
pub fn directory(dir: Option<PathBuf>) -> Result<PathBuf, String> {
    match dir {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}")),
    }
}
