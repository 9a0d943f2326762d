//! Criterion benchmark of the sandbox's overhead per command: spawning and
//! waiting for `true`, without the sandbox and under it, in the same run.
//!
//! - `plain`: what the bash tool did before the sandbox — a filtered-free
//!   environment, its own process group, spawn, wait.
//! - `workspace_write`: `Sandbox::prepare` (environment filter, Landlock
//!   ruleset built in the parent) + apply + spawn + wait: own session, PID
//!   namespace under the reaper's init, `no_new_privs`, Landlock.
//! - `workspace_write_network_off`: the same plus a network namespace.
//! - `danger_full_access`: no Landlock, no network namespace; as root
//!   still the PID namespace and reaper (as a non-root user: nothing but
//!   the environment filter and the session).
//! - `prepare_only`: `Sandbox::prepare` alone (no process).

#![allow(missing_docs)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agent_tools::{CallScope, Sandbox, SandboxMode, SandboxPolicy};
use criterion::{Criterion, criterion_group, criterion_main};

fn true_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("true");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn scope() -> CallScope {
    let dir = std::env::temp_dir().join("agent-bench-sandbox");
    let _ = std::fs::create_dir_all(&dir);
    CallScope {
        session_id: "ses_bench".to_string(),
        directory: dir.clone(),
        worktree: dir.clone(),
        cwd: dir,
        tool_output: None::<PathBuf>,
        approved: Vec::new(),
    }
}

async fn run_plain() {
    let mut command = true_command();
    #[cfg(unix)]
    command.process_group(0);
    let status = command.status().await;
    assert!(status.is_ok_and(|s| s.success()));
}

async fn run_sandboxed(sandbox: &Sandbox, scope: &CallScope) {
    let Ok(mut prepared) = sandbox.prepare(scope) else {
        panic!("the sandbox could not prepare the command");
    };
    let mut command = true_command();
    prepared.apply(&mut command);
    let status = command.status().await;
    assert!(status.is_ok_and(|s| s.success()));
}

fn spawn(c: &mut Criterion) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        panic!("no tokio runtime");
    };
    let scope = scope();
    let write = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(true));
    let offline = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false));
    let danger = Sandbox::new(SandboxPolicy::new(SandboxMode::DangerFullAccess));
    eprintln!("{}", danger.status().summary());
    eprintln!("{}", write.status().summary());
    eprintln!("{}", offline.status().summary());

    let mut group = c.benchmark_group("spawn_true");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("plain", |b| b.iter(|| runtime.block_on(run_plain())));
    group.bench_function("danger_full_access", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(&danger, &scope)))
    });
    group.bench_function("workspace_write", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(&write, &scope)))
    });
    group.bench_function("workspace_write_network_off", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(&offline, &scope)))
    });
    group.bench_function("prepare_only", |b| {
        b.iter(|| write.prepare(&scope).map(drop))
    });
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);
