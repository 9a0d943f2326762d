//! Features only add: a program that depends on the facade alone
//! (`tests/fixtures/feature_matrix`) is checked with no features, each
//! feature alone, the defaults and all of them. `agentgate::CodingAgent`,
//! its builder, its error, `Workspace` and the `AgentFactory` seam exist
//! under every set; a method a feature adds is used under it only.
//!
//! The checks run offline against the workspace's Cargo.lock, in the target
//! directory the README project check uses (`facade-check`), so
//! dependencies are checked once for the feature sets they share.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every feature of the facade, each checked alone.
const FEATURES: &[&str] = &[
    "tools",
    "mcp",
    "sandbox",
    "providers",
    "demo",
    "acp",
    "server",
    "remote",
    "store",
    "sqlite",
    "postgres",
    "otel",
    "test-util",
];

fn facade_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `<target>/<profile>/deps/<test binary>` → `<target>`.
fn workspace_target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary sits in <target>/<profile>/deps")
        .to_path_buf()
}

/// The fixture written out beside the workspace's Cargo.lock.
fn fixture(into: &Path) {
    let source = facade_dir().join("tests/fixtures/feature_matrix");
    let _ = std::fs::remove_dir_all(into);
    std::fs::create_dir_all(into.join("src")).unwrap();
    let manifest = std::fs::read_to_string(source.join("Cargo.toml.in"))
        .unwrap()
        .replace("@FACADE@", &facade_dir().display().to_string());
    std::fs::write(into.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(source.join("src/main.rs"), into.join("src/main.rs")).unwrap();
    let lock = facade_dir().parent().unwrap().join("Cargo.lock");
    std::fs::copy(lock, into.join("Cargo.lock")).unwrap();
}

/// `cargo check` of the fixture with `args`; the error output when it fails.
fn check(project: &Path, args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .args(args)
        .env(
            "CARGO_TARGET_DIR",
            workspace_target_dir().join("facade-check"),
        )
        // CI runs the test build under clippy-driver; the child is plain
        // cargo check of an outside project.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .output()
        .expect("run cargo");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn the_facade_means_the_same_under_every_feature_set() {
    let project =
        std::env::temp_dir().join(format!("agentgate-feature-matrix-{}", std::process::id()));
    fixture(&project);
    let mut sets: Vec<(String, Vec<&str>)> = vec![
        ("no features".into(), vec!["--no-default-features"]),
        ("the defaults".into(), vec![]),
        ("all features".into(), vec!["--all-features"]),
    ];
    for feature in FEATURES {
        sets.push((
            format!("only {feature}"),
            vec!["--no-default-features", "--features", feature],
        ));
    }
    let failures: Vec<String> = sets
        .iter()
        .filter_map(|(name, args)| {
            check(&project, args)
                .err()
                .map(|error| format!("== {name}\n{error}"))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&project);
    assert!(
        failures.is_empty(),
        "the facade's program does not build under every feature set:\n{}",
        failures.join("\n")
    );
}
