//! The ACP rows: `agent acp` against `opencode acp` over stdio JSON-RPC,
//! each spawned cold in a fresh project (its home kept, as for the runs):
//! spawn until the `initialize` answer, from it until the `session/new`
//! answer, and from `session/prompt` until the first
//! `agent_message_chunk` update and until the prompt's answer (the mock
//! answers with text in one step); then stdin is closed and the agent's
//! peak RSS and the CPU of its process tree are read when it exits.

use crate::measure::{children_cpu, kill_group, reap_orphans, wait_or_kill};
use crate::table::Section;
use agentgate_benches::{AcpClient, MockModel, Script, ServerKind, agent_message_chunk};
use serde_json::json;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The section's heading and columns.
pub const SECTION: Section<'static> = Section {
    title: "ACP: `agent acp` and `opencode acp`",
    intro: "Each round spawns each agent cold in a fresh project (its home kept across rounds) \
            and speaks ACP over its stdio: spawn until the `initialize` answer; from that answer \
            until the `session/new` answer (issue 43's target for the agent: ≤ 8 ms); from \
            `session/prompt` (\"Say hello.\", a one-step text answer from the mock) until the \
            first `session/update` with an `agent_message_chunk`, and until the prompt's \
            answer; then stdin is closed: peak RSS (`wait4`) and the CPU time of its process \
            tree from spawn to exit. Medians over the rounds; `x agent` = this agent / \
            `agent acp`.",
    columns: &[
        "spawn → initialize ms",
        "initialize → session/new ms",
        "prompt → first chunk ms",
        "prompt → answer ms",
        "peak RSS MiB",
        "CPU ms",
    ],
    ratios: &[0, 1, 2, 3, 4, 5],
};

/// Why codex has no ACP row.
pub const CODEX_NOT_RUN: &str =
    "codex 0.169.0 has no ACP mode (ACP needs a separate adapter package)";

/// One round of `kind`'s ACP agent (`binary`) in `dir`/project with
/// `home`: the section's measures, or why the round failed.
pub fn round(
    kind: ServerKind,
    binary: &Path,
    dir: &Path,
    home: &Path,
    mock: &MockModel,
    timeout: Duration,
) -> Result<Vec<f64>, String> {
    let project = dir.join("project");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project)
        .and_then(|()| std::fs::write(project.join("README.md"), "# acp bench project\n"))
        .and_then(|()| {
            let config = agentgate_benches::server_config(kind, &mock.base_url());
            std::fs::write(project.join("opencode.json"), config.to_string())
        })
        .map_err(|e| format!("cannot prepare: {e}"))?;
    let mut cmd =
        agentgate_benches::offline_command(binary, &project, home, Some(&mock.proxy_url()));
    if kind == ServerKind::Opencode {
        cmd.env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
    }
    let stderr = std::fs::File::create(dir.join("stderr.txt"))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    cmd.arg("acp").stderr(stderr).process_group(0);
    mock.begin(Script::default(), None);
    let before = children_cpu();
    let started = Instant::now();
    let outcome = AcpClient::spawn(cmd, timeout)
        .map_err(|e| format!("cannot start: {e}"))
        .and_then(|client| converse(client, &project, started, timeout));
    reap_orphans(Duration::from_secs(2));
    let record = mock.finish();
    let mut values = outcome?;
    if let Some(error) = record.errors.first() {
        return Err(format!("mock: {error}"));
    }
    if record.main_requests() != 1 {
        return Err(format!(
            "the mock saw {} prompts, not 1",
            record.main_requests()
        ));
    }
    values.push(children_cpu().saturating_sub(before).as_secs_f64() * 1e3);
    Ok(values)
}

/// `initialize`, `session/new` and one `session/prompt` with `client`;
/// then its stdin is closed and it is waited for (killed after
/// `timeout`). The measures but the CPU.
fn converse(
    mut client: AcpClient,
    project: &Path,
    started: Instant,
    timeout: Duration,
) -> Result<Vec<f64>, String> {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let asked = client.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let pid = client.pid();
    let result = asked.and_then(|_| {
        let initialized = Instant::now();
        let session = client.request("session/new", json!({"cwd": project, "mcpServers": []}))?;
        let created = Instant::now();
        let id = session["result"]["sessionId"]
            .as_str()
            .ok_or_else(|| format!("session/new answered no session: {session}"))?
            .to_string();
        let prompted = Instant::now();
        let mut first_chunk = None;
        let answer = client.request_watching(
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "Say hello."}]}),
            |message| {
                if first_chunk.is_none() && agent_message_chunk(message) {
                    first_chunk = Some(Instant::now());
                }
            },
        )?;
        let answered = Instant::now();
        let chunk = first_chunk.ok_or_else(|| format!("no agent_message_chunk before {answer}"))?;
        Ok(vec![
            ms(initialized - started),
            ms(created - initialized),
            ms(chunk - prompted),
            ms(answered - prompted),
        ])
    });
    client.close();
    let ended = wait_or_kill(pid, timeout.min(Duration::from_secs(5)));
    kill_group(pid);
    let mut values = result?;
    values.push(ended.max_rss_kib as f64 / 1024.0);
    Ok(values)
}
