//! The peers benchmark (issue 27): the agent, opencode and codex run
//! offline against the same scripted mock model
//! (`agentgate_benches::MockModel`) on a cold start, one turn, a 20-step
//! tool loop and 80 steps with 52 KB tool outputs; wall time, CPU time of
//! the process tree and peak RSS per run, medians of interleaved rounds,
//! ratios against the agent on the same wire API, printed as markdown.
//!
//! ```text
//! peers --agent PATH [--opencode PATH] [--codex PATH] [--rounds 3]
//!       [--timeout 900] [--work DIR] [--only NAME-PART]
//! ```
//!
//! A peer whose path is missing is shown as not run; a run that fails (exit
//! status, timeout, fewer steps than scripted, a command whose output lacks
//! the file's marker) is shown as failed with the reason.
//! `benches/peers/run.sh` installs the peers and runs this.

mod measure;
mod peer;
mod report;

use agentgate_benches::{MockModel, Script};
use measure::{Measurement, become_subreaper, measure};
use peer::{Kind, Peer, Scenario, Wire};
use report::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Options {
    agent: Option<PathBuf>,
    opencode: Option<PathBuf>,
    codex: Option<PathBuf>,
    rounds: usize,
    timeout: Duration,
    work: PathBuf,
    only: Option<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: peers --agent PATH [--opencode PATH] [--codex PATH] [--rounds N] \
         [--timeout SECONDS] [--work DIR] [--only NAME-PART]"
    );
    std::process::exit(2)
}

fn options() -> Options {
    let mut options = Options {
        agent: None,
        opencode: None,
        codex: None,
        rounds: 3,
        timeout: Duration::from_secs(900),
        work: std::env::temp_dir().join("agentgate-peers"),
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--agent" => options.agent = Some(value().into()),
            "--opencode" => options.opencode = Some(value().into()),
            "--codex" => options.codex = Some(value().into()),
            "--rounds" => options.rounds = value().parse().unwrap_or_else(|_| usage()),
            "--timeout" => {
                options.timeout = Duration::from_secs(value().parse().unwrap_or_else(|_| usage()))
            }
            "--work" => options.work = value().into(),
            "--only" => options.only = Some(value()),
            _ => usage(),
        }
    }
    if options.rounds == 0 {
        usage();
    }
    options
}

fn binary(path: &Option<PathBuf>, flag: &str) -> Result<PathBuf, String> {
    match path {
        None => Err(format!("not installed ({flag} not given)")),
        Some(path) if !path.is_file() => Err(format!("not installed ({} missing)", path.display())),
        Some(path) => Ok(path.clone()),
    }
}

/// Why a run does not count, if it does not.
fn failure(scenario: &Scenario, m: &Measurement, stderr: &Path) -> Option<String> {
    let last_line = || {
        std::fs::read_to_string(stderr)
            .unwrap_or_default()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.chars().take(160).collect::<String>())
            .unwrap_or_default()
    };
    match m.exit {
        None => return Some("timed out".into()),
        Some(0) => {}
        Some(code) => return Some(format!("exit {code}: {}", last_line())),
    }
    if let Some(error) = m.record.errors.first() {
        return Some(format!("mock: {error}"));
    }
    let record = &m.record;
    match scenario.steps {
        None if record.main_requests() > 0 => Some(format!(
            "{} model requests at --version",
            record.main_requests()
        )),
        None => None,
        Some(steps) if record.steps_done() != steps || record.main_requests() < steps + 1 => {
            Some(format!(
                "did {} of {steps} steps in {} requests",
                record.steps_done(),
                record.main_requests()
            ))
        }
        Some(_) if record.bad_outputs() > 0 => Some(format!(
            "{} tool outputs lacked the file's marker (command failed?)",
            record.bad_outputs()
        )),
        Some(_) => None,
    }
}

fn slug(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn main() {
    let options = options();
    become_subreaper();
    let mock = match MockModel::start() {
        Ok(mock) => mock,
        Err(err) => {
            eprintln!("peers: cannot start the mock model on 127.0.0.1: {err}");
            std::process::exit(1)
        }
    };
    let base_url = mock.base_url();
    let proxy = mock.proxy_url();
    let agent = binary(&options.agent, "--agent");
    let peers = vec![
        Peer {
            name: "agent",
            kind: Kind::Agent,
            wire: Wire::Chat,
            binary: agent.clone(),
        },
        Peer {
            name: "opencode",
            kind: Kind::Opencode,
            wire: Wire::Chat,
            binary: binary(&options.opencode, "--opencode"),
        },
        Peer {
            name: "agent (responses)",
            kind: Kind::Agent,
            wire: Wire::Responses,
            binary: agent,
        },
        Peer {
            name: "codex",
            kind: Kind::Codex,
            wire: Wire::Responses,
            binary: binary(&options.codex, "--codex"),
        },
    ];
    let scenarios: Vec<Scenario> = peer::scenarios()
        .into_iter()
        .filter(|s| {
            options
                .only
                .as_ref()
                .is_none_or(|o| s.name.contains(o.as_str()))
        })
        .collect();
    if let Some(repository) = enclosing_work_tree(&options.work) {
        eprintln!(
            "peers: the work directory {} is inside the git work tree {}: every peer would take \
             that repository for the project (opencode snapshots it, codex and the agent find \
             their root there, the agent's sandbox indexes it), so the runs would not measure \
             the scripted project alone. Pass --work outside any repository.",
            options.work.display(),
            repository.display()
        );
        std::process::exit(2);
    }
    let _ = std::fs::remove_dir_all(&options.work);
    let homes = options.work.join("homes");
    let runs = options.work.join("runs");
    let mut cells: Vec<Vec<Cell>> = peers
        .iter()
        .map(|_| scenarios.iter().map(|_| Cell::default()).collect())
        .collect();

    // Versions, and one untimed turn per peer so first-run work (database
    // creation, migrations) is not in the measurements.
    let mut versions = Vec::new();
    for peer in &peers {
        let Ok(binary) = &peer.binary else {
            versions.push("not installed".into());
            continue;
        };
        let home = homes.join(slug(peer.name));
        if let Err(err) = peer::prepare_home(peer, &home, &base_url) {
            eprintln!(
                "peers: {}: cannot prepare {}: {err}",
                peer.name,
                home.display()
            );
        }
        let version = std::process::Command::new(binary)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|err| format!("({err})"));
        versions.push(version);
        let warm = &peer::scenarios()[1];
        let project = runs.join(slug(peer.name)).join("warm-up");
        let _ = peer::prepare_project(peer, warm, &project, &base_url);
        let mut cmd = peer::command(peer, binary, warm, &project, &home, &base_url, &proxy);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let script = Script::default();
        match measure(cmd, &mock, script, options.timeout) {
            Ok(m) => eprintln!(
                "peers: warm-up {}: exit {:?}, {} requests, {:.0} ms",
                peer.name,
                m.exit,
                m.record.requests.len(),
                m.wall.as_secs_f64() * 1e3
            ),
            Err(err) => eprintln!("peers: warm-up {}: {err}", peer.name),
        }
    }

    for round in 0..options.rounds {
        for (s, scenario) in scenarios.iter().enumerate() {
            for (p, peer) in peers.iter().enumerate() {
                let Ok(binary) = &peer.binary else {
                    continue;
                };
                let home = homes.join(slug(peer.name));
                let dir = runs
                    .join(slug(peer.name))
                    .join(format!("{}-r{round}", slug(scenario.name)));
                let project = dir.join("project");
                let cell = &mut cells[p][s];
                if let Err(err) = peer::prepare_project(peer, scenario, &project, &base_url) {
                    cell.failures
                        .push(format!("cannot prepare the project: {err}"));
                    continue;
                }
                let mut cmd =
                    peer::command(peer, binary, scenario, &project, &home, &base_url, &proxy);
                let stderr = dir.join("stderr.txt");
                match (
                    std::fs::File::create(dir.join("stdout.txt")),
                    std::fs::File::create(&stderr),
                ) {
                    (Ok(out), Ok(err)) => {
                        cmd.stdout(out).stderr(err);
                    }
                    _ => {
                        cmd.stdout(std::process::Stdio::null())
                            .stderr(std::process::Stdio::null());
                    }
                }
                let script = Script {
                    steps: scenario.steps.unwrap_or(0),
                    command: scenario.command.to_string(),
                    expect_in_output: peer::MARKER.to_string(),
                };
                match measure(cmd, &mock, script, options.timeout) {
                    Ok(m) => {
                        let why = failure(scenario, &m, &stderr);
                        eprintln!(
                            "peers: round {} {} {}: {:.0} ms wall, {:.0} ms CPU, {} KiB, {} requests{}",
                            round + 1,
                            scenario.name,
                            peer.name,
                            m.wall.as_secs_f64() * 1e3,
                            m.cpu.as_secs_f64() * 1e3,
                            m.max_rss_kib,
                            m.record.requests.len(),
                            why.as_ref()
                                .map(|w| format!(" — FAILED: {w}"))
                                .unwrap_or_default()
                        );
                        match why {
                            Some(why) => cell.failures.push(why),
                            None => cell.ok.push(m),
                        }
                    }
                    Err(err) => cell.failures.push(format!("cannot start: {err}")),
                }
            }
        }
    }
    print!(
        "{}",
        report::render(&peers, &scenarios, &cells, options.rounds, &versions)
    );
}

/// The git work tree `dir` (or its nearest existing ancestor) lies in, if
/// any: the folder holding a `.git` entry.
fn enclosing_work_tree(dir: &std::path::Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    absolute
        .ancestors()
        .find(|folder| folder.join(".git").exists())
        .map(std::path::Path::to_path_buf)
}
