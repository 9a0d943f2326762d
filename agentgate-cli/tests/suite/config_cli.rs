//! `agent run` on configuration trees as opencode reads them: an empty
//! config file is an empty layer (a public project ships a 0-byte
//! `.opencode/opencode.json`), and a wrong config lists every error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::run_cli::{Sandbox, text};

#[tokio::test]
async fn run_works_in_a_project_with_a_zero_byte_dot_opencode_config() {
    let sandbox = Sandbox::new("empty-config");
    std::fs::create_dir_all(sandbox.project.join(".git")).unwrap();
    std::fs::create_dir_all(sandbox.project.join(".opencode")).unwrap();
    std::fs::write(sandbox.project.join(".opencode/opencode.json"), "").unwrap();
    let out = sandbox
        .agent(&["run", "--auto", "What is this project?"], &[])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{:?} {stderr}", out.status.code());
    assert!(stdout.contains("A test project."), "{stdout}");
}

#[tokio::test]
async fn a_wrong_config_exits_2_listing_every_error() {
    let sandbox = Sandbox::new("wrong-config");
    sandbox.config(r#"{"model": 5, "agent": {"build": {"temperature": "hot"}}}"#);
    let out = sandbox.agent(&["run", "hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("opencode.json: model: expected a string"),
        "{stderr}"
    );
    assert!(
        stderr.contains("opencode.json: agent.build.temperature: expected a number"),
        "{stderr}"
    );
}
