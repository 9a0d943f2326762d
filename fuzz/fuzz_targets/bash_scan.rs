//! `agentgate_tools::bash_scan::scan` (the bash command scanner, tree-sitter-bash) on
//! arbitrary text: never panics; and `plan_requests` on the same command.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let _ = agentgate_tools::bash_scan::scan(command);
    let _ = agentgate_tools::bash_scan::plan_requests(
        command,
        None,
        Path::new("/work/project"),
        Path::new("/work/project"),
    );
});
