//! What the faithful parse costs: ordinary commands (build tools, git,
//! package managers, pipelines, heredocs, continuations between words) stay
//! clear of `bash_opaque`, so a scan that asks for what it does not model
//! does not ask for what people run every day.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentgate_tools::bash_scan::scan;
use serde_json::Value;

const ORDINARY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/ordinary-commands.json"
);

#[test]
fn ordinary_commands_are_not_opaque() {
    let data: Value = serde_json::from_str(&std::fs::read_to_string(ORDINARY).unwrap()).unwrap();
    let commands: Vec<&str> = data["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(commands.len() >= 150, "the sample shrank");
    let opaque: Vec<(&str, Vec<String>)> = commands
        .iter()
        .filter_map(|command| {
            let scanned = scan(command).unwrap();
            (!scanned.opaque.is_empty()).then_some((*command, scanned.opaque))
        })
        .collect();
    println!(
        "ordinary commands opaque: {} of {}",
        opaque.len(),
        commands.len()
    );
    assert!(opaque.is_empty(), "opaque ordinary commands: {opaque:#?}");
}
