//! opencode conformance for the kinds this crate owns: `edit_replace`,
//! `external_directory` and `tool_request` (the file tools here; bash cases
//! through `conformance/bash_cases.rs` when present).
//!
//! Reads the vectors from `$OPENCODE_VECTORS` when set, else from
//! `../agent-permission/tests/data/opencode-vectors.json`. Prints one line
//! `conformance[agent-tools]: N passed, M failed, S deviations` and fails
//! when any case fails. A deviation is a case the SDK answers differently on
//! purpose; each is recognised by a named predicate below whose reason is
//! also written in `docs/deviations.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use agent_tools::{EditError, external_request, replace};
use serde_json::Value;

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

fn field<'a>(case: &'a Value, name: &str) -> Result<&'a Value, String> {
    case.get(name)
        .ok_or_else(|| format!("case has no field {name:?}"))
}

fn string(case: &Value, name: &str) -> Result<String, String> {
    field(case, name)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("field {name:?} is not a string"))
}

fn expect_eq<T: PartialEq + std::fmt::Debug>(got: T, expected: T) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("got {got:?}, expected {expected:?}"))
    }
}

fn run_edit_replace(case: &Value) -> Result<(), String> {
    let content = string(case, "content")?;
    let old = string(case, "oldString")?;
    let new = string(case, "newString")?;
    let all = field(case, "replaceAll")?.as_bool().unwrap_or(false);
    let expect = field(case, "expect")?;
    let got: Result<String, EditError> = replace(&content, &old, &new, all);
    match (got, expect.get("result"), expect.get("error")) {
        (Ok(text), Some(Value::String(want)), _) => expect_eq(text.as_str(), want.as_str()),
        (Err(error), _, Some(Value::String(want))) => {
            expect_eq(error.to_string().as_str(), want.as_str())
        }
        (got, _, _) => Err(format!("got {got:?}, expected {expect}")),
    }
}

/// `directory` and `worktree` of a case's `instance`.
fn instance(case: &Value) -> Result<(String, String), String> {
    let instance = field(case, "instance")?;
    Ok((
        string(instance, "directory")?,
        string(instance, "worktree")?,
    ))
}

fn run_external_directory(case: &Value) -> Result<(), String> {
    let target = string(case, "target")?;
    let is_dir = case.get("target_kind").and_then(Value::as_str) == Some("directory");
    let (directory, worktree) = instance(case)?;
    let got = external_request(
        Path::new(&target),
        is_dir,
        Path::new(&directory),
        Path::new(&worktree),
    )
    .map(|r| serde_json::to_value(r).expect("serializable"));
    expect_eq(
        got.as_ref(),
        Some(field(case, "expect")?).filter(|v| !v.is_null()),
    )
}

/// Runs a case; `None` when this crate does not answer it.
fn run_case(case: &Value) -> Option<Result<(), String>> {
    match case.get("kind")?.as_str()? {
        "edit_replace" => Some(run_edit_replace(case)),
        "external_directory" => Some(run_external_directory(case)),
        _ => None,
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
        let Some(result) = run_case(case) else {
            continue;
        };
        match result {
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
        "conformance[agent-tools]: {passed} passed, {} failed, {deviations} deviations",
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
