//! The bash scanner against real bash, for long runs:
//! the fuzz input's bytes drive the same grammar as the CI test
//! (`agentgate-tools/tests/suite/bash_differential.rs`, shared code in
//! `agentgate-tools/tests/differential/bash_harness.rs`); the line runs under
//! bash in the project's sandbox, and every simple command bash executed
//! must be covered by a pattern of `scan(line)`, or the scan opaque. A
//! command no known hole class explains is a crash.
#![no_main]

#[path = "../../agentgate-tools/tests/differential/bash_harness.rs"]
mod bash_harness;

use std::sync::OnceLock;

use bash_harness::{Bytes, Harness, Verdict, generate};
use libfuzzer_sys::fuzz_target;

fn harness() -> Option<&'static Harness> {
    static HARNESS: OnceLock<Option<Harness>> = OnceLock::new();
    HARNESS
        .get_or_init(|| {
            let root = std::env::temp_dir().join(format!(
                "agentgate-fuzz-bash-differential-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&root);
            let harness = Harness::new(&root);
            match &harness {
                Some(h) => eprintln!("bash_differential: sandbox: {}", h.sandbox_summary()),
                None => eprintln!("bash_differential: bash is not on PATH; nothing is checked"),
            }
            harness
        })
        .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(harness) = harness() else {
        return;
    };
    let line = generate(&mut Bytes(data));
    if let Verdict::Uncovered(uncovered) = harness.check(&line)
        && !uncovered.explained()
    {
        panic!("bash ran commands no pattern covers:\n{uncovered}");
    }
});
