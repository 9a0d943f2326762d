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
//! - `prepare_only_masked`: the same for the masked policy below.
//! - `workspace_write_masked`: `workspace-write` with two denied paths
//!   inside the project (a directory and a file), which the kernel layer
//!   masks with mounts.
//!
//! - `workspace_write_project` (ratio only): a project with `.git` and
//!   `opencode.json`, which are bind-mounted read-only, and the protected
//!   names it lacks, checked before and after the command.
//!
//! Since the kernel layer, `workspace_write` also includes the
//! mount namespace with its private `/proc` and `/dev`, the dropped
//! capabilities, the abstract-socket scope and the seccomp filter. After
//! the criterion groups, `ratio`: the sandboxed variants and
//! `danger_full_access` spawned in turn (interleaved, so load changes hit
//! both alike), with the medians, their ratio and difference.

#![allow(missing_docs)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentgate_tools::{CallScope, Sandbox, SandboxMode, SandboxPolicy};
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

    // `SANDBOX_BENCH_RATIO_ONLY=1`: the interleaved ratios alone (a quick
    // comparison of two builds, or a run under strace).
    let ratio_only = std::env::var_os("SANDBOX_BENCH_RATIO_ONLY").is_some();
    let masked = masked_sandbox(&scope);
    if !ratio_only {
        criterion_groups(c, &runtime, &scope, [&danger, &write, &offline, &masked]);
    }
    ratio(
        &runtime,
        &scope,
        &danger,
        &[
            ("workspace_write", &write),
            ("workspace_write_network_off", &offline),
            ("workspace_write_masked", &masked),
        ],
    );
    // A project as agents meet it: `.git` and `opencode.json` exist (each
    // a read-only bind mount), `.opencode` and `opencode.jsonc` do not
    // (noted before the command and compared after it).
    let project = project_scope();
    let write_project =
        Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(true));
    ratio(
        &runtime,
        &project,
        &danger,
        &[("workspace_write_project", &write_project)],
    );
}

/// The criterion groups: each variant alone, and `prepare` without a
/// process.
fn criterion_groups(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    scope: &CallScope,
    [danger, write, offline, masked]: [&Sandbox; 4],
) {
    let mut group = c.benchmark_group("spawn_true");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("plain", |b| b.iter(|| runtime.block_on(run_plain())));
    group.bench_function("danger_full_access", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(danger, scope)))
    });
    group.bench_function("workspace_write", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(write, scope)))
    });
    group.bench_function("workspace_write_network_off", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(offline, scope)))
    });
    group.bench_function("prepare_only", |b| {
        b.iter(|| write.prepare(scope).map(drop))
    });
    group.bench_function("prepare_only_masked", |b| {
        b.iter(|| masked.prepare(scope).map(drop))
    });
    group.bench_function("workspace_write_masked", |b| {
        b.iter(|| runtime.block_on(run_sandboxed(masked, scope)))
    });
    group.finish();
}

/// A scope whose project has `.git` and `opencode.json`.
fn project_scope() -> CallScope {
    let dir = std::env::temp_dir().join("agent-bench-sandbox-project");
    let _ = std::fs::create_dir_all(dir.join(".git/hooks"));
    let _ = std::fs::write(dir.join(".git/config"), "[core]\n");
    let _ = std::fs::write(dir.join("opencode.json"), "{}\n");
    CallScope {
        directory: dir.clone(),
        worktree: dir.clone(),
        cwd: dir,
        ..scope()
    }
}

/// `workspace-write` with a denied directory and a denied file inside the
/// project: Landlock cannot deny them, the kernel layer masks them.
fn masked_sandbox(scope: &CallScope) -> Sandbox {
    let secrets = scope.directory.join("secrets");
    let _ = std::fs::create_dir_all(&secrets);
    let netrc = scope.directory.join(".netrc");
    let _ = std::fs::write(&netrc, "");
    let sandbox = Sandbox::new(
        SandboxPolicy::new(SandboxMode::WorkspaceWrite)
            .with_deny_read(secrets)
            .with_deny_read(netrc),
    );
    eprintln!("{}", sandbox.status().summary());
    sandbox
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Each sandboxed variant against `danger_full_access`, spawned in turn.
fn ratio(
    runtime: &tokio::runtime::Runtime,
    scope: &CallScope,
    danger: &Sandbox,
    variants: &[(&str, &Sandbox)],
) {
    const ROUNDS: usize = 300;
    let time = |sandbox: &Sandbox| {
        let started = Instant::now();
        runtime.block_on(run_sandboxed(sandbox, scope));
        started.elapsed()
    };
    let mut base = Vec::with_capacity(ROUNDS);
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(ROUNDS); variants.len()];
    for _ in 0..ROUNDS {
        base.push(time(danger));
        for (i, (_, sandbox)) in variants.iter().enumerate() {
            times[i].push(time(sandbox));
        }
    }
    let base = median(base);
    eprintln!(
        "ratio (medians of {ROUNDS} interleaved rounds): danger_full_access {:.3} ms",
        base.as_secs_f64() * 1e3
    );
    for ((name, _), samples) in variants.iter().zip(times) {
        let m = median(samples);
        eprintln!(
            "ratio: {name} {:.3} ms = {:.2} x danger_full_access (+{:.3} ms)",
            m.as_secs_f64() * 1e3,
            m.as_secs_f64() / base.as_secs_f64(),
            (m.as_secs_f64() - base.as_secs_f64()) * 1e3
        );
    }
}

criterion_group!(benches, spawn);
criterion_main!(benches);
