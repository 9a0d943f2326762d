//! The bash scanner's limits and its `bash -c` recognition at their edges
//! (each test kills a mutant that survived the rest of the suite).

#![allow(clippy::unwrap_used)]

use agent_tools::bash_scan::{
    MAX_COMMAND_BYTES, MAX_PATTERN_BYTES, ScanError, scan, shell_c_script,
};

#[test]
fn a_line_of_exactly_the_longest_length_is_scanned() {
    let prefix = "echo ";
    let line = format!("{prefix}{}", "a".repeat(MAX_COMMAND_BYTES - prefix.len()));
    assert_eq!(line.len(), MAX_COMMAND_BYTES);
    let scanned = scan(&line).unwrap();
    assert_eq!(scanned.patterns, std::slice::from_ref(&line));
    let longer = format!("{line}a");
    assert!(matches!(scan(&longer), Err(ScanError::TooLong(n)) if n == MAX_COMMAND_BYTES + 1));
}

/// Far below the pattern budget: hundreds of commands whose patterns add up
/// to tens of kilobytes are all listed.
#[test]
fn long_legitimate_lines_are_within_the_pattern_budget() {
    let commands: Vec<String> = (0..400).map(|i| format!("echo {i:0>100}")).collect();
    let line = commands.join(" && ");
    assert!(line.len() < MAX_COMMAND_BYTES);
    let total: usize = commands.iter().map(String::len).sum();
    assert!(total > 40_000 && total < MAX_PATTERN_BYTES);
    let scanned = scan(&line).unwrap();
    assert_eq!(scanned.patterns, commands);
}

/// Only an option that holds `c` and starts with `-` makes the next word a
/// command string; `-` alone ends bash's options (the next word is a
/// script file), and a flag with a non-letter is not an option we know.
#[test]
fn shell_c_needs_a_dash_option_holding_c() {
    assert_eq!(shell_c_script(&["bash", "-c", "ls"]), Some(2));
    assert_eq!(shell_c_script(&["bash", "-lc", "ls"]), Some(2));
    assert_eq!(shell_c_script(&["bash", "-x", "script.sh"]), None);
    assert_eq!(shell_c_script(&["bash", "+x", "-c", "ls"]), Some(3));
    assert_eq!(shell_c_script(&["bash", "+c", "ls"]), None);
    assert_eq!(shell_c_script(&["bash", "-", "-c", "ls"]), None);
    assert_eq!(shell_c_script(&["bash", "-1", "-c", "ls"]), None);
}

/// Substitutions nested deeper than [`MAX_NESTING`] are refused; as deep
/// as the limit is scanned.
#[test]
fn nesting_past_the_limit_is_refused() {
    use agent_tools::bash_scan::MAX_NESTING;
    let nest = |open: &str, close: &str, depth: usize| {
        format!("{}ls{}", open.repeat(depth), close.repeat(depth))
    };
    for (open, close) in [("echo $(", ")"), ("echo \"$(", ")\"")] {
        let deep = nest(open, close, MAX_NESTING + 8);
        assert!(
            matches!(scan(&deep), Err(ScanError::TooComplex)),
            "{open}…{close} nested {} deep was scanned",
            MAX_NESTING + 8
        );
    }
    let ok = nest("echo $(", ")", MAX_NESTING - 1);
    assert!(scan(&ok).unwrap().patterns.contains(&"ls".to_string()));
}
