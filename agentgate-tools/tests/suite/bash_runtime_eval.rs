//! bash evaluates text it gets at run time as code in arithmetic and in
//! variable names (`X='a[$(rm -f x)]'; (( X ))`), and `xargs` / `find
//! -exec` complete commands with their input. The bypass corpus's
//! "run-time evaluation" cases are each run by the real bash here, to show
//! the attack deletes `x` when nothing stops it; the scan either shows the
//! hidden `rm -f x` as a pattern (so `rm *` denies it) or asks
//! `bash_opaque`, the corpus test checks each request, and `bypass_effects`
//! that a rejected ask leaves `x` in place. The corpus's controls of the same
//! family stay clear of `bash_opaque`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use agentgate_tools::bash_scan::scan;
use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bypass-corpus.json");

fn cases(prefix: &str) -> Vec<(String, String)> {
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(CORPUS).unwrap()).unwrap();
    corpus["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["name"].as_str().unwrap().starts_with(prefix))
        .map(|case| {
            (
                case["name"].as_str().unwrap().to_string(),
                case["args"]["command"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A scratch folder holding the victim file `x`.
fn scratch(n: usize) -> PathBuf {
    let dir = agentgate_testing::scratch_dir(&format!("agentgate-tools-runtime-eval-{n}"));
    std::fs::write(dir.join("x"), "victim\n").unwrap();
    std::fs::write(dir.join("README.md"), "readme\n").unwrap();
    dir
}

fn run_bash(line: &str, dir: &PathBuf) -> std::process::Output {
    Command::new("bash")
        .args(["--norc", "--noprofile", "-c", line])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn each_attack_runs_in_bash_and_is_opaque_to_the_scan() {
    let attacks = cases("run-time evaluation: ");
    assert!(
        attacks.len() >= 25,
        "only {} attacks in the corpus",
        attacks.len()
    );
    let mut failures = Vec::new();
    for (n, (name, line)) in attacks.iter().enumerate() {
        let dir = scratch(n);
        let output = run_bash(line, &dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if dir.join("x").exists() && stderr.contains("command not found") {
            // A program this machine lacks (`rbash` outside Debian): the
            // scan is still checked below.
            println!("{name}: not run, {}", stderr.trim());
        } else if dir.join("x").exists() {
            failures.push(format!(
                "{name}: bash did not run the hidden command ({line:?}): {stderr}"
            ));
        }
        let _ = std::fs::remove_dir_all(&dir);
        // Caught: the hidden command is a pattern of its own, or the line
        // is opaque.
        let scanned = scan(line).unwrap();
        let seen = scanned.patterns.iter().any(|pattern| pattern == "rm -f x");
        if scanned.opaque.is_empty() && !seen {
            failures.push(format!(
                "{name}: the scan sees neither `rm -f x` nor anything opaque in {line:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn controls_are_not_opaque_and_change_nothing() {
    let controls = cases("control: run-time evaluation, ");
    assert!(controls.len() >= 5);
    for (n, (name, line)) in controls.iter().enumerate() {
        let scanned = scan(line).unwrap();
        assert!(scanned.opaque.is_empty(), "{name}: {:?}", scanned.opaque);
        let dir = scratch(1000 + n);
        run_bash(line, &dir);
        assert!(dir.join("x").exists(), "{name} removed x");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Each reason names what bash evaluates and why it cannot be seen.
#[test]
fn reasons_say_what_is_evaluated() {
    let scanned = scan("X='a[$(rm -f x)]'; (( X ))").unwrap();
    assert_eq!(
        scanned.opaque,
        [
            "bash evaluates `(( X ))` as arithmetic or as a variable name, and `X` holds text only known at run time"
        ]
    );
    let scanned = scan("BASH_ENV=/dev/stdin PS4='$(rm -f x)' PS4= bash -c true").unwrap();
    assert_eq!(
        scanned.opaque,
        [
            "the line sets `BASH_ENV`, whose value bash runs as code (a startup file, a prompt or a function)",
            "the line sets `PS4`, whose value bash runs as code (a startup file, a prompt or a function)"
        ]
    );
    let scanned = scan("echo rm -f x | xargs env").unwrap();
    assert_eq!(
        scanned.opaque,
        [
            "`xargs` completes `env` with its input, and then: the program `<xargs input>` is only known when the command runs"
        ]
    );
}

/// The program table's reasons name the program and what it does: an
/// option the table does not list, a builtin that evaluates text through
/// an option, a variable bash runs as code set by a builtin.
#[test]
fn program_table_reasons_name_the_program_and_option() {
    assert_eq!(
        scan("nice --frobnicate 5 rm -f x").unwrap().opaque,
        ["`nice` with the option `--frobnicate`, which the scan does not model"]
    );
    assert_eq!(
        scan("read -Q x").unwrap().opaque,
        ["the builtin `read` with the option `-Q`, which the scan does not model"]
    );
    assert_eq!(
        scan("mapfile -C f -c 1 a < README.md").unwrap().opaque,
        ["`mapfile` evaluates its callback with each line read appended"]
    );
    assert_eq!(
        scan("compgen -W '$(date)' a").unwrap().opaque,
        ["`compgen` expands the text `$(date)` again when it runs"]
    );
    assert_eq!(
        scan("read PS4 < README.md").unwrap().opaque,
        [
            "the line sets `PS4`, whose value bash runs as code (a startup file, a prompt or a function)"
        ]
    );
    assert_eq!(
        scan("declare -n r=\"$n\"").unwrap().opaque,
        ["`r` is a nameref to a variable whose name is only known at run time"]
    );
    assert_eq!(
        scan("ssh host true").unwrap().opaque,
        ["`ssh` runs a command on another host (and `-o ProxyCommand`/`LocalCommand` here)"]
    );
}
