//! Writes the benchmark fixtures (rule sets, queries and the expected
//! actions) as JSON, for the JavaScript baseline.
//!
//! `cargo run -p agentgate-benches --bin export-fixtures -- [FILE]` (default:
//! standard output).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let json = match serde_json::to_string(&agentgate_benches::fixtures()) {
        Ok(json) => json,
        Err(e) => {
            eprintln!("export-fixtures: cannot encode the fixtures: {e}");
            return ExitCode::FAILURE;
        }
    };
    let written = match std::env::args().nth(1) {
        Some(path) => std::fs::write(&path, json).map_err(|e| format!("{path}: {e}")),
        None => std::io::stdout()
            .lock()
            .write_all(json.as_bytes())
            .map_err(|e| format!("stdout: {e}")),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("export-fixtures: cannot write the fixtures: {e}");
            ExitCode::FAILURE
        }
    }
}
