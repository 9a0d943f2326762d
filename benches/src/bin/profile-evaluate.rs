//! Evaluates one fixture's queries many times with the plain `evaluate` or
//! with `CompiledRuleset`, for instruction-level profiling:
//!
//! ```text
//! cargo build --release -p agentgate-benches --bin profile-evaluate
//! valgrind --tool=callgrind target/release/profile-evaluate compiled 10 2000
//! ```
//!
//! Arguments: `plain|compiled`, a fixture name (`10`, `100`, `1000`,
//! `realistic`), and how many passes over the fixture's queries (default
//! 1000). Prints the number of evaluations and a checksum of the actions.

use std::hint::black_box;
use std::process::ExitCode;

use agentgate_permission::{CompiledRuleset, Ruleset, decide};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(name)) = (args.first(), args.get(1)) else {
        eprintln!("usage: profile-evaluate plain|compiled FIXTURE [PASSES]");
        return ExitCode::FAILURE;
    };
    let passes: usize = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(1000);
    let Some(fixture) = agentgate_benches::fixtures()
        .into_iter()
        .find(|f| &f.name == name)
    else {
        eprintln!("profile-evaluate: no fixture named {name:?}");
        return ExitCode::FAILURE;
    };
    let rulesets: Vec<&Ruleset> = fixture.rulesets.iter().collect();
    let compiled = CompiledRuleset::new(&rulesets);
    let mut checksum = 0usize;
    let mut evaluations = 0usize;
    for _ in 0..passes {
        for q in &fixture.queries {
            let action = match mode.as_str() {
                "compiled" => compiled.decide(black_box(&q.permission), black_box(&q.pattern)),
                _ => decide(black_box(&q.permission), black_box(&q.pattern), &rulesets),
            };
            checksum = checksum.wrapping_mul(3).wrapping_add(action as usize);
            evaluations += 1;
        }
    }
    println!("{evaluations} evaluations ({mode}, {name}), checksum {checksum}");
    ExitCode::SUCCESS
}
