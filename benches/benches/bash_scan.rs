//! Criterion benchmark of the bash scanner (`agentgate_tools::bash_scan::scan`)
//! against tree-sitter parsing the same line alone (the scan parses it
//! once, then walks the tree: the ratio is the walk's cost).
//!
//! Lines: a typical agent command, 100 commands joined by `&&`, a 120 KiB
//! heredoc, and dense units (nested `if`, arithmetic loops, `find -exec`
//! and `xargs` chains, continuations, comments, bare commands), each twice:
//! the most the parse's work budget (`MAX_PARSE_WORK`) accepts, the
//! costliest line that is scanned, and filling the 128 KiB limit, which is
//! refused once the budget is spent (the cost of a refusal). The parse alone
//! of the 128 KiB lines is the baseline the budget is there to avoid.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use agentgate_tools::bash_scan::scan;
use criterion::{Criterion, criterion_group, criterion_main};

fn lines() -> Vec<(String, String)> {
    let mut lines = vec![
        (
            "typical".to_string(),
            "cd sub && git diff --stat HEAD~1 | grep -v test > out.txt".to_string(),
        ),
        (
            "100 commands".to_string(),
            (0..100)
                .map(|i| format!("echo {i} >> log.txt"))
                .collect::<Vec<_>>()
                .join(" && "),
        ),
        (
            "heredoc 120 KiB".to_string(),
            format!(
                "cat > src/main.rs <<'EOF'\n{}EOF\n",
                "fn main() { println!(\"{}\", 1 + 2); } // $HOME `x`\n".repeat(2400)
            ),
        ),
    ];
    // The dense units, each twice: as many as the parse's work budget
    // accepts (the costliest line that is scanned), and filling the length
    // limit (refused once the budget is spent: the cost of a refusal).
    let units = [
        ("if nested", "if true; then ", "true; fi"),
        (
            "arithmetic loops",
            "for ((i=0; i<n; i++)); do echo $((i * 2)); done; ",
            "",
        ),
        ("find -exec chain", "find . -exec ", "rm x ;"),
        ("xargs chain", "xargs ", "rm"),
        ("xargs -I chain", "xargs -I{} ", "rm {}"),
        ("continuations", "a \\\n", ""),
        ("comments", "a #c\n", ""),
        ("commands", "a;", ""),
    ];
    for (name, unit, tail) in units {
        let most = most_accepted(unit, tail);
        lines.push((
            format!("{name} ×{most} (most accepted)"),
            repeat(unit, most, tail),
        ));
        lines.push((format!("{name} to 128 KiB"), fill(unit, tail)));
    }
    lines
}

/// `unit` `count` times, then `tail` (an `if` chain closes each level).
fn repeat(unit: &str, count: usize, tail: &str) -> String {
    if unit.starts_with("if ") {
        return format!("{}true{}", unit.repeat(count), "; fi".repeat(count));
    }
    format!("{}{tail}", unit.repeat(count))
}

/// The largest count of `unit` that the scanner accepts (binary search).
fn most_accepted(unit: &str, tail: &str) -> usize {
    let (mut low, mut high) = (
        1usize,
        agentgate_tools::bash_scan::MAX_COMMAND_BYTES / unit.len(),
    );
    while low < high {
        let mid = (low + high).div_ceil(2);
        let line = repeat(unit, mid, tail);
        if line.len() <= agentgate_tools::bash_scan::MAX_COMMAND_BYTES && scan(&line).is_ok() {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    low
}

/// `unit` repeated up to the length limit, then `tail`.
fn fill(unit: &str, tail: &str) -> String {
    let count = (agentgate_tools::bash_scan::MAX_COMMAND_BYTES - tail.len()) / unit.len();
    let line = repeat(unit, count, tail);
    if line.len() > agentgate_tools::bash_scan::MAX_COMMAND_BYTES {
        return repeat(unit, count / 2, tail);
    }
    line
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bash_scan");
    let mut parser = tree_sitter::Parser::new();
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    if parser.set_language(&language).is_err() {
        return;
    }
    for (name, line) in lines() {
        group.bench_function(format!("parse only/{name}"), |b| {
            b.iter(|| black_box(parser.parse(black_box(&line), None)))
        });
        group.bench_function(format!("scan/{name}"), |b| {
            b.iter(|| black_box(scan(black_box(&line))))
        });
    }
    group.finish();
    cpu_summary(&mut parser);
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat`
/// (nanoseconds; `None` off Linux): unlike wall time it does not count
/// the time other processes held the cores, so a loaded machine still
/// measures the scan's own cost.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// Median CPU time of one run of `f`. The kernel updates a thread's CPU
/// time at scheduler ticks, so each sample is a batch of runs long enough
/// (about 40 ms) for a tick's error to be small, divided by its size.
fn cpu_median(mut f: impl FnMut()) -> Option<Duration> {
    let started = std::time::Instant::now();
    f();
    let one = started.elapsed().max(Duration::from_micros(1));
    let batch = (Duration::from_millis(40).as_nanos() / one.as_nanos()).clamp(1, 100_000) as u32;
    let mut samples = Vec::new();
    let started = std::time::Instant::now();
    while samples.len() < 5 || (started.elapsed() < Duration::from_secs(1) && samples.len() < 50) {
        let before = cpu_time()?;
        for _ in 0..batch {
            f();
        }
        samples.push(cpu_time()?.saturating_sub(before) / batch);
    }
    samples.sort();
    samples.get(samples.len() / 2).copied()
}

/// After the criterion groups: each line's CPU time, scanned and parsed
/// alone, the ratio, and the costliest line the scanner accepts against
/// the 50 ms bound.
fn cpu_summary(parser: &mut tree_sitter::Parser) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut worst: Option<(String, Duration)> = None;
    eprintln!("cpu time (median, this thread only): line | bytes | scan | parse alone | ratio");
    for (name, line) in lines() {
        let accepted = scan(&line).is_ok();
        let (Some(scanned), Some(parsed)) = (
            cpu_median(|| {
                let _ = black_box(scan(black_box(&line)));
            }),
            cpu_median(|| {
                black_box(parser.parse(black_box(&line), None));
            }),
        ) else {
            eprintln!("cpu time: no /proc/thread-self/schedstat here");
            return;
        };
        eprintln!(
            "cpu: {name} | {} | {:.2} ms{} | {:.2} ms | {:.2}x",
            line.len(),
            ms(scanned),
            if accepted { "" } else { " (refused)" },
            ms(parsed),
            scanned.as_secs_f64() / parsed.as_secs_f64().max(1e-9)
        );
        if worst.as_ref().is_none_or(|(_, d)| scanned > *d) {
            worst = Some((name, scanned));
        }
    }
    if let Some((name, d)) = worst {
        eprintln!("cpu: costliest line: {name}, {:.2} ms (bound 50 ms)", ms(d));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
