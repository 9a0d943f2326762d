//! The bash scanner's limits and its `bash -c` recognition at their edges
//! (each test kills a mutant that survived the rest of the suite).

#![allow(clippy::unwrap_used)]

use agentgate_tools::bash_scan::{
    MAX_COMMAND_BYTES, MAX_PARSE_WORK, MAX_PATTERN_BYTES, ScanError, scan, shell_c_script,
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
    use agentgate_tools::bash_scan::MAX_NESTING;
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

/// The parse has a work budget ([`MAX_PARSE_WORK`]), counted in parser
/// operations, not time: a thousand commands in one line are scanned, a
/// line of tens of thousands is refused (and so asks nothing and runs
/// nothing), the same on every machine; heredocs and quoted scripts as long
/// as the length limit cost almost nothing and stay within it.
#[test]
fn the_parse_has_a_work_budget_not_a_clock() {
    let thousand: Vec<String> = (0..1000).map(|i| format!("echo {i}")).collect();
    let line = thousand.join(" && ");
    let scanned = scan(&line).unwrap();
    assert_eq!(scanned.patterns.len(), 1000, "{:?}", &scanned.patterns[..3]);

    for unit in [
        "a;",
        "ab ",
        "\"$a\"",
        "find . -exec ",
        "xargs -I{} ",
        "if true; then ",
    ] {
        let dense = unit.repeat(MAX_COMMAND_BYTES / unit.len());
        assert!(
            matches!(scan(&dense), Err(ScanError::TooComplex)),
            "128 KiB of {unit:?} was scanned within {MAX_PARSE_WORK} units"
        );
    }
    // The budget is shared with nested scripts: a few dense `bash -c` do
    // not get a fresh budget each.
    let nested = format!("bash -c '{}'", "a;".repeat(MAX_COMMAND_BYTES / 2 - 16));
    assert!(matches!(scan(&nested), Err(ScanError::TooComplex)));
    let half: String = "a;".repeat(1_800);
    let twice = format!("bash -c '{half}' && bash -c '{half}'");
    assert!(scan(&half).is_ok());
    assert!(
        matches!(scan(&twice), Err(ScanError::TooComplex)),
        "each script got its own budget"
    );

    let body = "fn main() { println!(\"{}\", 1 + 2); } // $HOME `x` \\ \n".repeat(2000);
    for quote in ["'EOF'", "EOF"] {
        let heredoc = format!("cat > src/main.rs <<{quote}\n{body}EOF\n");
        assert!(heredoc.len() > 100_000 && heredoc.len() < MAX_COMMAND_BYTES);
        let scanned = scan(&heredoc).unwrap();
        assert!(scanned.patterns.iter().any(|p| p == "cat"), "{quote}");
    }
    let script = format!("python3 -c '{}'", "print(\"hello\", 1 + 2)\n".repeat(5000));
    assert!(script.len() > 100_000);
    assert!(scan(&script).is_ok());
}

/// Tokens tree-sitter leaves side by side with no blank between them are
/// one bash word: the scan's pattern is what bash runs, so a deny rule on
/// the arguments still matches (`rm ""\-rf x` runs `rm -rf x`).
#[test]
fn adjacent_tokens_are_one_word() {
    for (line, runs) in [
        ("m1 \"\"\\;", "m1 ;"),
        ("rm \"\"\\-rf x", "rm -rf x"),
        ("rm ''\\-rf x", "rm -rf x"),
        ("m1 a\"\"\\;", "m1 a;"),
        ("m1 \\;\"\"", "m1 ;"),
        ("m1 \"\"\\a b", "m1 a b"),
    ] {
        let scanned = scan(line).unwrap();
        assert!(
            scanned.patterns.iter().any(|p| p == runs),
            "{line:?}: {:?}",
            scanned.patterns
        );
    }
}
