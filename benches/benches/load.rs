//! Load: 1,000 concurrent sessions of one engine, each
//! a prompt of 20 steps with `ScriptedModel` and a fast tool, on a
//! multi-thread tokio runtime. Prints throughput, p50/p99/max time per
//! step, peak heap per session (a counting global allocator) and whether
//! any session starved; `--json` adds one machine-readable line.
//!
//! `cargo bench -p agentgate-benches --bench load [-- --sessions N --steps S]`.
//! Without `--bench` (as `cargo test --all-targets` runs it) it does a
//! small smoke run.

#![allow(missing_docs)]

#[path = "load/workload.rs"]
#[allow(dead_code)] // `LoadReport::config` is for the test
mod workload;

use agentgate_benches::{CountingAllocator, usize_arg};

use workload::{LoadConfig, run};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let config = LoadConfig {
        sessions: usize_arg(&args, "--sessions").unwrap_or(if full { 1000 } else { 50 }),
        steps: usize_arg(&args, "--steps").unwrap_or(if full { 20 } else { 5 }),
        tool_yields: args.iter().any(|a| a == "--tool-yields"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let before = CountingAllocator::reset_peak();
    let report = runtime.block_on(run(config));
    let peak = CountingAllocator::peak() - before;
    let per_session = peak / config.sessions;

    let ok = report.finished.iter().all(|f| *f)
        && report.steps_run.iter().all(|s| *s as usize == config.steps);
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    println!(
        "load: {} sessions x {} steps on {} worker threads, the tool {}",
        config.sessions,
        config.steps,
        runtime.metrics().num_workers(),
        if config.tool_yields {
            "yields once"
        } else {
            "never yields"
        }
    );
    println!("| measurement | value |");
    println!("| --- | --- |");
    println!("| wall time | {:.1} ms |", report.wall.as_secs_f64() * 1e3);
    println!("| throughput | {:.0} steps/s |", report.throughput());
    println!("| step time p50 | {:.0} µs |", us(report.quantile(0.5)));
    println!("| step time p99 | {:.0} µs |", us(report.quantile(0.99)));
    println!("| step time max | {:.0} µs |", us(report.quantile(1.0)));
    println!(
        "| peak heap per session | {:.1} KiB (peak {:.1} MiB over the run) |",
        per_session as f64 / 1024.0,
        peak as f64 / (1024.0 * 1024.0)
    );
    println!(
        "| completion spread (slowest / fastest session) | {:.2} |",
        report.completion_spread()
    );
    println!(
        "| last session's first call, share of the run | {:.0}% |",
        report.latest_start() * 100.0
    );
    println!(
        "| no starvation (every session started in the first half) | {} |",
        report.no_starvation()
    );
    println!("| all sessions finished all steps | {ok} |");
    if args.iter().any(|a| a == "--json") {
        println!(
            "{{\"load\":{{\"tool_yields\":{},\"sessions\":{},\"steps\":{},\"steps_per_s\":{:.0},\"p50_us\":{:.1},\"p99_us\":{:.1},\"peak_kib_per_session\":{:.1},\"no_starvation\":{},\"all_finished\":{ok}}}}}",
            config.tool_yields,
            config.sessions,
            config.steps,
            report.throughput(),
            us(report.quantile(0.5)),
            us(report.quantile(0.99)),
            per_session as f64 / 1024.0,
            report.no_starvation()
        );
    }
    assert!(ok, "some sessions did not finish all their steps");
}
