//! `agent run --auto` with small `sandbox.limits`: a fork bomb and a
//! memory bomb the model runs end their call in seconds, the model is
//! told which limit and which key, and the run goes on to its answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use super::run_cli::{
    Sandbox, bodies, local_provider, openai_answer, openai_call, openai_server, text,
};

/// Whether this machine gives each call a cgroup leaf (so that reaching
/// a ceiling is seen and ends the call).
fn cgroup_leaf() -> bool {
    let sandbox = agentgate_tools::Sandbox::new(agentgate_tools::SandboxPolicy::default());
    matches!(&sandbox.status().limits, agentgate_tools::Guard::Enforced { by } if by.contains("cgroup"))
}

async fn bomb_run(name: &str, command: &str) -> (String, String, Duration) {
    let sandbox = Sandbox::new(name);
    let server = openai_server(
        openai_call(
            "bash",
            &serde_json::json!({"command": command, "description": "a bomb"}),
        ),
        openai_answer("Stopped."),
    )
    .await;
    local_provider(
        &sandbox,
        &server,
        r#", "sandbox": {"limits": {"processes": 32, "memory": "64MiB"}}"#,
    );
    let started = Instant::now();
    // The project's `sandbox` key counts once its user trusts it.
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());
    let out = sandbox.agent(&["run", "--auto", "run it"], &[]).await;
    let elapsed = started.elapsed();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2, "{stderr}");
    (bodies[1].to_string(), text(&out.stdout), elapsed)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_fork_bomb_ends_with_the_process_limits_message() {
    if !cgroup_leaf() {
        eprintln!("skipped: no cgroup leaf for the call ceilings on this machine");
        return;
    }
    let (result, stdout, elapsed) =
        bomb_run("fork-bomb", "bomb() { bomb | bomb & }; bomb; sleep 30").await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(result.contains("process limit (32 processes"), "{result}");
    assert!(result.contains("sandbox.limits.processes"), "{result}");
    assert!(stdout.contains("Stopped."), "{stdout}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_memory_bomb_ends_with_the_memory_limits_message() {
    if !cgroup_leaf() {
        eprintln!("skipped: no cgroup leaf for the call ceilings on this machine");
        return;
    }
    let (result, stdout, elapsed) = bomb_run(
        "memory-bomb",
        "x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done",
    )
    .await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(result.contains("memory limit (64 MiB)"), "{result}");
    assert!(result.contains("sandbox.limits.memory"), "{result}");
    assert!(stdout.contains("Stopped."), "{stdout}");
}

#[tokio::test]
async fn an_invalid_limit_names_its_key() {
    let sandbox = Sandbox::new("bad-limit");
    sandbox.config(r#"{"sandbox": {"limits": {"memory": "lots"}}}"#);
    assert!(sandbox.agent(&["trust"], &[]).await.status.success());
    let out = sandbox.agent(&["run", "--auto", "hello"], &[]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("sandbox.limits.memory"), "{stderr}");
}
