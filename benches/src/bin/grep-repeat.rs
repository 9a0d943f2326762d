//! The grep tool searching one tree again and again, as an agent's turn
//! does: the CPU time of each search (user + system, every thread of this
//! process) with the file filters grep keeps between searches
//! (`SearchLimits::grep_index_bytes`) and without them, in alternating
//! processes' worth of rounds.
//!
//! `cargo run --release -p agentgate-benches --bin grep-repeat -- DIR [FILES] [ROUNDS]`
//!
//! generates a tree of FILES files (default 10,000: the tree of
//! `search-vs-rg` and of the peers harness's grep steps) for each of ROUNDS
//! rounds (default 5) under DIR (kept between runs). A round runs the 10
//! patterns of the peers harness's grep steps (`NEEDL[E]_[0-9]*{i}07`,
//! i = 0..9) on its tree with the filters off, then the same 10 with them
//! on. The filters are process-wide: each round has its own tree so that
//! its first search with them meets files it never learned, as the first
//! grep of an `agent run` does. Prints one JSON object: per mode, the
//! median over rounds of the first search's CPU and of the mean of the
//! nine after it; fails when a search found other lines in the two modes.

// getrusage has no safe std equivalent.
#![allow(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use agentgate_core::Tool;
use agentgate_tools::{GrepTool, SearchLimits};
use serde_json::json;

/// CPU time of this process so far (all threads).
fn cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given; zeroed is a valid
    // value of that plain C struct.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The 10 searches of one round over `dir`: CPU ms of each, and the
/// outputs.
fn round(
    runtime: &tokio::runtime::Runtime,
    tool: &GrepTool,
    dir: &Path,
) -> Result<(Vec<f64>, Vec<String>), String> {
    let ctx = agentgate_benches::allow_all_context(dir);
    let mut times = Vec::new();
    let mut outputs = Vec::new();
    for i in 0..10 {
        let input = json!({"pattern": format!("NEEDL[E]_[0-9]*{i}07"), "path": dir});
        let before = cpu();
        let output = runtime
            .block_on(tool.execute(input, &ctx))
            .map_err(|e| format!("grep failed: {e}"))?;
        times.push((cpu() - before).as_secs_f64() * 1000.0);
        // The paths differ between copies of the tree: keep the lines.
        outputs.push(
            output
                .output
                .lines()
                .filter(|line| line.starts_with("  Line "))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    Ok((times, outputs))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("usage: grep-repeat DIR [FILES] [ROUNDS]");
        return ExitCode::FAILURE;
    };
    let files: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let runtime = match tokio::runtime::Builder::new_multi_thread().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("grep-repeat: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let off = GrepTool::default().with_limits({
        let mut limits = SearchLimits::default();
        limits.grep_index_bytes = 0;
        limits
    });
    let on = GrepTool::default();
    let (mut off_first, mut off_rest, mut on_first, mut on_rest) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut same = true;
    for r in 0..rounds {
        let tree = dir.join(format!("round-{r}"));
        if let Err(e) = std::fs::create_dir_all(&tree)
            .and_then(|()| agentgate_benches::generate_tree(&tree, files).map(drop))
        {
            eprintln!("grep-repeat: cannot generate {}: {e}", tree.display());
            return ExitCode::FAILURE;
        }
        // Files written a moment ago are not filtered (file_filters.rs,
        // SETTLED): as in the peers harness, which writes the tree just
        // before the agent starts.
        std::thread::sleep(Duration::from_millis(200));
        let results = round(&runtime, &off, &tree).and_then(|(off_times, off_out)| {
            round(&runtime, &on, &tree)
                .map(|(on_times, on_out)| (off_times, off_out, on_times, on_out))
        });
        let (off_times, off_out, on_times, on_out) = match results {
            Ok(results) => results,
            Err(e) => {
                eprintln!("grep-repeat: {e}");
                return ExitCode::FAILURE;
            }
        };
        same &= off_out == on_out;
        let rest = |times: &[f64]| times[1..].iter().sum::<f64>() / (times.len() - 1) as f64;
        eprintln!(
            "round {r}: off first {:.1} ms, then {:.1} ms; on first {:.1} ms, then {:.1} ms",
            off_times[0],
            rest(&off_times),
            on_times[0],
            rest(&on_times)
        );
        off_first.push(off_times[0]);
        off_rest.push(rest(&off_times));
        on_first.push(on_times[0]);
        on_rest.push(rest(&on_times));
    }
    let report = json!({
        "files": files,
        "rounds": rounds,
        "same_lines": same,
        "off": {"first_ms": median(off_first), "then_ms": median(off_rest)},
        "on": {"first_ms": median(on_first), "then_ms": median(on_rest)},
    });
    println!("{report}");
    if same {
        ExitCode::SUCCESS
    } else {
        eprintln!("grep-repeat: the filters changed what grep found");
        ExitCode::FAILURE
    }
}
