//! The bypass corpus (`tests/data/bypass-corpus.json`): for
//! every case, the permission requests the tool makes (computed without
//! running it) and the decision they get under the corpus's host config.
//!
//! Run with `BLESS_BYPASS_CORPUS=1` to rewrite the `expect_requests` of the
//! file from the current code (the hand-written `decision`s are never
//! rewritten, and are still checked).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use agentgate_permission::{
    Action, PermissionConfig, Ruleset, evaluate, from_config_with_home, merge,
};
use agentgate_tools::bash_scan::{BASH_OPAQUE, ScanError, plan_requests};
use agentgate_tools::{
    EditArgs, EditTool, GlobArgs, GlobTool, GrepArgs, GrepTool, ListArgs, ListTool, ReadArgs,
    ReadTool, ToolRequest, WebFetchArgs, WebFetchTool, WriteArgs, WriteTool,
};
use serde_json::{Value, json};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bypass-corpus.json");

fn rules(config: &Value) -> Ruleset {
    let config = PermissionConfig::from_value(config, "permission").unwrap();
    from_config_with_home(&config, "/home/u")
}

/// The command of a bash case: a string, or `{repeat, times, middle,
/// close}` for the large ones.
fn command_of(args: &Value) -> String {
    match &args["command"] {
        Value::String(command) => command.clone(),
        spec => {
            let times = spec["times"].as_u64().unwrap() as usize;
            format!(
                "{}{}{}",
                spec["repeat"].as_str().unwrap().repeat(times),
                spec["middle"].as_str().unwrap(),
                spec["close"].as_str().unwrap().repeat(times)
            )
        }
    }
}

/// The requests a case's tool call makes, or the scan error's name.
fn requests(case: &Value, directory: &Path, worktree: &Path) -> Result<Vec<ToolRequest>, String> {
    let args = case["args"].clone();
    Ok(match case["tool"].as_str().unwrap() {
        "bash" => match plan_requests(&command_of(&args), None, directory, worktree) {
            Ok(requests) => requests,
            Err(ScanError::TooComplex) => return Err("too_complex".into()),
            Err(ScanError::TooLong(_)) => return Err("too_long".into()),
            Err(other) => return Err(other.to_string()),
        },
        "read" => {
            let args: ReadArgs = serde_json::from_value(args).unwrap();
            ReadTool::default().requests(&args, directory, worktree)
        }
        "write" => {
            let args: WriteArgs = serde_json::from_value(args).unwrap();
            WriteTool.requests(&args, directory, worktree)
        }
        "edit" => {
            let args: EditArgs = serde_json::from_value(args).unwrap();
            EditTool.requests(&args, directory, worktree)
        }
        "list" => {
            let args: ListArgs = serde_json::from_value(args).unwrap();
            ListTool::default().requests(&args, directory, worktree)
        }
        "glob" => {
            let args: GlobArgs = serde_json::from_value(args).unwrap();
            GlobTool::default().requests(&args, directory, worktree)
        }
        "grep" => {
            let args: GrepArgs = serde_json::from_value(args).unwrap();
            GrepTool::default().requests(&args, directory, worktree)
        }
        "webfetch" => {
            let args: WebFetchArgs = serde_json::from_value(args).unwrap();
            WebFetchTool::requests(&args)
        }
        other => panic!("unknown tool {other}"),
    })
}

/// deny when a rule denies one of the patterns, ask when one is left to
/// the user, allow otherwise (what a rejecting approver turns into "the
/// effect does not happen" unless the answer is allow).
fn decision(requests: &[ToolRequest], rules: &Ruleset) -> &'static str {
    let actions: Vec<Action> = requests
        .iter()
        .flat_map(|r| {
            // bash_opaque is judged by the rules that name it only.
            let named;
            let rules = if r.permission == BASH_OPAQUE {
                named = Ruleset(
                    rules
                        .0
                        .iter()
                        .filter(|rule| rule.permission == BASH_OPAQUE)
                        .cloned()
                        .collect(),
                );
                &named
            } else {
                rules
            };
            r.patterns
                .iter()
                .map(move |p| evaluate(&r.permission, p, &[rules]).action)
                .collect::<Vec<_>>()
        })
        .collect();
    if actions.contains(&Action::Deny) {
        "deny"
    } else if actions.contains(&Action::Ask) {
        "ask"
    } else {
        "allow"
    }
}

fn summary(requests: &[ToolRequest]) -> Value {
    Value::Array(
        requests
            .iter()
            .map(
                |r| json!({"permission": r.permission, "patterns": r.patterns, "always": r.always}),
            )
            .collect(),
    )
}

#[test]
fn bypass_corpus() {
    let text = std::fs::read_to_string(CORPUS).unwrap();
    let mut corpus: Value = serde_json::from_str(&text).unwrap();
    let directory = corpus["instance"]["directory"]
        .as_str()
        .unwrap()
        .to_string();
    let worktree = corpus["instance"]["worktree"].as_str().unwrap().to_string();
    let host = rules(&corpus["permission"]);
    let bless = std::env::var_os("BLESS_BYPASS_CORPUS").is_some();
    let mut failures = Vec::new();
    let mut per_class = std::collections::BTreeMap::<u64, usize>::new();
    let cases = corpus["cases"].as_array_mut().unwrap();
    for case in cases.iter_mut() {
        let name = case["name"].as_str().unwrap().to_string();
        *per_class
            .entry(case["class"].as_u64().unwrap())
            .or_default() += 1;
        let rules = match case.get("permission") {
            Some(extra) => merge(&[host.clone(), rules(extra)]),
            None => host.clone(),
        };
        let result = requests(case, Path::new(&directory), Path::new(&worktree));
        match (result, case.get("expect_error").and_then(Value::as_str)) {
            (Err(error), Some(want)) if error == want => {}
            (Err(error), want) => {
                failures.push(format!("{name}: error {error}, expected {want:?}"))
            }
            (Ok(got), Some(want)) => {
                failures.push(format!("{name}: expected error {want}, got {got:?}"))
            }
            (Ok(got), None) => {
                let got_summary = summary(&got);
                if bless {
                    case["expect_requests"] = got_summary.clone();
                } else if case["expect_requests"] != got_summary {
                    failures.push(format!(
                        "{name}: requests\n  expected {}\n  got      {got_summary}",
                        case["expect_requests"]
                    ));
                }
                let want = case["decision"].as_str().unwrap();
                let got_decision = decision(&got, &rules);
                if got_decision != want {
                    failures.push(format!(
                        "{name}: decision {got_decision}, expected {want} ({got_summary})"
                    ));
                }
                // Class 7: an "always" pattern never carries a glob
                // character of the command (only the trailing ` *`).
                for request in got.iter().filter(|r| r.permission == "bash") {
                    for always in &request.always {
                        let prefix = always.strip_suffix(" *").unwrap_or(always);
                        if prefix.contains(['*', '?']) {
                            failures.push(format!("{name}: always pattern {always:?} widens"));
                        }
                    }
                }
            }
        }
    }
    if bless {
        let mut text = serde_json::to_string_pretty(&corpus).unwrap();
        text.push('\n');
        std::fs::write(CORPUS, text).unwrap();
    }
    let total: usize = per_class.values().sum();
    println!(
        "bypass corpus: {total} cases, per class {per_class:?}, {} failed",
        failures.len()
    );
    assert!(
        total >= 80,
        "the corpus needs at least 80 cases, has {total}"
    );
    for class in [0, 1, 2, 3, 4, 5, 7, 8, 9] {
        assert!(per_class.contains_key(&class), "no case of class {class}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
