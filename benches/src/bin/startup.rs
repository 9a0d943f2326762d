//! Start-up of the release `agent` (issue 43): how soon a one-turn
//! `agent run` sends its first model request, its CPU time and peak RSS,
//! and how soon `agent acp` answers `session/new` after `initialize`.
//!
//! ```text
//! cargo build --release -p agentgate-cli
//! cargo run --release -p agentgate-benches --bin startup -- [RUNS]
//! ```
//!
//! The agent is `$AGENT_BIN`, else `<target>/release/agent`. Each run has
//! a fresh temporary project; the temporary home is kept across the runs
//! (after one warm-up run of each command), as a user's is; the model is the scripted loopback
//! server of `mock_model` (one text answer). Medians of RUNS runs
//! (default 20) are printed as a markdown table.

// wait4 has no safe std equivalent.
#![allow(unsafe_code)]

use agentgate_benches::{AcpClient, MockModel, Script};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One `agent run`.
struct RunSample {
    first_request: Duration,
    cpu: Duration,
    max_rss_kib: u64,
}

/// One `agent acp`.
struct AcpSample {
    initialize: Duration,
    session_new: Duration,
    max_rss_kib: u64,
}

fn agent_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("AGENT_BIN") {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("release/agent")
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Waits for `pid` (a child of ours): its CPU time and peak RSS (KiB).
fn wait(pid: u32) -> (Duration, u64) {
    let mut status = 0;
    // SAFETY: wait4 writes the status and rusage of our own child into
    // the zeroed values it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers; `pid` is our child, waited for nowhere else.
    unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    (
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_maxrss.max(0) as u64,
    )
}

/// A fresh project (with the mock as its model) under `root`, and the
/// home there, kept across runs as a user's is (its database exists after
/// the warm-up run).
fn prepare(root: &Path, base_url: &str) -> std::io::Result<(PathBuf, PathBuf)> {
    let project = root.join("project");
    let home = root.join("home");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project)?;
    std::fs::create_dir_all(&home)?;
    std::fs::write(project.join("README.md"), "# startup bench\n")?;
    let config = json!({
        "model": "mock/mock",
        "provider": {"mock": {"options": {"baseURL": base_url, "apiKey": "x"}}},
    });
    std::fs::write(project.join("opencode.json"), config.to_string())?;
    Ok((project, home))
}

fn command(binary: &Path, project: &Path, home: &Path) -> Command {
    agentgate_benches::offline_command(binary, project, home, None)
}

fn run_once(binary: &Path, mock: &MockModel, root: &Path) -> Result<RunSample, String> {
    let (project, home) = prepare(root, &mock.base_url()).map_err(|e| e.to_string())?;
    let mut cmd = command(binary, &project, &home);
    cmd.args(["run", "--auto", "Say hello."])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    mock.begin(Script::default(), None);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        }
        text
    });
    let (cpu, max_rss_kib) = wait(child.id());
    let record = mock.finish();
    let stderr = errors.join().unwrap_or_default();
    let first = record
        .requests
        .iter()
        .find(|r| r.main)
        .ok_or_else(|| format!("no model request; stderr: {stderr}"))?;
    Ok(RunSample {
        first_request: Duration::from_secs_f64(first.at_s),
        cpu,
        max_rss_kib,
    })
}

fn acp_once(binary: &Path, mock: &MockModel, root: &Path) -> Result<AcpSample, String> {
    let (project, home) = prepare(root, &mock.base_url()).map_err(|e| e.to_string())?;
    let mut cmd = command(binary, &project, &home);
    cmd.arg("acp").stderr(Stdio::null());
    let started = Instant::now();
    let mut client = AcpClient::spawn(cmd, Duration::from_secs(60))
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    client.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    )?;
    let initialized = Instant::now();
    let session = client.request("session/new", json!({"cwd": project, "mcpServers": []}))?;
    let answered = Instant::now();
    if session["result"]["sessionId"].as_str().is_none() {
        return Err(format!("session/new: {session}"));
    }
    let (_, max_rss_kib) = wait(client.close());
    Ok(AcpSample {
        initialize: initialized - started,
        session_new: answered - initialized,
        max_rss_kib,
    })
}

fn median<T: Copy + Ord>(values: &mut [T]) -> T {
    values.sort_unstable();
    values[values.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// How many of the functions `agentgate-cli/link/agent.order` lists (the
/// code a run executes, which the release build lays out together) the
/// binary has, by `nm`: a list made for another compiler or other
/// dependency versions names functions the build does not have, and the
/// run's code is then spread over the whole binary again (peak RSS up by
/// several MiB). `None` when `nm` or the list is missing.
fn symbol_order_coverage(binary: &Path) -> Option<(usize, usize)> {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agentgate-cli/link/agent.order");
    let list = std::fs::read_to_string(list).ok()?;
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(binary)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let symbols: std::collections::HashSet<&str> = std::str::from_utf8(&out.stdout)
        .ok()?
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .collect();
    // A copy LTO numbered differently (`write_str.13164` for `.13163`) is
    // found too: the build widens those numbers (agentgate-cli/build.rs).
    let copies: std::collections::HashSet<&str> = symbols.iter().map(|s| unnumbered(s)).collect();
    let listed: Vec<&str> = list.lines().filter(|l| !l.is_empty()).collect();
    let found = listed
        .iter()
        .filter(|name| symbols.contains(*name) || copies.contains(unnumbered(name)))
        .count();
    Some((found, listed.len()))
}

/// A Rust symbol without the `.N` LTO appends to a copied function.
fn unnumbered(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, n))
            if (name.starts_with("_R") || name.starts_with("_ZN"))
                && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => name,
    }
}

fn main() -> Result<(), String> {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20)
        .max(1);
    let binary = agent_binary();
    let mock = MockModel::start().map_err(|e| e.to_string())?;
    let root = std::env::temp_dir().join(format!("agentgate-startup-{}", std::process::id()));
    let mut run = Vec::new();
    let mut acp = Vec::new();
    // One warm-up of each, so the page cache holds the binary.
    run_once(&binary, &mock, &root)?;
    acp_once(&binary, &mock, &root)?;
    for _ in 0..runs {
        run.push(run_once(&binary, &mock, &root)?);
        acp.push(acp_once(&binary, &mock, &root)?);
    }
    let _ = std::fs::remove_dir_all(&root);
    let mut first: Vec<Duration> = run.iter().map(|s| s.first_request).collect();
    let mut cpu: Vec<Duration> = run.iter().map(|s| s.cpu).collect();
    let mut rss: Vec<u64> = run.iter().map(|s| s.max_rss_kib).collect();
    let mut init: Vec<Duration> = acp.iter().map(|s| s.initialize).collect();
    let mut new: Vec<Duration> = acp.iter().map(|s| s.session_new).collect();
    let mut acp_rss: Vec<u64> = acp.iter().map(|s| s.max_rss_kib).collect();
    println!("`{}`, median of {runs} runs\n", binary.display());
    if let Some((found, listed)) = symbol_order_coverage(&binary) {
        println!(
            "Symbol order: {found} of the {listed} functions in agentgate-cli/link/agent.order \
             are in this binary (few: run scripts/symbol-order.sh).\n"
        );
    }
    println!("| measure | median | min | max |");
    println!("|---|---:|---:|---:|");
    let row = |name: &str, median: String, min: String, max: String| {
        println!("| {name} | {median} | {min} | {max} |");
    };
    let dur_row = |name: &str, values: &mut Vec<Duration>| {
        let m = median(values);
        row(name, ms(m), ms(values[0]), ms(values[values.len() - 1]));
    };
    dur_row("`agent run`: spawn → first model request", &mut first);
    dur_row("`agent run`: CPU (user + sys, whole run)", &mut cpu);
    let m = median(&mut rss);
    row(
        "`agent run`: peak RSS",
        mib(m),
        mib(rss[0]),
        mib(rss[rss.len() - 1]),
    );
    dur_row("`agent acp`: spawn → `initialize` answered", &mut init);
    dur_row(
        "`agent acp`: `initialize` → `session/new` answered",
        &mut new,
    );
    let m = median(&mut acp_rss);
    row(
        "`agent acp`: peak RSS",
        mib(m),
        mib(acp_rss[0]),
        mib(acp_rss[acp_rss.len() - 1]),
    );
    Ok(())
}
