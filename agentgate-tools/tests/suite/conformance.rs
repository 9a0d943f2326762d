//! opencode conformance for the kinds this crate owns: `edit_replace`,
//! `external_directory` and `tool_request` (the file tools here; bash cases
//! through `conformance/bash_cases.rs` when present).
//!
//! agentgate-testing's runner reads the vectors from `$OPENCODE_VECTORS` when
//! set, else from `../agentgate-permission/tests/data/opencode-vectors.json`,
//! and prints one line
//! `conformance[agentgate-tools]: N passed, M failed, S deviations` and fails
//! when any case fails. A deviation is a case the SDK answers differently on
//! purpose; each is recognised by a named predicate below whose reason is
//! also written in `docs/deviations.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod bash_cases;

use std::path::Path;

use agentgate_testing::conformance::{self, Deviation, Verdict};
use agentgate_tools::{
    EditArgs, EditError, EditTool, GlobArgs, GlobTool, GrepArgs, GrepTool, ListArgs, ListTool,
    ReadArgs, ReadTool, TodoWriteArgs, TodoWriteTool, ToolRequest, WebFetchArgs, WebFetchTool,
    WriteArgs, WriteTool, external_request, paths, replace,
};
use serde_json::Value;

const DEVIATIONS: &[Deviation] = &[
    Deviation {
        name: "worktree_pattern_points_elsewhere",
        reason: "the vector's worktree-relative pattern does not lead from the worktree to the file \
                 (it has too few `..`); the SDK computes Node's path.relative(worktree, file), which \
                 is what opencode runs, so the pattern names the file actually touched",
        applies: worktree_pattern_points_elsewhere,
    },
    Deviation {
        name: "webfetch_normalised_url",
        reason: "the URL as the fetch will use it (WHATWG normalised: host spelling, IPv4 forms, \
                 default port, trailing slash) is a pattern too, after the URL as given, so host \
                 rules cannot be dodged by another spelling",
        applies: webfetch_normalised_url,
    },
];

/// A `webfetch` case whose URL has a normalised form different from its
/// text: the expected patterns must be exactly the URL as given, which our
/// patterns start with.
fn webfetch_normalised_url(case: &Value) -> bool {
    if case["tool"].as_str() != Some("webfetch") {
        return false;
    }
    let Some(url) = case["args"]["url"].as_str() else {
        return false;
    };
    let ours = agentgate_tools::url_patterns(url);
    let expected = &case["expect_requests"][0]["patterns"];
    ours.len() > 1 && expected == &serde_json::json!([url]) && ours[0] == url
}

/// A `tool_request` case for a file tool whose expected `read`/`edit`
/// pattern, resolved against the worktree, is not the file named by
/// `filePath` (resolved against the directory).
fn worktree_pattern_points_elsewhere(case: &Value) -> bool {
    let (Some(args), Ok((directory, worktree))) = (case.get("args"), instance(case)) else {
        return false;
    };
    let Some(file) = args.get("filePath").and_then(Value::as_str) else {
        return false;
    };
    let target = paths::resolve(Path::new(&directory), Path::new(file));
    let expected = case
        .get("expect_requests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    expected
        .filter(|r| matches!(r["permission"].as_str(), Some("read" | "edit")))
        .filter_map(|r| r["patterns"].get(0).and_then(Value::as_str))
        .any(|pattern| paths::resolve(Path::new(&worktree), Path::new(pattern)) != target)
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

/// The requests a file tool of this crate would make, or `None` for tools
/// it does not own.
fn tool_requests(case: &Value) -> Option<Result<Vec<ToolRequest>, String>> {
    fn args<T: serde::de::DeserializeOwned>(case: &Value) -> Result<T, String> {
        serde_json::from_value(case.get("args").cloned().unwrap_or(Value::Null))
            .map_err(|e| format!("bad args: {e}"))
    }
    let tool = case.get("tool")?.as_str()?;
    let (directory, worktree) = match instance(case) {
        Ok(found) => found,
        Err(e) => return Some(Err(e)),
    };
    let (directory, worktree) = (Path::new(&directory), Path::new(&worktree));
    let requests =
        match tool {
            "read" => args::<ReadArgs>(case)
                .map(|a| ReadTool::default().requests(&a, directory, worktree)),
            "write" => args::<WriteArgs>(case).map(|a| WriteTool.requests(&a, directory, worktree)),
            "edit" => args::<EditArgs>(case).map(|a| EditTool.requests(&a, directory, worktree)),
            "glob" => args::<GlobArgs>(case)
                .map(|a| GlobTool::default().requests(&a, directory, worktree)),
            "grep" => args::<GrepArgs>(case)
                .map(|a| GrepTool::default().requests(&a, directory, worktree)),
            "list" => args::<ListArgs>(case)
                .map(|a| ListTool::default().requests(&a, directory, worktree)),
            "webfetch" => args::<WebFetchArgs>(case).map(|a| WebFetchTool::requests(&a)),
            "todowrite" => args::<TodoWriteArgs>(case).map(|a| TodoWriteTool::requests(&a)),
            _ => return None,
        };
    Some(requests)
}

fn run_tool_request(case: &Value) -> Option<Result<(), String>> {
    let got = match tool_requests(case)? {
        Ok(got) => got,
        Err(e) => return Some(Err(e)),
    };
    let Some(expected) = case.get("expect_requests").and_then(Value::as_array) else {
        return Some(Err("case has no expect_requests array".into()));
    };
    // Metadata is compared only where the vector shows it.
    let got: Vec<Value> = got
        .iter()
        .zip(expected.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(request, want)| {
            let mut value = serde_json::json!({
                "permission": request.permission,
                "patterns": request.patterns,
                "always": request.always,
            });
            if want.is_some_and(|w| w.get("metadata").is_some()) {
                value["metadata"] = request.metadata.clone();
            }
            value
        })
        .collect();
    Some(expect_eq(&got, expected))
}

/// Runs a case; `None` when this crate does not answer it.
fn run_case(case: &Value) -> Option<Result<(), String>> {
    let ours = match case.get("kind")?.as_str()? {
        "edit_replace" => Some(run_edit_replace(case)),
        "external_directory" => Some(run_external_directory(case)),
        "tool_request" => run_tool_request(case),
        _ => None,
    };
    ours.or_else(|| bash_cases::run_bash_case(case))
}

#[test]
fn opencode_conformance() {
    conformance::run("agentgate-tools", DEVIATIONS, |case| {
        Some(match run_case(case)? {
            // A bash case that passes only under its named deviation.
            Ok(()) => bash_cases::bash_case_deviation(case).map_or(Verdict::Pass, |name| {
                Verdict::Deviates {
                    name,
                    reason: bash_cases::bash_deviation_reason(name),
                }
            }),
            Err(why) => Verdict::Differs(why),
        })
    });
}

#[test]
fn deviation_predicates_are_not_vacuous() {
    let miscounted = serde_json::json!({
        "kind": "tool_request", "tool": "read", "args": {"filePath": "/etc/hosts"},
        "instance": {"directory": "/home/u/proj/pkg", "worktree": "/home/u/proj"},
        "expect_requests": [
            {"permission": "external_directory", "patterns": ["/etc/*"], "always": ["/etc/*"]},
            {"permission": "read", "patterns": ["../../etc/hosts"], "always": ["*"]}
        ]
    });
    assert!(worktree_pattern_points_elsewhere(&miscounted));
    let mut right = miscounted.clone();
    right["expect_requests"][1]["patterns"][0] = "../../../etc/hosts".into();
    assert!(!worktree_pattern_points_elsewhere(&right));
    assert!(run_tool_request(&right).unwrap().is_ok());
}
