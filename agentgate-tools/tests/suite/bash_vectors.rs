//! Runs the bash conformance cases of `opencode-vectors.json` on their own
//! (the full conformance test includes the same file).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::conformance::bash_cases;

#[test]
fn bash_vectors_pass() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../agentgate-permission/tests/data/opencode-vectors.json"
    );
    let vectors: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut deviations = Vec::new();
    for case in vectors["cases"].as_array().unwrap() {
        if let Some(result) = bash_cases::run_bash_case(case) {
            ran += 1;
            if let Some(name) = bash_cases::bash_case_deviation(case) {
                deviations.push(name);
            }
            if let Err(error) = result {
                failures.push(error);
            }
        }
    }
    println!(
        "bash vectors: {ran} run, {} failed, {} deviations {deviations:?}",
        failures.len(),
        deviations.len()
    );
    assert_eq!(
        deviations,
        [
            "deviation_seen_through",
            "deviation_seen_through",
            "deviation_seen_through",
            "deviation_shell_c",
            "deviation_seen_through",
            "deviation_seen_through"
        ]
    );
    assert_eq!(ran, 23, "expected 22 bash_scan + 1 bash tool_request cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
