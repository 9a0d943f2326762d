//! Load on an opencode-compatible server (issue 43): `agent serve` (and
//! `opencode serve` for the throughput comparison) against the in-repo
//! mock model (`agentgate_benches::MockModel`), driven by this process
//! over HTTP.
//!
//! ```text
//! serve-load sessions   --agent PATH [--sessions 10000] [--every 1000]
//! serve-load throughput --agent PATH [--opencode PATH] [--clients 100]
//!                       [--seconds 10] [--opencode-seconds 10] [--rate 1000]
//! ```
//!
//! `sessions` creates and prompts sessions one after another (each prompt
//! gets a one-step answer), recording the server's RSS (`VmRSS`, and
//! `RssAnon`, what it allocated) and its open descriptors before the first,
//! after 100 and after every `--every`; then deletes them all and records
//! again. `throughput` runs `--clients` concurrent clients, each creating
//! a session and prompting it in a loop for `--seconds`, and reports
//! prompts per second and the p50/p99 latency of create + prompt; with
//! `--opencode`, the same against `opencode serve` in the same run.
//! Clients that send as soon as they are answered (a closed loop) measure
//! the most the server does per second, not its latency: with 100 of them,
//! each waits for the 99 others (Little's law: mean latency = 100 / rate),
//! so the run is repeated with the same clients paced to `--rate` create +
//! prompt per second in all (an open loop): each client's k-th pair is
//! due at a fixed time, and its latency counts from then, so a server that
//! falls behind shows it in the tail (no coordinated omission).
//! Both print a markdown report, with the issue's targets checked.

use agentgate_benches::{
    MockModel, ProcSample, Script, Server, ServerKind, create_and_prompt, delete_session,
    http_client, proc_sample, server_config,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Options {
    mode: String,
    agent: PathBuf,
    opencode: Option<PathBuf>,
    sessions: usize,
    every: usize,
    clients: usize,
    seconds: u64,
    opencode_seconds: u64,
    rate: f64,
    work: PathBuf,
}

fn usage() -> ! {
    eprintln!(
        "usage: serve-load sessions|throughput --agent PATH [--opencode PATH] [--sessions N] \
         [--every N] [--clients N] [--seconds S] [--opencode-seconds S] [--rate R] [--work DIR]"
    );
    std::process::exit(2)
}

fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| usage());
    if mode != "sessions" && mode != "throughput" {
        usage();
    }
    let mut options = Options {
        mode,
        agent: PathBuf::new(),
        opencode: None,
        sessions: 10_000,
        every: 1_000,
        clients: 100,
        seconds: 10,
        opencode_seconds: 10,
        rate: 1000.0,
        work: std::env::temp_dir().join(format!("serve-load-{}", std::process::id())),
    };
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        let number = || value.parse::<u64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--agent" => options.agent = PathBuf::from(&value),
            "--opencode" => options.opencode = Some(PathBuf::from(&value)),
            "--sessions" => options.sessions = number() as usize,
            "--every" => options.every = (number() as usize).max(1),
            "--clients" => options.clients = (number() as usize).max(1),
            "--seconds" => options.seconds = number().max(1),
            "--opencode-seconds" => options.opencode_seconds = number().max(1),
            "--rate" => options.rate = number().max(1) as f64,
            "--work" => options.work = PathBuf::from(&value),
            _ => usage(),
        }
    }
    if options.agent.as_os_str().is_empty() {
        usage();
    }
    options
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// Starts `kind`'s server in a fresh project and home under `work`,
/// configured for `mock`; waits for the line that gives its URL.
fn start(
    kind: ServerKind,
    binary: &Path,
    work: &Path,
    mock: &MockModel,
) -> std::io::Result<Server> {
    let dir = work.join(match kind {
        ServerKind::Agent => "agent",
        ServerKind::Opencode => "opencode",
    });
    let _ = std::fs::remove_dir_all(&dir);
    let project = dir.join("project");
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    write(&project.join("README.md"), "# load project\n")?;
    write(
        &project.join("opencode.json"),
        &server_config(kind, &mock.base_url()).to_string(),
    )?;
    agentgate_benches::spawn_server(
        kind,
        binary,
        &project,
        &home,
        &mock.proxy_url(),
        Duration::from_secs(60),
    )
}

/// User + system CPU time of process `pid` (all its threads), from
/// `/proc/PID/stat`; zero when it cannot be read.
fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // /proc counts in USER_HZ, 100 per second on Linux whatever the kernel's HZ.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// User + system CPU time of this process (the clients and the mock model).
fn own_cpu() -> Duration {
    process_cpu(std::process::id())
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

fn client() -> reqwest::Client {
    http_client().unwrap_or_else(|e| {
        eprintln!("serve-load: cannot build an HTTP client: {e}");
        std::process::exit(1)
    })
}

async fn sessions(options: &Options, mock: &MockModel) -> Result<String, String> {
    let server = start(ServerKind::Agent, &options.agent, &options.work, mock)
        .map_err(|e| format!("cannot start agent serve: {e}"))?;
    let pid = server.child.id();
    let client = client();
    // Settle: the first samples are of an idle server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = proc_sample(pid);
    // A server that has served once: its code pages are mapped and its
    // engine built. Deleting every session can only return it here.
    let first = create_and_prompt(&client, &server.url).await?;
    delete_session(&client, &server.url, &first).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let warm = proc_sample(pid);
    let mut rows = vec![
        ("idle, cold".to_string(), idle),
        ("idle, one session served and deleted".to_string(), warm),
    ];
    let mut ids = Vec::with_capacity(options.sessions);
    let started = Instant::now();
    for n in 1..=options.sessions {
        ids.push(create_and_prompt(&client, &server.url).await?);
        if n == 100 || n % options.every == 0 || n == options.sessions {
            rows.push((format!("after {n}"), proc_sample(pid)));
        }
    }
    let elapsed = started.elapsed();
    for id in &ids {
        delete_session(&client, &server.url, id).await?;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let deleted = proc_sample(pid);
    rows.push(("all deleted".to_string(), deleted));
    let record = mock.finish();

    let mut out = format!(
        "## {} sessions on one `agent serve`, created and prompted one after another\n\n\
         {:.1} s ({:.2} ms per create + prompt); the mock saw {} model requests ({} title/aux).\n\n\
         | point | VmRSS MiB | RssAnon MiB | open fds |\n|---|---:|---:|---:|\n",
        options.sessions,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / options.sessions.max(1) as f64,
        record.main_requests() + record.aux_requests(),
        record.aux_requests(),
    );
    for (label, s) in &rows {
        out.push_str(&format!(
            "| {label} | {} | {} | {} |\n",
            mib(s.rss_kib),
            mib(s.anon_kib),
            s.fds
        ));
    }
    out.push_str(&targets(options.sessions, &rows, idle, warm, deleted));
    Ok(out)
}

/// The issue's targets for the sessions run, checked on its samples.
fn targets(
    sessions: usize,
    rows: &[(String, ProcSample)],
    idle: ProcSample,
    warm: ProcSample,
    deleted: ProcSample,
) -> String {
    let mut out = String::new();
    let at = |label: &str| rows.iter().find(|(l, _)| l == label).map(|(_, s)| *s);
    let last = rows
        .iter()
        .rev()
        .find(|(l, _)| l.starts_with("after"))
        .map(|(_, s)| *s);
    out.push_str("\nTargets (issue 43):\n\n");
    if let (Some(hundred), Some(last)) = (at("after 100"), last) {
        let ratio = last.rss_kib as f64 / hundred.rss_kib.max(1) as f64;
        out.push_str(&format!(
            "- RSS after {} within 2× of RSS after 100: {ratio:.2}× — {}\n",
            sessions,
            verdict(ratio <= 2.0)
        ));
    }
    let max_fds = rows.iter().map(|(_, s)| s.fds).max().unwrap_or(0);
    out.push_str(&format!(
        "- open descriptors within 16 of idle ({}): at most {max_fds} — {}\n",
        idle.fds,
        verdict(max_fds <= idle.fds + 16)
    ));
    let back = deleted.rss_kib as f64 / warm.rss_kib.max(1) as f64;
    let back_anon = deleted.anon_kib as f64 / warm.anon_kib.max(1) as f64;
    let cold = deleted.rss_kib as f64 / idle.rss_kib.max(1) as f64;
    out.push_str(&format!(
        "- RSS after deleting all within 20% of idle (one session served and deleted): \
         VmRSS {back:.2}× ({}), RssAnon {back_anon:.2}× ({}); {cold:.2}× the cold idle VmRSS, \
         which has not yet paged in the code a prompt runs\n",
        verdict(back <= 1.2),
        verdict(back_anon <= 1.2),
    ));
    out
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// One throughput run's result.
struct Throughput {
    done: usize,
    failed: usize,
    first_error: Option<String>,
    seconds: f64,
    latencies: Vec<Duration>,
    peak: ProcSample,
    /// CPU time of the server over the run.
    server_cpu: Duration,
    /// CPU time of this process (the clients and the mock model) over the run.
    bench_cpu: Duration,
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.done as f64 / self.seconds
    }

    /// The server's CPU time per create + prompt, ms.
    fn server_ms_per_pair(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1000.0 / self.done.max(1) as f64
    }

    /// This process's CPU time per create + prompt, ms.
    fn bench_ms_per_pair(&self) -> f64 {
        self.bench_cpu.as_secs_f64() * 1000.0 / self.done.max(1) as f64
    }

    fn percentile(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() as f64 * p).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[i - 1]
    }
}

/// When one client of a throughput run sends: its slot among `count`
/// clients, paced to `pace` pairs per second in all (or at once when
/// answered), from `started` until `deadline`.
#[derive(Clone, Copy)]
struct Timing {
    slot: usize,
    count: usize,
    pace: Option<f64>,
    started: Instant,
    deadline: Instant,
}

/// One client's loop: its latencies, failures and first error.
async fn one_client(url: Arc<String>, timing: Timing) -> (Vec<Duration>, usize, Option<String>) {
    let client = client();
    let mut latencies = Vec::new();
    let mut failed = 0;
    let mut first_error = None;
    for k in 0u64.. {
        // Paced: this client's k-th pair is due at a fixed time (the
        // clients interleaved), and counts from then.
        let due = match timing.pace {
            Some(rate) => {
                let slot = timing.slot as f64 + (k as f64) * timing.count as f64;
                timing.started + Duration::from_secs_f64(slot / rate)
            }
            None => Instant::now(),
        };
        if due >= timing.deadline {
            break;
        }
        tokio::time::sleep_until(due.into()).await;
        match create_and_prompt(&client, &url).await {
            Ok(_) => latencies.push(due.elapsed()),
            Err(e) => {
                failed += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    (latencies, failed, first_error)
}

async fn throughput_of(
    kind: ServerKind,
    binary: &Path,
    options: &Options,
    seconds: u64,
    pace: Option<f64>,
    mock: &MockModel,
) -> Result<Throughput, String> {
    let server = start(kind, binary, &options.work, mock)
        .map_err(|e| format!("cannot start {}: {e}", kind.name()))?;
    let pid = server.child.id();
    let url = Arc::new(server.url.clone());
    // Warm up: one session before the clock starts.
    let warm = client();
    create_and_prompt(&warm, &url)
        .await
        .map_err(|e| format!("{}: {e}", kind.name()))?;
    let server_before = process_cpu(pid);
    let bench_before = own_cpu();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let count = options.clients;
    let clients: Vec<_> = (0..count)
        .map(|i| {
            let timing = Timing {
                slot: i,
                count,
                pace,
                started,
                deadline,
            };
            tokio::spawn(one_client(url.clone(), timing))
        })
        .collect();
    let sampler = tokio::spawn(async move {
        let mut peak = ProcSample::default();
        while Instant::now() < deadline {
            let s = proc_sample(pid);
            if s.rss_kib > peak.rss_kib {
                peak = s;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        peak
    });
    let mut result = Throughput {
        done: 0,
        failed: 0,
        first_error: None,
        seconds: 0.0,
        latencies: Vec::new(),
        peak: ProcSample::default(),
        server_cpu: Duration::ZERO,
        bench_cpu: Duration::ZERO,
    };
    for client in clients {
        let (latencies, failed, first_error) = client.await.map_err(|e| e.to_string())?;
        result.done += latencies.len();
        result.latencies.extend(latencies);
        result.failed += failed;
        if result.first_error.is_none() {
            result.first_error = first_error;
        }
    }
    result.seconds = started.elapsed().as_secs_f64();
    result.server_cpu = process_cpu(pid).saturating_sub(server_before);
    result.bench_cpu = own_cpu().saturating_sub(bench_before);
    result.peak = sampler.await.unwrap_or_default();
    result.latencies.sort();
    drop(server);
    Ok(result)
}

/// The table of a throughput run: the agent closed and paced, opencode
/// closed (or why not), then each run's first failure.
fn table(
    options: &Options,
    agent: &Throughput,
    paced: &Throughput,
    opencode: Option<&Result<Throughput, String>>,
) -> String {
    let mut out = format!(
        "## {} concurrent clients, each creating a session and prompting it (one-step answer)\n\n\
         | server | load | create + prompt | per second | p50 ms | p99 ms | failed | peak RSS MiB | server CPU ms per pair | bench CPU ms per pair |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        options.clients
    );
    let closed = "closed loop (each client sends when answered)".to_string();
    let paced_load = format!("paced: {:.0}/s offered in all", options.rate);
    let row = |kind: ServerKind, load: &str, t: &Throughput| {
        format!(
            "| {} | {load} | {} in {:.1} s | {:.0} | {:.1} | {:.1} | {} | {} | {:.2} | {:.2} |\n",
            kind.name(),
            t.done,
            t.seconds,
            t.per_second(),
            t.percentile(0.50).as_secs_f64() * 1000.0,
            t.percentile(0.99).as_secs_f64() * 1000.0,
            t.failed,
            mib(t.peak.rss_kib),
            t.server_ms_per_pair(),
            t.bench_ms_per_pair(),
        )
    };
    out.push_str(&row(ServerKind::Agent, &closed, agent));
    out.push_str(&row(ServerKind::Agent, &paced_load, paced));
    match opencode {
        Some(Ok(t)) => out.push_str(&row(ServerKind::Opencode, &closed, t)),
        Some(Err(e)) => out.push_str(&format!(
            "| opencode serve | failed: {e} | | | | | | | | |\n"
        )),
        None => out.push_str("| opencode serve | not run (no --opencode) | | | | | | | | |\n"),
    }
    for (kind, t) in [
        (ServerKind::Agent, Some(agent)),
        (ServerKind::Agent, Some(paced)),
        (ServerKind::Opencode, opencode.and_then(|o| o.as_ref().ok())),
    ] {
        if let Some(error) = t.and_then(|t| t.first_error.as_ref()) {
            out.push_str(&format!("\n{}'s first failure: {error}\n", kind.name()));
        }
    }
    out
}

async fn throughput(options: &Options, mock: &MockModel) -> Result<String, String> {
    let agent = throughput_of(
        ServerKind::Agent,
        &options.agent,
        options,
        options.seconds,
        None,
        mock,
    )
    .await?;
    let paced = throughput_of(
        ServerKind::Agent,
        &options.agent,
        options,
        options.seconds,
        Some(options.rate),
        mock,
    )
    .await?;
    let opencode = match &options.opencode {
        Some(path) => Some(
            throughput_of(
                ServerKind::Opencode,
                path,
                options,
                options.opencode_seconds,
                None,
                mock,
            )
            .await,
        ),
        None => None,
    };
    let mut out = table(options, &agent, &paced, opencode.as_ref());
    out.push_str("\nTargets (issue 43):\n\n");
    let p99 = paced.percentile(0.99).as_secs_f64() * 1000.0;
    let kept_up = paced.per_second() >= 0.98 * options.rate && paced.failed == 0;
    out.push_str(&format!(
        "- ≥ 1,000 create + prompt per second (closed loop, the most it does): {:.0} — {}\n\
         - p99 ≤ 50 ms with 1,000 per second offered by the {} clients: {p99:.1} ms at {:.0}/s \
         offered, {:.0}/s done — {}\n",
        agent.per_second(),
        verdict(agent.per_second() >= 1000.0),
        options.clients,
        options.rate,
        paced.per_second(),
        verdict(p99 <= 50.0 && kept_up && options.rate >= 1000.0),
    ));
    if let Some(Ok(opencode)) = &opencode {
        let ratio = agent.per_second() / opencode.per_second().max(f64::MIN_POSITIVE);
        out.push_str(&format!(
            "- ≥ 20× opencode's prompts per second: {ratio:.1}× — {}\n",
            verdict(ratio >= 20.0)
        ));
    }
    Ok(out)
}

#[tokio::main]
async fn main() {
    let options = options();
    let mock = match MockModel::start() {
        Ok(mock) => mock,
        Err(e) => {
            eprintln!("serve-load: cannot start the mock model: {e}");
            std::process::exit(1)
        }
    };
    mock.begin(Script::default(), None);
    let report = match options.mode.as_str() {
        "sessions" => sessions(&options, &mock).await,
        _ => throughput(&options, &mock).await,
    };
    let _ = std::fs::remove_dir_all(&options.work);
    match report {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("serve-load: {e}");
            std::process::exit(1)
        }
    }
}
