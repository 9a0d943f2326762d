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
//! - `workspace_write_no_limits` (ratio only): `workspace_write` without
//!   the call ceilings (`sandbox.limits` unlimited: no cgroup leaf), the
//!   cost of a call before them.
//! - `workspace_write_masked`: `workspace-write` with two denied paths
//!   inside the project (a directory and a file), which the kernel layer
//!   masks with mounts.
//!
//! - `clone_vs_fork` (after the ratios): the same `workspace-write`
//!   command started by fork (`apply`) and by clone
//!   (`PreparedCommand::spawn`) in turn, while the process writes a heap
//!   of 0, 64 and 256 MiB: CPU per command of the spawning thread and the
//!   command's process tree, and their ratio.
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

use agentgate_tools::{CallScope, Ceiling, Sandbox, SandboxLimits, SandboxMode, SandboxPolicy};
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
    // The same as `write` without the call ceilings (no cgroup leaf, no
    // resource limits): what a call cost before `sandbox.limits`.
    let unlimited = Sandbox::new(
        SandboxPolicy::new(SandboxMode::WorkspaceWrite)
            .with_network(true)
            .with_limits(
                SandboxLimits::default()
                    .with_processes(Ceiling::Unlimited)
                    .with_memory(Ceiling::Unlimited),
            ),
    );
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
            ("workspace_write_no_limits", &unlimited),
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
    clone_vs_fork(&runtime, &scope, &write);
}

/// CPU of this thread plus that of the waited-for children, in ns.
fn cpu_now() -> u64 {
    let thread = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    // SAFETY: getrusage writes the struct passed, nothing else.
    #[allow(unsafe_code)]
    let children = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        (us(usage.ru_utime) + us(usage.ru_stime)) * 1_000
    };
    thread + children
}

fn cpu_clock(clock: libc::clockid_t) -> u64 {
    // SAFETY: clock_gettime writes the timespec passed, nothing else.
    #[allow(unsafe_code)]
    unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(clock, &mut t);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }
}

/// One command through the sandbox while this process works: spawn
/// `sleep 0.01`, write one byte in every page of `heap` (as the agent's
/// threads go on streaming and storing while a command runs), wait. By
/// fork (`apply` on a tokio command) or by clone (`PreparedCommand::spawn`).
async fn one_command(sandbox: &Sandbox, scope: &CallScope, heap: &mut [u8], by_clone: bool) {
    let Ok(mut prepared) = sandbox.prepare(scope) else {
        panic!("the sandbox could not prepare the command");
    };
    let status = if by_clone {
        let Ok(mut child) = prepared.spawn(std::path::Path::new("sleep"), ["0.01"], &scope.cwd)
        else {
            panic!("spawn failed");
        };
        touch(heap);
        child.wait().await
    } else {
        let mut command = tokio::process::Command::new("sleep");
        command
            .arg("0.01")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        prepared.apply(&mut command);
        let Ok(mut child) = command.spawn() else {
            panic!("spawn failed");
        };
        touch(heap);
        child.wait().await
    };
    assert!(status.is_ok_and(|s| s.success()));
}

fn touch(heap: &mut [u8]) {
    for page in heap.chunks_mut(4096) {
        page[0] = page[0].wrapping_add(1);
    }
    std::hint::black_box(heap);
}

/// The fork path against the clone path, interleaved, for an agent with
/// an empty, a 64 MiB and a 256 MiB heap: CPU of the spawning thread and
/// of the command's whole process tree per command (median of the rounds).
fn clone_vs_fork(runtime: &tokio::runtime::Runtime, scope: &CallScope, sandbox: &Sandbox) {
    const ROUNDS: usize = 60;
    for mib in [0usize, 64, 256] {
        let mut heap = vec![1u8; mib << 20];
        let mut fork = Vec::with_capacity(ROUNDS);
        let mut clone = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            for (by_clone, samples) in [(false, &mut fork), (true, &mut clone)] {
                let before = cpu_now();
                runtime.block_on(one_command(sandbox, scope, &mut heap, by_clone));
                samples.push(Duration::from_nanos(cpu_now().saturating_sub(before)));
            }
        }
        let (fork, clone) = (median(fork), median(clone));
        eprintln!(
            "clone_vs_fork: heap {mib} MiB: fork path {:.3} ms CPU, clone path {:.3} ms CPU = fork / clone {:.2} x",
            fork.as_secs_f64() * 1e3,
            clone.as_secs_f64() * 1e3,
            fork.as_secs_f64() / clone.as_secs_f64().max(1e-9),
        );
    }
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
