//! The built-in `grep` and `glob` tools against the `rg` binary on the same
//! trees of files, with the same results.
//!
//! `cargo run --release -p agentgate-benches --bin search-vs-rg -- DIR [FILES] [RUNS] [TREE]`
//! generates FILES files (default 10,000: 100 folders × 100 files of ~40
//! lines, Rust, TypeScript and Markdown; 1 file in 100 holds the searched
//! token) under DIR once (kept between runs) and, when TREE is given, also
//! searches that existing tree (a source checkout: its `.gitignore` applies).
//! On each tree it times, as the median of RUNS (default 7) after one
//! warm-up, the tool and `rg` alternately (so both see the same load):
//!
//! - `grep`: `GrepTool` vs `rg --hidden --no-require-git -g '!.git' -n PATTERN`
//!   (`NEEDLE_[0-9]+` on the generated tree, `fn [a-z_]+\(` on TREE);
//! - `glob`: `GlobTool` for `**/*.rs` vs
//!   `rg --files --hidden --no-require-git -g '!.git' -g '*.rs'`.
//!
//! The `rg` flags make it walk the files the tools walk: hidden files
//! included, `.git` skipped, `.gitignore` applied with or without a git
//! repository. Before timing, one run of each tool with no cap on results
//! must return exactly the lines or files `rg` prints. The timed tool runs
//! use the default limits (sorting every hit newest first, keeping 100);
//! `rg` prints every hit to a pipe, and its times include its process start.
//! Prints one JSON object: the generated tree's times at the top level,
//! every tree's times and ratios (tool / `rg`) under `corpora`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use agentgate_core::Tool;
use agentgate_tools::{GlobTool, GrepTool, SearchLimits};
use serde_json::json;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `rg`'s flags that make it walk the files the tools walk.
const RG_LIKE_TOOLS: &[&str] = &["--hidden", "--no-require-git", "--glob", "!.git"];

/// `rg` with `args` and the tools' walk flags: its output lines, or `None`
/// when it fails or finds nothing.
fn rg(args: &[&str]) -> Option<Vec<u8>> {
    Command::new("rg")
        .args(RG_LIKE_TOOLS)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success() && !out.stdout.is_empty())
        .map(|out| out.stdout)
}

/// The sorted, distinct lines of `text`.
fn line_set<'a>(text: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut lines: Vec<String> = text
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

/// grep's output (`path:` headers, `  Line N: text` lines) as rg's
/// `path:N:text` lines.
fn grep_lines(output: &str) -> Vec<String> {
    let mut file = "";
    let mut lines = Vec::new();
    for line in output.lines() {
        if line.starts_with('/') && line.ends_with(':') {
            file = line.trim_end_matches(':');
        } else if let Some((number, text)) = line
            .strip_prefix("  Line ")
            .and_then(|rest| rest.split_once(": "))
        {
            lines.push(format!("{file}:{number}:{text}"));
        }
    }
    line_set(lines.iter().map(String::as_str))
}

/// One tree's medians.
struct Times {
    grep: Duration,
    rg_grep: Duration,
    glob: Duration,
    rg_glob: Duration,
}

/// Times `ours` and `theirs` alternately: the medians of `runs` runs each,
/// after one warm-up of each.
fn time_pair(
    runs: usize,
    mut ours: impl FnMut() -> bool,
    mut theirs: impl FnMut() -> bool,
) -> Result<(Duration, Duration), String> {
    if !ours() || !theirs() {
        return Err("warm-up run failed".into());
    }
    let (mut a, mut b) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let start = Instant::now();
        if !ours() {
            return Err("a timed run of the tool failed".into());
        }
        a.push(start.elapsed());
        let start = Instant::now();
        if !theirs() {
            return Err("a timed run of rg failed".into());
        }
        b.push(start.elapsed());
    }
    Ok((median(a), median(b)))
}

/// Checks that the tools, uncapped, return what `rg` prints, then times
/// them against `rg` on `dir`.
fn measure(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
    pattern: &str,
    runs: usize,
) -> Result<Times, String> {
    let ctx = agentgate_benches::allow_all_context(dir);
    let path = dir.to_string_lossy().to_string();
    let run = |tool: &dyn Tool, input: serde_json::Value| {
        runtime
            .block_on(tool.execute(input, &ctx))
            .ok()
            .map(|out| out.output)
            .filter(|out| !out.is_empty())
    };
    let grep_input = json!({"pattern": pattern, "path": path});
    let glob_input = json!({"pattern": "**/*.rs", "path": path});
    let rg_grep = ["-n", pattern, &path];
    let rg_glob = ["--files", "-g", "*.rs", &path];

    let mut uncapped = SearchLimits::default();
    uncapped.max_results = usize::MAX;
    uncapped.max_output_bytes = usize::MAX;
    uncapped.max_line_chars = usize::MAX;
    let ours = run(
        &GrepTool::default().with_limits(uncapped),
        grep_input.clone(),
    )
    .ok_or("the grep tool failed")?;
    let theirs = rg(&rg_grep).ok_or("rg found nothing (is `rg` installed?)")?;
    let (ours, theirs) = (
        grep_lines(&ours),
        line_set(String::from_utf8_lossy(&theirs).lines()),
    );
    if ours != theirs {
        return Err(format!(
            "grep and rg disagree on {}: {} lines vs {}",
            dir.display(),
            ours.len(),
            theirs.len()
        ));
    }
    let ours = run(
        &GlobTool::default().with_limits(uncapped),
        glob_input.clone(),
    )
    .ok_or("the glob tool failed")?;
    let theirs = rg(&rg_glob).ok_or("rg --files found nothing")?;
    let (ours, theirs) = (
        line_set(ours.lines().take_while(|line| line.starts_with('/'))),
        line_set(String::from_utf8_lossy(&theirs).lines()),
    );
    if ours != theirs {
        return Err(format!(
            "glob and rg --files disagree on {}: {} files vs {}",
            dir.display(),
            ours.len(),
            theirs.len()
        ));
    }

    let (grep, rg_grep) = time_pair(
        runs,
        || run(&GrepTool::default(), grep_input.clone()).is_some(),
        || rg(&rg_grep).is_some(),
    )?;
    let (glob, rg_glob) = time_pair(
        runs,
        || run(&GlobTool::default(), glob_input.clone()).is_some(),
        || rg(&rg_glob).is_some(),
    )?;
    Ok(Times {
        grep,
        rg_grep,
        glob,
        rg_glob,
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("usage: search-vs-rg DIR [FILES] [RUNS] [TREE]");
        return ExitCode::FAILURE;
    };
    let files: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(7);
    if let Err(e) = std::fs::create_dir_all(&dir)
        .and_then(|()| agentgate_benches::generate_tree(&dir, files).map(drop))
    {
        eprintln!(
            "search-vs-rg: cannot generate the tree in {}: {e}",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let mut corpora = Vec::new();
    for (name, tree, pattern) in [
        ("generated", Some(dir), "NEEDLE_[0-9]+"),
        ("tree", args.get(3).map(PathBuf::from), r"fn [a-z_]+\("),
    ] {
        let Some(tree) = tree else { continue };
        let Ok(tree) = tree.canonicalize() else {
            eprintln!("search-vs-rg: cannot resolve {}", tree.display());
            return ExitCode::FAILURE;
        };
        corpora.push((name, tree, pattern));
    }
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        eprintln!("search-vs-rg: cannot start a tokio runtime");
        return ExitCode::FAILURE;
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |ours: Duration, theirs: Duration| ours.as_secs_f64() / theirs.as_secs_f64();
    let mut report = json!({"files": files, "runs": runs, "corpora": []});
    for (name, tree, pattern) in corpora {
        let times = match measure(&runtime, &tree, pattern, runs) {
            Ok(times) => times,
            Err(e) => {
                eprintln!("search-vs-rg: {e}");
                return ExitCode::FAILURE;
            }
        };
        let entry = json!({
            "corpus": name,
            "path": tree,
            "grep_pattern": pattern,
            "grep_ms": ms(times.grep), "rg_grep_ms": ms(times.rg_grep),
            "grep_ratio": ratio(times.grep, times.rg_grep),
            "glob_ms": ms(times.glob), "rg_glob_ms": ms(times.rg_glob),
            "glob_ratio": ratio(times.glob, times.rg_glob),
        });
        if name == "generated" {
            for key in [
                "grep_ms",
                "rg_grep_ms",
                "glob_ms",
                "rg_glob_ms",
                "grep_ratio",
                "glob_ratio",
            ] {
                report[key] = entry[key].clone();
            }
        }
        if let Some(list) = report["corpora"].as_array_mut() {
            list.push(entry);
        }
    }
    println!("{report}");
    ExitCode::SUCCESS
}
