//! opencode conformance for the kinds this crate owns (`provider_prompt`).
//!
//! agentgate-testing's runner reads the vectors from `$OPENCODE_VECTORS` when
//! set, else from the copy in `agentgate-permission/tests/data/`, and prints one
//! line
//! `conformance[agentgate-providers]: N passed, M failed, S deviations`
//! and fails when any case fails. A deviation is a case the SDK answers
//! differently on purpose; there are none for this crate.

use agentgate_testing::conformance::{self, Deviation};
use serde_json::Value;

/// Kinds this crate answers.
const KINDS: &[&str] = &["provider_prompt"];

const DEVIATIONS: &[Deviation] = &[];

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
            let got = agentgate_providers::provider_prompt(&id);
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
    conformance::run_kinds("agentgate-providers", KINDS, DEVIATIONS, run_case);
}
