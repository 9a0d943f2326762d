//! opencode conformance for the kinds this crate owns (`provider_prompt`).
//!
//! Reads the vectors from `$OPENCODE_VECTORS` when set, else from the copy
//! in `agent-permission/tests/data/`. Prints one line
//! `conformance[agent-providers]: N passed, M failed, S deviations`
//! and fails when any case fails. A deviation is a case the SDK answers
//! differently on purpose; there are none for this crate.

use serde_json::Value;

/// Kinds this crate answers.
const KINDS: &[&str] = &["provider_prompt"];

/// A deliberate difference from opencode: a named predicate that recognises
/// the cases it covers, and the reason (also in docs/deviations.md).
struct Deviation {
    name: &'static str,
    reason: &'static str,
    applies: fn(&Value) -> bool,
}

const DEVIATIONS: &[Deviation] = &[];

fn vectors() -> Value {
    let path = std::env::var("OPENCODE_VECTORS").unwrap_or_else(|_| {
        format!(
            "{}/../agent-permission/tests/data/opencode-vectors.json",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read conformance vectors at {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not valid JSON: {e}"))
}

fn string(case: &Value, name: &str) -> Result<String, String> {
    case.get(name)
        .ok_or_else(|| format!("case has no field {name:?}"))?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("field {name:?} is not a string"))
}

fn run_case(case: &Value) -> Result<(), String> {
    let kind = string(case, "kind")?;
    match kind.as_str() {
        "provider_prompt" => {
            let id = string(case, "model_api_id")?;
            let expected = string(case, "expect")?;
            let got = agent_providers::provider_prompt(&id);
            if got == expected {
                Ok(())
            } else {
                Err(format!("{id:?}: got {got:?}, expected {expected:?}"))
            }
        }
        other => Err(format!("kind {other} is not handled by this crate")),
    }
}

#[test]
fn opencode_conformance() {
    let vectors = vectors();
    let cases = vectors["cases"]
        .as_array()
        .expect("vectors have a cases array");
    let (mut passed, mut deviations) = (0usize, 0usize);
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let kind = case["kind"].as_str().unwrap_or_default();
        if !KINDS.contains(&kind) {
            continue;
        }
        match run_case(case) {
            Ok(()) => passed += 1,
            Err(why) => match DEVIATIONS.iter().find(|d| (d.applies)(case)) {
                Some(deviation) => {
                    deviations += 1;
                    println!(
                        "deviation {} (case {i}): {}",
                        deviation.name, deviation.reason
                    );
                }
                None => failures.push(format!("case {i} ({kind}): {why}\n    {case}")),
            },
        }
    }
    println!(
        "conformance[agent-providers]: {passed} passed, {} failed, {deviations} deviations",
        failures.len()
    );
    for failure in &failures {
        println!("FAILED {failure}");
    }
    assert!(
        failures.is_empty(),
        "{} conformance cases failed",
        failures.len()
    );
    assert!(passed > 0, "no conformance case ran");
}
