//! Criterion benchmark of the bash scanner (`agent_tools::bash_scan::scan`)
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

use agent_tools::bash_scan::scan;
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
        agent_tools::bash_scan::MAX_COMMAND_BYTES / unit.len(),
    );
    while low < high {
        let mid = (low + high).div_ceil(2);
        let line = repeat(unit, mid, tail);
        if line.len() <= agent_tools::bash_scan::MAX_COMMAND_BYTES && scan(&line).is_ok() {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    low
}

/// `unit` repeated up to the length limit, then `tail`.
fn fill(unit: &str, tail: &str) -> String {
    let count = (agent_tools::bash_scan::MAX_COMMAND_BYTES - tail.len()) / unit.len();
    let line = repeat(unit, count, tail);
    if line.len() > agent_tools::bash_scan::MAX_COMMAND_BYTES {
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
