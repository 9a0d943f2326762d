//! The serve rows: `agent serve` against `opencode serve`, each started
//! cold in a fresh project (its home kept, as for the runs), timed from
//! spawn until it answers `GET /session`, then one create + prompt and
//! [`PAIRS`] more one after another (the mock answers each prompt with
//! text in one step); the server's peak RSS and the CPU of its process
//! tree over the whole round.

use crate::measure::{children_cpu, reap_orphans};
use crate::table::{Section, median};
use agentgate_benches::{
    MockModel, Script, ServerKind, create_and_prompt, http_client, proc_sample, server_config,
    spawn_server,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The create + prompt pairs after the first, whose median is reported.
pub const PAIRS: usize = 20;

/// The section's heading and columns.
pub const SECTION: Section<'static> = Section {
    title: "Serve: `agent serve` and `opencode serve`",
    intro: "Each round starts each server cold on a free loopback port in a fresh project \
            (its home kept across rounds, as for the runs above) and measures: spawn until it \
            answers `GET /session` (ready); the first `POST /session` + `POST \
            /session/ID/message` (\"Say hello.\", a one-step text answer from the mock); the \
            median of the 20 such pairs that follow, one after another; the server's peak RSS \
            (`VmHWM`) and the CPU time of its process tree over the round. Medians over the \
            rounds; `x agent` = this server / `agent serve`.",
    columns: &[
        "ready ms",
        "first create + prompt ms",
        "create + prompt ms",
        "peak RSS MiB",
        "CPU ms",
    ],
    ratios: &[0, 1, 2, 3, 4],
};

/// Why codex has no serve row.
pub const CODEX_NOT_RUN: &str = "codex 0.169.0 has no opencode-compatible HTTP server \
     (its `app-server` speaks its own experimental JSON-RPC)";

/// One round of `kind`'s server (`binary`) in `dir`/project with `home`:
/// the section's measures, or why the round failed.
pub fn round(
    kind: ServerKind,
    binary: &Path,
    dir: &Path,
    home: &Path,
    mock: &MockModel,
    timeout: Duration,
) -> Result<Vec<f64>, String> {
    let project =
        prepare(kind, dir, &mock.base_url()).map_err(|e| format!("cannot prepare: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("no tokio runtime: {e}"))?;
    mock.begin(Script::default(), None);
    let before = children_cpu();
    let server = spawn_server(kind, binary, &project, home, &mock.proxy_url(), timeout)
        .map_err(|e| format!("cannot start: {e}"));
    let measured = server.and_then(|server| {
        let pid = server.child.id();
        let mut values = runtime.block_on(timed_pairs(&server.url, server.started, timeout))?;
        values.push(proc_sample(pid).peak_kib as f64 / 1024.0);
        drop(server);
        Ok(values)
    });
    reap_orphans(Duration::from_secs(2));
    let record = mock.finish();
    let mut values = measured?;
    if let Some(error) = record.errors.first() {
        return Err(format!("mock: {error}"));
    }
    if record.main_requests() < PAIRS + 1 {
        return Err(format!(
            "the mock saw {} prompts of {}",
            record.main_requests(),
            PAIRS + 1
        ));
    }
    values.push(children_cpu().saturating_sub(before).as_secs_f64() * 1e3);
    Ok(values)
}

/// A fresh `dir`/project holding `kind`'s configuration for the mock.
fn prepare(kind: ServerKind, dir: &Path, base_url: &str) -> std::io::Result<PathBuf> {
    let project = dir.join("project");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("README.md"), "# serve bench project\n")?;
    std::fs::write(
        project.join("opencode.json"),
        server_config(kind, base_url).to_string(),
    )?;
    Ok(project)
}

/// Ready (ms since `started`), the first create + prompt and the median of
/// [`PAIRS`] more (ms).
async fn timed_pairs(url: &str, started: Instant, timeout: Duration) -> Result<Vec<f64>, String> {
    let client = http_client().map_err(|e| format!("no HTTP client: {e}"))?;
    let deadline = started + timeout;
    loop {
        let answer = client.get(format!("{url}/session")).send().await;
        if answer.is_ok_and(|a| a.status().is_success()) {
            break;
        }
        if Instant::now() >= deadline {
            return Err(format!("{url} did not answer GET /session in {timeout:?}"));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ready = ms(started.elapsed());
    let one = Instant::now();
    create_and_prompt(&client, url).await?;
    let first = ms(one.elapsed());
    let mut pairs = Vec::with_capacity(PAIRS);
    for _ in 0..PAIRS {
        let one = Instant::now();
        create_and_prompt(&client, url).await?;
        pairs.push(ms(one.elapsed()));
    }
    let typical = median(&mut pairs).unwrap_or(f64::NAN);
    Ok(vec![ready, first, typical])
}
