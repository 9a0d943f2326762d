//! The runner for opencode's conformance vectors.
//!
//! Every crate answers the vector kinds it owns and judges each case; the
//! runner loads the vectors, counts passes, failures and deviations the same
//! way for every crate, and prints the line CI collects:
//!
//! ```text
//! conformance[agentgate-permission]: 208 passed, 0 failed, 3 deviations
//! ```
//!
//! A deviation is a case the SDK answers differently on purpose. It is
//! recognised by a named predicate (its reason is also written in
//! `docs/deviations.md`), never by the case's position in the file.

use std::path::PathBuf;

use serde_json::Value;

/// The environment variable naming a newer copy of the vectors (CI sets it
/// when it has one); without it the repository copy is read.
pub const VECTORS_ENV: &str = "OPENCODE_VECTORS";

/// A deliberate difference from opencode: a named predicate that recognises
/// the cases it covers, and the reason.
#[derive(Clone, Copy)]
pub struct Deviation {
    /// A short name, printed with each case it explains.
    pub name: &'static str,
    /// Why the SDK answers differently (also in `docs/deviations.md`).
    pub reason: &'static str,
    /// Whether the deviation covers this case.
    pub applies: fn(&Value) -> bool,
}

/// How a crate judged one case against the vector's expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The SDK answers as opencode does.
    Pass,
    /// The SDK answers differently; the case passes only when one of the
    /// crate's [`Deviation`]s applies to it.
    Differs(String),
    /// The answer is wrong by the SDK's own rules: no deviation excuses it.
    Fails(String),
    /// The case passes only under a deviation the crate recognised itself
    /// (counted as a deviation, printed with its reason).
    Deviates {
        /// The deviation's name (as in docs/deviations.md).
        name: &'static str,
        /// Why the SDK answers differently, in one sentence.
        reason: &'static str,
    },
}

/// The counts of one run and the lines it prints.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Cases answered as opencode does.
    pub passed: usize,
    /// Cases explained by a deviation.
    pub deviations: usize,
    /// One line per deviating case, in case order.
    pub deviation_lines: Vec<String>,
    /// One entry per failed case: its index, kind, why, and the case.
    pub failures: Vec<String>,
}

impl Tally {
    /// The one-line summary CI greps: `conformance[<crate>]: N passed,
    /// M failed, S deviations`.
    pub fn summary(&self, crate_name: &str) -> String {
        format!(
            "conformance[{crate_name}]: {} passed, {} failed, {} deviations",
            self.passed,
            self.failures.len(),
            self.deviations
        )
    }
}

/// Where the vectors are read from: `$OPENCODE_VECTORS`, else the
/// repository copy in `agentgate-permission/tests/data/`.
pub fn vectors_path() -> PathBuf {
    std::env::var_os(VECTORS_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../agentgate-permission/tests/data/opencode-vectors.json")
        })
}

/// The vectors file as JSON; panics (failing the test) when it cannot be
/// read or parsed.
pub fn vectors() -> Value {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read conformance vectors at {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()))
}

/// The `cases` array of the vectors.
pub fn cases(vectors: &Value) -> &[Value] {
    match vectors["cases"].as_array() {
        Some(cases) => cases,
        None => panic!("the conformance vectors have no `cases` array"),
    }
}

/// Judges every case: `judge` answers `None` for the kinds the crate does
/// not own, else its [`Verdict`]; a [`Verdict::Differs`] is a deviation when
/// one of `deviations` applies, a failure otherwise.
pub fn tally(
    cases: &[Value],
    deviations: &[Deviation],
    mut judge: impl FnMut(&Value) -> Option<Verdict>,
) -> Tally {
    let mut tally = Tally::default();
    for (i, case) in cases.iter().enumerate() {
        let kind = case["kind"].as_str().unwrap_or_default();
        let Some(verdict) = judge(case) else {
            continue;
        };
        let why = match verdict {
            Verdict::Pass => {
                tally.passed += 1;
                continue;
            }
            Verdict::Deviates { name, reason } => {
                tally.deviations += 1;
                tally
                    .deviation_lines
                    .push(format!("deviation {name} (case {i}): {reason}"));
                continue;
            }
            Verdict::Fails(why) => why,
            Verdict::Differs(why) => match deviations.iter().find(|d| (d.applies)(case)) {
                Some(deviation) => {
                    tally.deviations += 1;
                    tally.deviation_lines.push(format!(
                        "deviation {} (case {i}): {}",
                        deviation.name, deviation.reason
                    ));
                    continue;
                }
                None => why,
            },
        };
        tally
            .failures
            .push(format!("case {i} ({kind}): {why}\n    {case}"));
    }
    tally
}

/// Runs a crate's conformance test: loads the vectors, [`tally`]s them,
/// prints each deviation, the summary line and each failure (through
/// `println!`, so the test harness captures them), and fails the test when a
/// case failed or none ran.
pub fn run(
    crate_name: &str,
    deviations: &[Deviation],
    judge: impl FnMut(&Value) -> Option<Verdict>,
) -> Tally {
    let vectors = vectors();
    let tally = tally(cases(&vectors), deviations, judge);
    for line in &tally.deviation_lines {
        println!("{line}");
    }
    println!("{}", tally.summary(crate_name));
    for failure in &tally.failures {
        println!("FAILED {failure}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} conformance cases failed",
        tally.failures.len()
    );
    assert!(tally.passed > 0, "no conformance case ran");
    tally
}

/// [`run`] for a crate that owns whole kinds: the cases of `kinds` go to
/// `run_case`, whose `Err` is a [`Verdict::Differs`].
pub fn run_kinds(
    crate_name: &str,
    kinds: &[&str],
    deviations: &[Deviation],
    mut run_case: impl FnMut(&Value) -> Result<(), String>,
) -> Tally {
    run(crate_name, deviations, |case| {
        let kind = case["kind"].as_str().unwrap_or_default();
        kinds.contains(&kind).then(|| match run_case(case) {
            Ok(()) => Verdict::Pass,
            Err(why) => Verdict::Differs(why),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn odd(case: &Value) -> bool {
        case["n"].as_u64().is_some_and(|n| n % 2 == 1)
    }

    const ODD: Deviation = Deviation {
        name: "odd",
        reason: "odd numbers differ",
        applies: odd,
    };

    #[test]
    fn each_verdict_is_counted_once_and_unowned_kinds_are_skipped() {
        let cases: Vec<Value> = (0..6).map(|n| json!({"kind": "k", "n": n})).collect();
        let tally = tally(&cases, &[ODD], |case| match case["n"].as_u64() {
            Some(0) => None,
            Some(1) => Some(Verdict::Differs("one".into())),
            Some(2) => Some(Verdict::Differs("two".into())),
            Some(3) => Some(Verdict::Fails("three".into())),
            Some(4) => Some(Verdict::Deviates {
                name: "own",
                reason: "found by the crate",
            }),
            _ => Some(Verdict::Pass),
        });
        assert_eq!(tally.passed, 1);
        assert_eq!(tally.deviations, 2);
        assert_eq!(
            tally.deviation_lines,
            [
                "deviation odd (case 1): odd numbers differ",
                "deviation own (case 4): found by the crate"
            ]
        );
        // A difference no deviation explains fails, and so does a failure
        // a deviation would cover.
        assert_eq!(tally.failures.len(), 2);
        assert!(tally.failures[0].starts_with("case 2 (k): two\n    {"));
        assert!(tally.failures[1].starts_with("case 3 (k): three\n"));
        assert_eq!(
            tally.summary("x"),
            "conformance[x]: 1 passed, 2 failed, 2 deviations"
        );
    }

    #[test]
    fn the_repository_copy_is_the_default() {
        if std::env::var_os(VECTORS_ENV).is_some() {
            return;
        }
        let vectors = vectors();
        assert!(!cases(&vectors).is_empty());
    }
}
