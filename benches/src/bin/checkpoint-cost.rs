//! The per-step cost of checkpoints (issue 44) against opencode's snapshot
//! approach, in the same run.
//!
//! `cargo run --release -p agentgate-benches --bin checkpoint-cost -- DIR [RUNS] [SIZES]`
//! generates, under DIR (kept between runs), projects of SIZES files
//! (default `1000,10000,50000`: folders of 100 files of ~1 KiB) and on each
//! times, as the median of RUNS (default 5), one step that changes 1 file
//! and one that changes 100:
//!
//! - `paths`: `FsCheckpoints` with the changed paths named (a file tool):
//!   `before_change` + the writes + `after_change` + `take`, minus the writes;
//! - `project`: the same with the whole project as scope (a command);
//! - `git`: `git --git-dir=<private> --work-tree=<project> add -A && git
//!   write-tree` after the writes, opencode's snapshot of a step.
//!
//! Prints a Markdown table and writes it to
//! `benches/results/checkpoint-cost-<UTC>.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use agentgate_core::{ChangeScope, Checkpoints};
use agentgate_tools::FsCheckpoints;

/// Generates `files` files under `dir` once.
fn generate(dir: &Path, files: usize) -> std::io::Result<()> {
    let marker = dir.join(".generated");
    if marker.exists() {
        return Ok(());
    }
    for f in 0..files {
        let folder = dir.join(format!("d{:04}", f / 100));
        std::fs::create_dir_all(&folder)?;
        let line = format!("line of file {f} with some words in it\n");
        std::fs::write(folder.join(format!("f{f:06}.txt")), line.repeat(24))?;
    }
    std::fs::write(marker, "")?;
    // Files written in the last 2 s are read again at every walk (git's
    // racy rule): a real project's files are older.
    std::thread::sleep(Duration::from_millis(2100));
    Ok(())
}

/// The files a step changes: `count` spread over the project.
fn targets(files: usize, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|i| i * (files / count))
        .map(|f| PathBuf::from(format!("d{:04}/f{f:06}.txt", f / 100)))
        .collect()
}

/// Changes each target (a new line each round).
fn write(root: &Path, targets: &[PathBuf], round: usize) -> Duration {
    let start = Instant::now();
    for target in targets {
        let path = root.join(target);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&format!("round {round}\n"));
        let _ = std::fs::write(path, text);
    }
    start.elapsed()
}

/// One checkpointed step: its cost without the writes.
async fn step(
    cp: &FsCheckpoints,
    root: &Path,
    targets: &[PathBuf],
    project: bool,
    round: usize,
) -> Duration {
    let scope = if project {
        ChangeScope::Project
    } else {
        ChangeScope::Paths(targets)
    };
    let start = Instant::now();
    let _ = cp.before_change(root, "bench", scope).await;
    let writes = write(root, targets, round);
    let _ = cp.after_change(root, "bench", scope).await;
    let _ = cp.take(root, "bench").await;
    start.elapsed().saturating_sub(writes)
}

/// opencode's snapshot of the project into a private git directory.
fn git_snapshot(git_dir: &Path, root: &Path) -> Duration {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", root.display()))
            .args(args)
            .output()
    };
    let start = Instant::now();
    let _ = git(&["add", "-A"]);
    let _ = git(&["write-tree"]);
    start.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(time: Duration) -> String {
    format!("{:.2}", time.as_secs_f64() * 1000.0)
}

/// The rows of one project size.
async fn measure(dir: &Path, files: usize, runs: usize) -> std::io::Result<Vec<String>> {
    let root = dir.join(format!("project-{files}"));
    generate(&root, files)?;
    let git_dir = dir.join(format!("git-{files}"));
    if !git_dir.exists() {
        Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(&git_dir)
            .status()?;
        git_snapshot(&git_dir, &root);
    }
    let cp = FsCheckpoints::new(dir.join(format!("store-{files}")));
    let built = Instant::now();
    let _ = cp.before_change(&root, "bench", ChangeScope::Project).await;
    let _ = cp.after_change(&root, "bench", ChangeScope::Project).await;
    let first = built.elapsed();
    let mut rows = Vec::new();
    for count in [1, 100] {
        let targets = targets(files, count);
        let (mut paths, mut project, mut git) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..runs {
            paths.push(step(&cp, &root, &targets, false, round * 3).await);
            project.push(step(&cp, &root, &targets, true, round * 3 + 1).await);
            write(&root, &targets, round * 3 + 2);
            git.push(git_snapshot(&git_dir, &root));
        }
        let (paths, project, git) = (median(paths), median(project), median(git));
        let ratio = |time: Duration| git.as_secs_f64() / time.as_secs_f64().max(1e-9);
        rows.push(format!(
            "| {files} | {count} | {} | {} | {} | {:.0}× | {:.1}× | {} |",
            ms(paths),
            ms(project),
            ms(git),
            ratio(paths),
            ratio(project),
            ms(first)
        ));
    }
    Ok(rows)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("usage: checkpoint-cost DIR [RUNS] [SIZES]");
        return ExitCode::FAILURE;
    };
    let runs = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5);
    let sizes: Vec<usize> = (args
        .get(2)
        .map_or("1000,10000,50000", String::as_str)
        .split(','))
    .filter_map(|s| s.parse().ok())
    .collect();
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        return ExitCode::FAILURE;
    };
    let mut table = vec![
        "| files | changed | paths (ms) | project (ms) | git add+write-tree (ms) | git/paths | git/project | first walk (ms) |".to_string(),
        "|---|---|---|---|---|---|---|---|".to_string(),
    ];
    for files in sizes {
        match runtime.block_on(measure(&dir, files, runs)) {
            Ok(rows) => table.extend(rows),
            Err(error) => {
                eprintln!("checkpoint-cost: {files} files: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let text = format!(
        "# checkpoint-cost\n\nMedian of {runs} steps each.\n\n{}\n",
        table.join("\n")
    );
    println!("{text}");
    let stamp = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H%MZ"])
        .output();
    let stamp = stamp
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let out =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("results/checkpoint-cost-{stamp}.md"));
    if let Err(error) = std::fs::write(&out, text) {
        eprintln!("checkpoint-cost: {}: {error}", out.display());
    }
    ExitCode::SUCCESS
}
