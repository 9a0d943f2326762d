//! The built-in `grep` and `glob` tools against the `rg` binary on the same
//! generated tree of files.
//!
//! `cargo run --release -p agentgate-benches --bin search-vs-rg -- DIR [FILES] [RUNS]`
//! generates FILES files (default 10,000: 100 folders × 100 files of ~40
//! lines, Rust, TypeScript and Markdown; 1 file in 100 holds the searched
//! token) under DIR once (kept between runs), then times, as the median of
//! RUNS (default 7) after one warm-up:
//!
//! - `grep`: `GrepTool` for `NEEDLE_[0-9]+` vs `rg -n 'NEEDLE_[0-9]+' DIR`;
//! - `glob`: `GlobTool` for `**/*.rs` vs `rg --files -g '*.rs' DIR`.
//!
//! Both sides walk the whole tree and read every file (grep) or name (glob);
//! the tools also stat every hit to sort newest first and keep 100 of them,
//! `rg` prints every hit to a pipe. `rg` times include its process start.
//! Prints one JSON object.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{PermissionGate, Ruleset};
use agentgate_tools::{GlobTool, GrepTool};
use serde_json::json;

const WORDS: &[&str] = &[
    "let", "value", "config", "session", "request", "stream", "parser", "result", "error", "match",
    "return", "async", "await", "struct", "impl", "token", "buffer", "index",
];

fn generate(dir: &Path, files: usize) -> std::io::Result<usize> {
    let marker = dir.join(format!(".generated-{files}"));
    if marker.exists() {
        return Ok(files / 100);
    }
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut needles = 0;
    for f in 0..files {
        let folder = dir.join(format!("d{:03}", f / 100));
        std::fs::create_dir_all(&folder)?;
        let ext = ["rs", "ts", "md"][f % 3];
        let mut text = String::new();
        for line in 0..40 {
            for _ in 0..8 {
                text.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            if f % 100 == 7 && line == 20 {
                text.push_str(&format!("NEEDLE_{f}"));
                needles += 1;
            }
            text.push('\n');
        }
        std::fs::write(folder.join(format!("f{f:05}.{ext}")), text)?;
    }
    std::fs::write(marker, "")?;
    Ok(needles)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time(runs: usize, mut once: impl FnMut() -> bool) -> Result<Duration, String> {
    if !once() {
        return Err("warm-up run failed".into());
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        if !once() {
            return Err("a timed run failed".into());
        }
        times.push(start.elapsed());
    }
    Ok(median(times))
}

fn rg(args: &[&str]) -> bool {
    Command::new("rg")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("usage: search-vs-rg DIR [FILES] [RUNS]");
        return ExitCode::FAILURE;
    };
    let files: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(7);
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| generate(&dir, files).map(drop)) {
        eprintln!(
            "search-vs-rg: cannot generate the tree in {}: {e}",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let Ok(dir) = dir.canonicalize() else {
        eprintln!("search-vs-rg: cannot resolve {}", dir.display());
        return ExitCode::FAILURE;
    };
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        eprintln!("search-vs-rg: cannot start a tokio runtime");
        return ExitCode::FAILURE;
    };
    let allow: Ruleset =
        serde_json::from_value(json!([{"permission": "*", "pattern": "*", "action": "allow"}]))
            .unwrap_or_default();
    let ctx = ToolContext::new(
        "ses_bench",
        "msg_bench",
        "call_bench",
        PermissionGate::new(),
    )
    .with_directories(dir.clone(), dir.clone())
    .with_ruleset(Arc::new(allow));
    let path = dir.to_string_lossy().to_string();
    let tool = |tool: &dyn Tool, input: serde_json::Value| {
        runtime
            .block_on(tool.execute(input, &ctx))
            .is_ok_and(|out| !out.output.is_empty())
    };
    let grep_input = json!({"pattern": "NEEDLE_[0-9]+", "path": path});
    let glob_input = json!({"pattern": "**/*.rs", "path": path});
    let results = (|| -> Result<[Duration; 4], String> {
        Ok([
            time(runs, || tool(&GrepTool::default(), grep_input.clone()))?,
            time(runs, || rg(&["-n", "NEEDLE_[0-9]+", &path]))?,
            time(runs, || tool(&GlobTool::default(), glob_input.clone()))?,
            time(runs, || rg(&["--files", "-g", "*.rs", &path]))?,
        ])
    })();
    let [grep, rg_grep, glob, rg_glob] = match results {
        Ok(times) => times,
        Err(e) => {
            eprintln!("search-vs-rg: {e} (is `rg` installed?)");
            return ExitCode::FAILURE;
        }
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}",
        json!({
            "files": files,
            "runs": runs,
            "grep_ms": ms(grep), "rg_grep_ms": ms(rg_grep),
            "glob_ms": ms(glob), "rg_glob_ms": ms(rg_glob),
        })
    );
    ExitCode::SUCCESS
}
