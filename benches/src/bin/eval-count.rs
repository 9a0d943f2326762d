//! Evaluates one fixture's queries N times with one path, for instruction
//! counts under `valgrind --tool=callgrind` (stable on a noisy machine,
//! unlike timings). `benches/run-all.sh` runs it twice per fixture and path,
//! with N and with 0, and divides the difference by N.
//!
//! `cargo run --release -p agentgate-benches --bin eval-count -- PATH FIXTURE N`
//! with PATH `evaluate` or `compiled`, FIXTURE one of `10`, `100`, `1000`,
//! `realistic`.

use std::hint::black_box;
use std::process::ExitCode;

use agentgate_permission::{CompiledRuleset, Ruleset, evaluate};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(name), Some(n)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: eval-count evaluate|compiled FIXTURE N");
        return ExitCode::FAILURE;
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("eval-count: N must be a number, got {n:?}");
        return ExitCode::FAILURE;
    };
    let Some(fixture) = agentgate_benches::fixtures()
        .into_iter()
        .find(|f| &f.name == name)
    else {
        eprintln!("eval-count: no fixture {name:?} (10, 100, 1000, realistic)");
        return ExitCode::FAILURE;
    };
    let rulesets: Vec<&Ruleset> = fixture.rulesets.iter().collect();
    let queries = &fixture.queries;
    let mut sink = 0usize;
    match path.as_str() {
        "evaluate" => {
            for i in 0..n {
                let q = &queries[i % queries.len()];
                let rule = evaluate(black_box(&q.permission), black_box(&q.pattern), &rulesets);
                sink += rule.action as usize;
            }
        }
        "compiled" => {
            // Built in both runs (N and 0), so the difference is evaluation only.
            let compiled = CompiledRuleset::new(&rulesets);
            for i in 0..n {
                let q = &queries[i % queries.len()];
                sink += compiled
                    .evaluate(black_box(&q.permission), black_box(&q.pattern))
                    .action as usize;
            }
        }
        other => {
            eprintln!("eval-count: unknown path {other:?} (evaluate, compiled)");
            return ExitCode::FAILURE;
        }
    }
    black_box(sink);
    ExitCode::SUCCESS
}
