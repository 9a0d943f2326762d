//! CI-fast check of the load workload (the measured run is `cargo bench -p
//! agentgate-benches --bench load`): 1,000 concurrent sessions all finish every
//! step, and none starves (each runs its first call within the first half
//! of the run). No absolute timing is asserted.

#[path = "../../benches/load/workload.rs"]
#[allow(dead_code)]
mod workload;

use workload::{LoadConfig, run};

fn load(tool_yields: bool) -> workload::LoadReport {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(LoadConfig {
        sessions: 1000,
        steps: 8,
        tool_yields,
    }))
}

/// With a tool that yields once (as any tool doing I/O does).
#[test]
fn a_thousand_concurrent_sessions_all_finish_and_none_starves() {
    let report = load(true);
    assert!(report.finished.iter().all(|f| *f), "every prompt finished");
    assert!(
        report.steps_run.iter().all(|s| *s == 8),
        "every session ran its 8 steps"
    );
    assert_eq!(report.step_times.len(), 1000 * 8);
    assert!(
        report.no_starvation(),
        "the last session started at {:.0}% of the run",
        report.latest_start() * 100.0
    );
}

/// When the model stream, the store and the tools are all ready at once
/// (ScriptedModel, the memory store, a tool without I/O), a prompt that
/// never yielded between steps held its worker thread until done, so the
/// first sessions finished before later ones started (measured: the last
/// session started at ~99% of the run). The turn loop now yields once per
/// step.
#[test]
fn sessions_do_not_starve_even_when_nothing_ever_waits() {
    let report = load(false);
    assert!(report.finished.iter().all(|f| *f));
    assert!(
        report.no_starvation(),
        "the last session started at {:.0}% of the run",
        report.latest_start() * 100.0
    );
}
