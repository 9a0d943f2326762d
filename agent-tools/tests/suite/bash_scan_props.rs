//! The bash scanner never panics, whatever the input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use proptest::prelude::*;

proptest! {
    #[test]
    fn scan_never_panics(command in "\\PC{0,80}") {
        let scan = agent_tools::scan(&command).unwrap();
        let _ = scan.external_directories(Path::new("/p"), Path::new("/p"), Path::new("/"));
    }

    #[test]
    fn shell_like_input_never_panics(
        command in "[a-z $'\"`()|&;<>{}\\[\\]*?~/\\\\=\n-]{0,60}"
    ) {
        let scan = agent_tools::scan(&command).unwrap();
        prop_assert!(scan.patterns.iter().all(|p| !p.is_empty()));
        let _ = agent_tools::plan_requests(&command, None, Path::new("/p"), Path::new("/p")).unwrap();
    }

    #[test]
    fn nested_shell_c_never_panics(inner in "[a-z \"'-]{0,30}", depth in 0usize..8) {
        let mut command = inner;
        for _ in 0..depth {
            command = format!("bash -c '{command}'");
        }
        agent_tools::scan(&command).unwrap();
    }
}

#[test]
fn strict_vectors_have_no_syntax_error() {
    for command in [
        "cat <<EOF\nhi\nEOF",
        "for f in *.ts; do echo $f; done",
        "(cd sub && make build)",
    ] {
        assert!(
            !agent_tools::scan(command).unwrap().syntax_error,
            "{command:?}"
        );
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    // `((` would start an arithmetic command, so subshells are spaced.
    for (open, close) in [
        ("( ", " )"),
        ("echo $(", ")"),
        ("{ ", "; }"),
        ("bash -c '", "'"),
    ] {
        let command = format!("{}ls{}", open.repeat(1000), close.repeat(1000));
        // Either scanned, or refused as too deeply nested: never a crash,
        // never a silent pass.
        match agent_tools::scan(&command) {
            Ok(scan) => assert!(!scan.patterns.is_empty(), "{open}"),
            Err(error) => assert_eq!(error, agent_tools::ScanError::TooComplex, "{open}"),
        }
    }
}

#[test]
fn nested_substitutions_are_refused_quickly() {
    // 80 KB of nested `$(` used to take 15 s and 400 MB (quadratic
    // patterns); it is now refused at the nesting cap.
    let command = format!("{}ls{}", "echo $(".repeat(11_000), ")".repeat(11_000));
    assert!(command.len() > 80_000);
    let start = std::time::Instant::now();
    let result = agent_tools::scan(&command);
    let took = start.elapsed();
    assert_eq!(result, Err(agent_tools::ScanError::TooComplex));
    println!("nested $( x11000 ({} bytes): {took:?}", command.len());
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}
