//! Criterion benchmarks of the permission engine: `evaluate` (opencode's
//! algorithm, without regexes) and `CompiledRuleset` on 10, 100 and 1000
//! rules and on a realistic agent setup, plus `from_config`, `disabled` and
//! `wildcard::matches`.
//!
//! Every evaluation benchmark cycles through the same queries as the
//! JavaScript baseline, one query per iteration, so criterion's time per
//! iteration is the time of one evaluation.
//!
//! Run: `cargo bench -p agentgate-benches --bench permission`, or
//! `benches/run-comparison.sh` for the table against the baseline.

use std::hint::black_box;

use agentgate_benches::{
    Fixture, TOOLS, fixtures, realistic_rulesets, user_config, wildcard_pairs,
};
use agentgate_permission::{
    CompiledRuleset, Ruleset, disabled, evaluate, from_config_with_home, merge, wildcard,
};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn refs(fixture: &Fixture) -> Vec<&Ruleset> {
    fixture.rulesets.iter().collect()
}

fn bench_evaluate(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluate");
    for fixture in fixtures() {
        let rulesets = refs(&fixture);
        let mut queries = fixture.queries.iter().cycle();
        group.bench_function(BenchmarkId::from_parameter(&fixture.name), |b| {
            b.iter(|| {
                queries
                    .next()
                    .map(|q| evaluate(black_box(&q.permission), black_box(&q.pattern), &rulesets))
            })
        });
    }
    group.finish();
}

fn bench_compiled(c: &mut Criterion) {
    let mut group = c.benchmark_group("compiled");
    for fixture in fixtures() {
        let compiled = CompiledRuleset::new(&refs(&fixture));
        let queries = &fixture.queries;
        let mut i = 0usize;
        group.bench_function(BenchmarkId::from_parameter(&fixture.name), |b| {
            b.iter(|| {
                // Wrap without `%`: a division per iteration would be a
                // measurable part of a ~100 ns evaluation.
                i += 1;
                if i == queries.len() {
                    i = 0;
                }
                let q = &queries[i];
                black_box(compiled.evaluate(black_box(&q.permission), black_box(&q.pattern))).action
            })
        });
    }
    group.finish();
}

fn bench_compile(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    for fixture in fixtures() {
        let rulesets = refs(&fixture);
        group.bench_function(BenchmarkId::from_parameter(&fixture.name), |b| {
            b.iter(|| CompiledRuleset::new(black_box(&rulesets)))
        });
    }
    group.finish();
}

fn bench_config_and_tools(c: &mut Criterion) {
    let config = user_config();
    c.bench_function("from_config/30_rules", |b| {
        b.iter(|| from_config_with_home(black_box(&config), "/home/u"))
    });
    let realistic = merge(&realistic_rulesets());
    c.bench_function("disabled/realistic", |b| {
        b.iter(|| disabled(black_box(TOOLS), black_box(&realistic)))
    });
    let pairs = wildcard_pairs();
    let mut pairs = pairs.iter().cycle();
    c.bench_function("wildcard_matches", |b| {
        b.iter(|| {
            pairs
                .next()
                .map(|(input, pattern)| wildcard::matches(black_box(input), black_box(pattern)))
        })
    });
}

/// The group lives in a private module: `criterion_group!` generates an
/// undocumented public function.
mod group {
    use super::*;
    criterion_group!(
        benches,
        bench_evaluate,
        bench_compiled,
        bench_compile,
        bench_config_and_tools
    );
}
criterion_main!(group::benches);
