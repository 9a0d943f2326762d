//! Helpers shared by the tool tests: scratch directories and an approver
//! that records what it is asked.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agentgate_core::ToolContext;
use agentgate_permission::{PermissionGate, PermissionRequest, Reply};
use agentgate_testing::RecordingApprover;

/// A fresh, canonical directory under the system temp dir, unique to this
/// test run (`area` and `name` make it recognisable).
pub fn temp_dir(area: &str, name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("agentgate-tools-{area}-{name}"))
}

/// An approver that records every request, then allows it once or
/// rejects it.
pub fn recorder(allow: bool) -> RecordingApprover {
    RecordingApprover::replying(if allow { Reply::Once } else { Reply::reject() })
}

/// A context for `dir` (also the worktree) whose every request reaches a
/// [`recorder`] that allows or rejects; returns the requests it saw.
pub fn recording_context(
    dir: &Path,
    allow: bool,
) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let permissions = PermissionGate::new();
    let seen = recorder(allow).install(&permissions);
    let ctx = ToolContext::new("ses_test", "msg_test", "call_test", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf());
    (ctx, seen)
}

/// A `sleep` argument no other process has (`{secs}.{digits}` seconds).
/// A sandboxed command has a private `/proc` and cannot learn its host
/// pid, so a test finds the sleeping process by this argument in its own
/// (the host's) `/proc` instead.
pub fn unique_sleep(secs: u32) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{secs}.{:07}{:04}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed) % 10_000
    )
}

/// The (host) pids of the processes with `arg` among their arguments.
pub fn pids_with_arg(arg: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
        })
        .collect()
}

/// Waits until a process with `arg` among its arguments runs (up to 20 s
/// of real time: these are real processes); its pid.
pub async fn wait_for_process_with_arg(arg: &str) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(pid) = pids_with_arg(arg).first() {
            return *pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no process with argument {arg} appeared"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Whether this process runs as root (real uid 0).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

/// The uid and gid of `nobody`.
pub const NOBODY: u32 = 65534;

/// Runs this test binary again as `nobody` with `args` (a test filter and
/// libtest flags), a clean environment of PATH plus `env`, and `home` (made
/// nobody's) as HOME, TMPDIR and working directory. `None` when nobody may
/// not run the binary (it sits in a folder closed to other users).
#[cfg(target_os = "linux")]
pub fn rerun_as_nobody(
    args: &[&str],
    env: &[(&str, String)],
    home: &Path,
) -> Option<std::process::Output> {
    std::os::unix::fs::chown(home, Some(NOBODY), Some(NOBODY)).unwrap();
    rerun(args, env, home, true)
}

/// Runs this test binary again with `args`, a clean environment of PATH
/// plus `env`, `home` as HOME, TMPDIR and working directory, and as
/// `nobody` when `as_nobody` (see [`rerun_as_nobody`]).
#[cfg(target_os = "linux")]
pub fn rerun(
    args: &[&str],
    env: &[(&str, String)],
    home: &Path,
    as_nobody: bool,
) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap();
    let mut command = std::process::Command::new(&exe);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TMPDIR", home)
        .current_dir(home);
    for (name, value) in env {
        command.env(name, value);
    }
    // SAFETY: setgroups/setgid/setuid are async-signal-safe system calls on
    // constants, run in the forked child before exec.
    #[allow(unsafe_code)]
    if as_nobody {
        unsafe {
            command.pre_exec(|| {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(NOBODY) != 0
                    || libc::setuid(NOBODY) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    match command.output() {
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            eprintln!(
                "skipped: nobody may not run this test binary ({}): {error}",
                exe.display()
            );
            None
        }
        other => Some(other.unwrap()),
    }
}
