//! Criterion benchmark of the bash scanner (`agent_tools::bash_scan::scan`)
//! against tree-sitter parsing the same line alone (the scan parses it
//! once, then walks the tree: the ratio is the walk's cost).
//!
//! Lines: a typical agent command, 100 commands joined by `&&`, and the
//! deepest lines the length limit allows: `if` nested 4,000 deep (the
//! walk used tree-sitter's `Node::parent`, which searches down from the
//! root, so it was quadratic: 6.4 s in a debug build) and 4,000 arithmetic
//! loops; wrapper chains (`find -exec`, `xargs`), continuations and
//! comments filling the 128 KiB limit.

#![allow(missing_docs)]

use std::hint::black_box;

use agent_tools::bash_scan::scan;
use criterion::{Criterion, criterion_group, criterion_main};

fn lines() -> Vec<(&'static str, String)> {
    vec![
        (
            "typical",
            "cd sub && git diff --stat HEAD~1 | grep -v test > out.txt".to_string(),
        ),
        (
            "100 commands",
            (0..100)
                .map(|i| format!("echo {i} >> log.txt"))
                .collect::<Vec<_>>()
                .join(" && "),
        ),
        (
            "if nested 4000",
            format!(
                "{}true{}",
                "if true; then ".repeat(4000),
                "; fi".repeat(4000)
            ),
        ),
        (
            "4000 arithmetic loops",
            "for ((i=0; i<n; i++)); do echo $((i * 2)); done; ".repeat(1000),
        ),
        // Wrapper chains up to the length limit: each level used to copy
        // the rest of the line (quadratic, over a minute in a debug build).
        ("find -exec chain", fill("find . -exec ", "rm x ;")),
        ("xargs chain", fill("xargs ", "rm")),
        ("xargs -I chain", fill("xargs -I{} ", "rm {}")),
        // Line continuations and comments up to the limit: the faithfulness
        // checks (shell_source) are one walk and sweeps.
        ("continuations", fill("a \\\n", "")),
        ("comments", fill("a #c\n", "")),
    ]
}

/// `unit` repeated up to the length limit, then `tail`.
fn fill(unit: &str, tail: &str) -> String {
    let count = (agent_tools::bash_scan::MAX_COMMAND_BYTES - tail.len()) / unit.len();
    format!("{}{tail}", unit.repeat(count))
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bash_scan");
    let mut parser = tree_sitter::Parser::new();
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    if parser.set_language(&language).is_err() {
        return;
    }
    for (name, line) in lines() {
        assert!(scan(&line).is_ok(), "{name} is refused");
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
