//! The peers benchmark (issues 27 and 43): the agent, opencode and codex
//! run offline against the same scripted mock model
//! (`agentgate_benches::MockModel`) on a cold start, one turn, a 20-step
//! tool loop, 80 steps with 52 KB tool outputs and 10 grep steps over a
//! generated 10,000-file tree; wall time, CPU time of the process tree and
//! peak RSS per run, medians of interleaved rounds, ratios against the
//! agent on the same wire API, printed as markdown. Each round then
//! measures `agent serve` against `opencode serve` (`serve.rs`) and
//! `agent acp` against `opencode acp` (`acp.rs`); codex has neither mode
//! and is shown as not run.
//!
//! ```text
//! peers --agent PATH [--opencode PATH] [--codex PATH] [--rounds 3]
//!       [--timeout 900] [--work DIR] [--only NAME-PART]
//! ```
//!
//! `--only NAME-PART` keeps the workloads whose name contains it, and the
//! serve and ACP sections when `serve` or `acp` contains it.
//! A peer whose path is missing is shown as not run; a run that fails (exit
//! status, timeout, fewer steps than scripted, a command whose output lacks
//! the file's marker) is shown as failed with the reason.
//! `benches/peers/run.sh` installs the peers and runs this.

mod acp;
mod measure;
mod peer;
mod report;
mod serve;
mod table;

use agentgate_benches::{MockModel, Script, ServerKind};
use measure::{Measurement, become_subreaper, measure};
use peer::{Kind, Peer, Scenario, Wire};
use report::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;
use table::MetricCell;

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

/// What every run shares: the mock and where homes and runs go.
struct Bench {
    mock: MockModel,
    base_url: String,
    proxy: String,
    homes: PathBuf,
    runs: PathBuf,
    timeout: Duration,
}

impl Bench {
    fn home(&self, name: &str) -> PathBuf {
        self.homes.join(slug(name))
    }
}

/// The four columns: the agent and opencode over Chat Completions, the
/// agent and codex over Responses.
fn peers(options: &Options) -> Vec<Peer> {
    let agent = binary(&options.agent, "--agent");
    let peer = |name, kind, wire, binary| Peer {
        name,
        kind,
        wire,
        binary,
    };
    vec![
        peer("agent", Kind::Agent, Wire::Chat, agent.clone()),
        peer(
            "opencode",
            Kind::Opencode,
            Wire::Chat,
            binary(&options.opencode, "--opencode"),
        ),
        peer("agent (responses)", Kind::Agent, Wire::Responses, agent),
        peer(
            "codex",
            Kind::Codex,
            Wire::Responses,
            binary(&options.codex, "--codex"),
        ),
    ]
}

/// Whether `--only` selects `name` (a workload or a section).
fn selected(options: &Options, name: &str) -> bool {
    options
        .only
        .as_ref()
        .is_none_or(|o| name.contains(o.as_str()))
}

/// Exits when `work` lies in a git work tree; else empties it.
fn prepare_work(work: &Path) {
    if let Some(repository) = enclosing_work_tree(work) {
        eprintln!(
            "peers: the work directory {} is inside the git work tree {}: every peer would take \
             that repository for the project (opencode snapshots it, codex and the agent find \
             their root there, the agent's sandbox indexes it), so the runs would not measure \
             the scripted project alone. Pass --work outside any repository.",
            work.display(),
            repository.display()
        );
        std::process::exit(2);
    }
    let _ = std::fs::remove_dir_all(work);
}

/// Each peer's version, after one untimed turn per peer so first-run work
/// (database creation, migrations) is not in the measurements.
fn warm_up(bench: &Bench, peers: &[Peer]) -> Vec<String> {
    let mut versions = Vec::new();
    for peer in peers {
        let Ok(binary) = &peer.binary else {
            versions.push("not installed".into());
            continue;
        };
        let home = bench.home(peer.name);
        if let Err(err) = peer::prepare_home(peer, &home, &bench.base_url) {
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
        let project = bench.runs.join(slug(peer.name)).join("warm-up");
        let _ = peer::prepare_project(peer, warm, &project, &bench.base_url);
        let mut cmd = peer::command(
            peer,
            binary,
            warm,
            &project,
            &home,
            &bench.base_url,
            &bench.proxy,
        );
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        match measure(cmd, &bench.mock, Script::default(), bench.timeout) {
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
    versions
}

/// One run of `peer` (`binary`) on `scenario`, recorded in `cell`.
fn run(
    bench: &Bench,
    peer: &Peer,
    binary: &Path,
    scenario: &Scenario,
    round: usize,
    cell: &mut Cell,
) {
    let home = bench.home(peer.name);
    let dir = bench
        .runs
        .join(slug(peer.name))
        .join(format!("{}-r{round}", slug(scenario.name)));
    let project = dir.join("project");
    if let Err(err) = peer::prepare_project(peer, scenario, &project, &bench.base_url) {
        cell.failures
            .push(format!("cannot prepare the project: {err}"));
        return;
    }
    let mut cmd = peer::command(
        peer,
        binary,
        scenario,
        &project,
        &home,
        &bench.base_url,
        &bench.proxy,
    );
    let stderr = dir.join("stderr.txt");
    match (
        std::fs::File::create(dir.join("stdout.txt")),
        std::fs::File::create(&stderr),
    ) {
        (Ok(out), Ok(err)) => cmd.stdout(out).stderr(err),
        _ => cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    };
    match measure(cmd, &bench.mock, peer::script(scenario), bench.timeout) {
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
    // The generated tree is 10,000 files: not kept once measured.
    if scenario.grep.is_some() {
        let _ = std::fs::remove_dir_all(&project);
    }
}

/// A server or ACP agent of the serve and ACP sections: which program,
/// its binary (or why it has none) and its home.
struct Mode {
    label: &'static str,
    kind: Option<ServerKind>,
    binary: Result<PathBuf, String>,
}

/// The agent, opencode and codex as servers and ACP agents.
fn modes(options: &Options) -> Vec<Mode> {
    vec![
        Mode {
            label: "agent",
            kind: Some(ServerKind::Agent),
            binary: binary(&options.agent, "--agent"),
        },
        Mode {
            label: "opencode",
            kind: Some(ServerKind::Opencode),
            binary: binary(&options.opencode, "--opencode"),
        },
        Mode {
            label: "codex",
            kind: None,
            binary: binary(&options.codex, "--codex"),
        },
    ]
}

/// The serve and ACP sections' cells: one per mode, not run when the mode
/// has no binary or no such mode (`why`).
fn mode_cells(modes: &[Mode], why: &str) -> Vec<MetricCell> {
    modes
        .iter()
        .map(|mode| MetricCell {
            not_run: match (&mode.binary, mode.kind) {
                (Err(missing), _) => Some(missing.clone()),
                (Ok(_), None) => Some(why.to_string()),
                (Ok(_), Some(_)) => None,
            },
            ..MetricCell::default()
        })
        .collect()
}

/// One round of `section` (`serve` or `acp`) for each mode that has it.
fn mode_round(
    bench: &Bench,
    modes: &[Mode],
    section: &str,
    round: usize,
    cells: &mut [MetricCell],
) {
    for (mode, cell) in modes.iter().zip(cells.iter_mut()) {
        let (Ok(binary), Some(kind)) = (&mode.binary, mode.kind) else {
            continue;
        };
        let dir = bench
            .runs
            .join(mode.label)
            .join(format!("{section}-r{round}"));
        let home = bench.home(mode.label);
        let outcome = if section == "serve" {
            serve::round(kind, binary, &dir, &home, &bench.mock, bench.timeout)
        } else {
            acp::round(kind, binary, &dir, &home, &bench.mock, bench.timeout)
        };
        eprintln!(
            "peers: round {} {section} {}: {outcome:?}",
            round + 1,
            mode.label
        );
        cell.push(outcome);
    }
}

/// The rows of a section: each mode's name and cell.
fn mode_rows<'a>(
    modes: &[Mode],
    section: &str,
    cells: &'a [MetricCell],
) -> Vec<(String, &'a MetricCell)> {
    modes
        .iter()
        .zip(cells)
        .map(|(mode, cell)| match mode.kind {
            Some(_) => (format!("{} {section}", mode.label), cell),
            None => (mode.label.to_string(), cell),
        })
        .collect()
}

fn main() {
    let options = options();
    become_subreaper();
    let mock = MockModel::start().unwrap_or_else(|err| {
        eprintln!("peers: cannot start the mock model on 127.0.0.1: {err}");
        std::process::exit(1)
    });
    let peers = peers(&options);
    let scenarios: Vec<Scenario> = peer::scenarios()
        .into_iter()
        .filter(|s| selected(&options, s.name))
        .collect();
    prepare_work(&options.work);
    let bench = Bench {
        base_url: mock.base_url(),
        proxy: mock.proxy_url(),
        mock,
        homes: options.work.join("homes"),
        runs: options.work.join("runs"),
        timeout: options.timeout,
    };
    let mut cells: Vec<Vec<Cell>> = peers
        .iter()
        .map(|_| scenarios.iter().map(|_| Cell::default()).collect())
        .collect();
    let modes = modes(&options);
    let mut serve_cells = mode_cells(&modes, serve::CODEX_NOT_RUN);
    let mut acp_cells = mode_cells(&modes, acp::CODEX_NOT_RUN);
    let versions = warm_up(&bench, &peers);
    for round in 0..options.rounds {
        for (s, scenario) in scenarios.iter().enumerate() {
            for (p, peer) in peers.iter().enumerate() {
                if let Ok(binary) = &peer.binary {
                    run(&bench, peer, binary, scenario, round, &mut cells[p][s]);
                }
            }
        }
        if selected(&options, "serve") {
            mode_round(&bench, &modes, "serve", round, &mut serve_cells);
        }
        if selected(&options, "acp") {
            mode_round(&bench, &modes, "acp", round, &mut acp_cells);
        }
    }
    print!(
        "{}",
        report::render(&peers, &scenarios, &cells, options.rounds, &versions)
    );
    for (section, name, cells) in [
        (&serve::SECTION, "serve", &serve_cells),
        (&acp::SECTION, "acp", &acp_cells),
    ] {
        if selected(&options, name) {
            let rows = mode_rows(&modes, name, cells);
            let rows: Vec<(&str, &MetricCell)> =
                rows.iter().map(|(n, c)| (n.as_str(), *c)).collect();
            print!("{}", table::render(section, options.rounds, &rows));
        }
    }
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
