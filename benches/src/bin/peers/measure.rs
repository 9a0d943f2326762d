//! Running one peer process and measuring it: wall time, the CPU time of
//! its whole process tree and its peak RSS, with the mock's record of the
//! requests it made.

// wait4, getrusage, prctl and kill have no safe std equivalent.
#![allow(unsafe_code)]

use agentgate_benches::{MockModel, RunRecord, Script};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one run of a peer cost and did.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// User plus system CPU time of the process and every descendant.
    pub cpu: Duration,
    /// Peak resident set size of the process (or its largest waited-for
    /// descendant), in KiB.
    pub max_rss_kib: u64,
    /// `None` when the process was killed at the timeout, else its exit
    /// status (a signal is 128 + its number).
    pub exit: Option<i32>,
    /// The requests the mock saw.
    pub record: RunRecord,
}

/// User plus system CPU time of every child waited for so far.
pub fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Makes this process the reaper of its orphaned descendants, so what a
/// peer leaves behind (a daemonised helper) is waited for here and its CPU
/// time counted in [`Measurement::cpu`].
pub fn become_subreaper() {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// Waits for every remaining child (orphans reparented here), killing
/// them after `grace`.
pub fn reap_orphans(grace: Duration) {
    let deadline = Instant::now() + grace;
    let mut killed = false;
    loop {
        let mut status = 0;
        // SAFETY: waitpid on any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            continue;
        }
        if pid < 0 {
            return; // ECHILD: none left.
        }
        if Instant::now() >= deadline && !killed {
            kill_remaining_children();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// SIGKILL to each process whose parent is this one (the orphans adopted
/// as subreaper); found through /proc.
fn kill_remaining_children() {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The fields after the command name's closing parenthesis: state, ppid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid == Some(me.as_str()) {
            // SAFETY: kill of a process this harness adopted.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Runs `command` (stdin closed, in its own process group) against
/// `mock` with `script`, sampling its CPU at each request, and kills its
/// group at `timeout`.
pub fn measure(
    mut command: Command,
    mock: &MockModel,
    script: Script,
    timeout: Duration,
) -> std::io::Result<Measurement> {
    command.stdin(Stdio::null()).process_group(0);
    let before = children_cpu();
    mock.begin(script, None);
    let started = Instant::now();
    let child = command.spawn()?;
    let pid = child.id();
    mock.sample(pid);
    let ended = wait_or_kill(pid, timeout);
    drop(child);
    // What the peer left running in its group goes too.
    kill_group(pid);
    reap_orphans(Duration::from_secs(2));
    let record = mock.finish();
    Ok(Measurement {
        wall: ended.at.saturating_duration_since(started),
        cpu: children_cpu().saturating_sub(before),
        max_rss_kib: ended.max_rss_kib,
        exit: ended.exit,
        record,
    })
}

/// SIGKILL to the process group of `pid`, one this harness created
/// (`process_group(0)` at its spawn).
pub fn kill_group(pid: u32) {
    // SAFETY: kill with a negative pid signals that group only.
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
}

/// How a waited-for child ended.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    /// `None` when it was killed at the timeout, else its exit status (a
    /// signal is 128 + its number).
    pub exit: Option<i32>,
    /// When the wait returned.
    pub at: Instant,
    /// Its peak resident set size (or its largest waited-for
    /// descendant's), in KiB.
    pub max_rss_kib: u64,
}

/// Waits for child `pid` (spawned in a process group of its own, whose
/// whole group is killed at `timeout`); its exit and peak RSS.
pub fn wait_or_kill(pid: u32, timeout: Duration) -> Ended {
    let (done, until) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if until.recv_timeout(timeout).is_err() {
            // SAFETY: SIGKILL to the process group this harness created.
            unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
            true
        } else {
            false
        }
    });
    let mut status = 0;
    // SAFETY: wait4 writes the status and the rusage of our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers; `pid` is our child, not waited for elsewhere
    // (its std Child is dropped without waiting).
    let waited = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    let at = Instant::now();
    let _ = done.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let exit = if waited < 0 || timed_out {
        None
    } else if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        Some(128 + libc::WTERMSIG(status))
    };
    Ended {
        exit,
        at,
        max_rss_kib: usage.ru_maxrss.max(0) as u64,
    }
}
