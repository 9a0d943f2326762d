//! Conformance cases of the bash tool: kind `bash_scan` and the
//! `tool_request` cases whose tool is `bash` (§8). Included by
//! `tests/conformance.rs` and by `tests/bash_vectors.rs`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use agentgate_tools::bash_scan::{self, BashScan};
use serde_json::Value;

/// Runs `case` if it is a bash case: `None` for cases of other kinds or
/// tools, else whether our result matches (deviations allowed only through
/// the named predicates below).
pub fn run_bash_case(case: &Value) -> Option<Result<(), String>> {
    match case["kind"].as_str()? {
        "bash_scan" => Some(bash_scan_case(case)),
        "tool_request" if case["tool"].as_str() == Some("bash") => Some(tool_request_case(case)),
        _ => None,
    }
}

/// The named deviation predicate under which a bash case passes, if our
/// answer differs from opencode's for it (`None` when it matches exactly or
/// is not a bash case), so the harness can count it as a deviation.
pub fn bash_case_deviation(case: &Value) -> Option<&'static str> {
    let (command, expected) = match case["kind"].as_str()? {
        "bash_scan" => (case["command"].as_str()?, vec![case["expect"].clone()]),
        "tool_request" if case["tool"].as_str() == Some("bash") => (
            case["args"]["command"].as_str()?,
            case["expect_requests"].as_array()?.clone(),
        ),
        _ => return None,
    };
    let scan = agentgate_tools::bash_scan::scan(command).ok()?;
    let differs = expected.iter().any(|want| {
        let patterns = strings(&want["patterns"]);
        let always = strings(&want["always"]);
        (patterns != scan.patterns || always != scan.always)
            && want["permission"].as_str().is_none_or(|p| p == "bash")
    });
    if !differs {
        None
    } else if deviation_shell_c(command) {
        Some("deviation_shell_c")
    } else if deviation_syntax_error(&scan) {
        Some("deviation_syntax_error")
    } else if deviation_seen_through(&scan) {
        Some("deviation_seen_through")
    } else {
        None
    }
}

/// The one-sentence reason printed for each deviation
/// [`bash_case_deviation`] names (docs/deviations.md, "agentgate-tools: bash").
pub fn bash_deviation_reason(name: &str) -> &'static str {
    match name {
        "deviation_shell_c" => {
            "the script of `bash -c`/`sh -c` (and eval, heredocs fed to a shell) is parsed too, so its commands add patterns after opencode's `bash *`"
        }
        "deviation_syntax_error" => {
            "a command line with a syntax error also asks for its whole text"
        }
        "deviation_seen_through" => {
            "each command is also asked for as bash runs it (quotes removed, assignments dropped, program base name, wrapped commands), after opencode's patterns"
        }
        _ => "see docs/deviations.md",
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Deviation (DESIGN §5, docs/deviations.md "agentgate-tools: bash"): the
/// script of `bash -c` / `sh -c` is parsed too, so its commands add
/// patterns after the outer command's. opencode asks only for `bash *`.
fn deviation_shell_c(command: &str) -> bool {
    let tokens: Vec<&str> = command.split_whitespace().collect();
    bash_scan::shell_c_script(&tokens).is_some()
}

/// Deviation (docs/deviations.md "agentgate-tools: bash"): a command line with
/// a syntax error also asks for its whole text.
fn deviation_syntax_error(scan: &BashScan) -> bool {
    scan.syntax_error
}

/// Deviation (docs/deviations.md "agentgate-tools: bash"): a command whose
/// words as bash runs them (quotes removed, assignments dropped, program
/// base name, wrapped commands) differ from its text adds those forms as
/// patterns after opencode's.
fn deviation_seen_through(scan: &BashScan) -> bool {
    scan.seen_through
}

/// Whether `expected` appears in `actual` in the same relative order.
fn is_subsequence(expected: &[String], actual: &[String]) -> bool {
    let mut rest = actual.iter();
    expected.iter().all(|e| rest.any(|a| a == e))
}

fn compare(
    what: &str,
    command: &str,
    scan: &BashScan,
    expected: &[String],
    actual: &[String],
) -> Result<(), String> {
    if expected == actual {
        return Ok(());
    }
    if (deviation_shell_c(command) || deviation_syntax_error(scan) || deviation_seen_through(scan))
        && is_subsequence(expected, actual)
    {
        return Ok(());
    }
    Err(format!(
        "{what} of {command:?}: expected {expected:?}, got {actual:?}"
    ))
}

fn bash_scan_case(case: &Value) -> Result<(), String> {
    let command = case["command"].as_str().ok_or("case without command")?;
    let scan = agentgate_tools::bash_scan::scan(command).map_err(|e| e.to_string())?;
    compare(
        "patterns",
        command,
        &scan,
        &strings(&case["expect"]["patterns"]),
        &scan.patterns,
    )?;
    compare(
        "always",
        command,
        &scan,
        &strings(&case["expect"]["always"]),
        &scan.always,
    )
}

fn tool_request_case(case: &Value) -> Result<(), String> {
    let command = case["args"]["command"]
        .as_str()
        .ok_or("case without args.command")?;
    let directory = Path::new(
        case["instance"]["directory"]
            .as_str()
            .ok_or("no directory")?,
    );
    let worktree = Path::new(case["instance"]["worktree"].as_str().ok_or("no worktree")?);
    let workdir = case["args"]["workdir"].as_str().map(Path::new);
    let scan = agentgate_tools::bash_scan::scan(command).map_err(|e| e.to_string())?;
    let planned = agentgate_tools::bash_scan::plan_requests(command, workdir, directory, worktree)
        .map_err(|e| e.to_string())?;
    let expected = case["expect_requests"]
        .as_array()
        .ok_or("case without expect_requests")?;
    if planned.len() != expected.len() {
        return Err(format!(
            "{command:?}: expected {} requests, got {planned:?}",
            expected.len()
        ));
    }
    for (want, got) in expected.iter().zip(&planned) {
        if want["permission"].as_str() != Some(got.permission.as_str()) {
            return Err(format!(
                "{command:?}: expected permission {}, got {}",
                want["permission"], got.permission
            ));
        }
        compare(
            "patterns",
            command,
            &scan,
            &strings(&want["patterns"]),
            &got.patterns,
        )?;
        compare(
            "always",
            command,
            &scan,
            &strings(&want["always"]),
            &got.always,
        )?;
        if let Some(metadata) = want.get("metadata")
            && metadata != &got.metadata
        {
            return Err(format!(
                "{command:?}: expected metadata {metadata}, got {}",
                got.metadata
            ));
        }
    }
    Ok(())
}
