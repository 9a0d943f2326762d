//! [`ProcessGroup`]: the process group a local server runs in.
//!
//! A local server is started as the leader of a process group of its own,
//! so a terminal's Ctrl-C (sent to the terminal's foreground group) reaches
//! the agent only and the agent decides what stops. The flip side is that
//! nothing stops the group for us: this guard kills the whole group (the
//! server and whatever it started, e.g. `npx` and its `node`) when it is
//! dropped, which happens when the connection ends, when the server fails
//! to start or its start is abandoned, and when the manager shuts down.

use std::sync::atomic::{AtomicI32, Ordering};

/// Kills its process group when dropped.
#[derive(Debug, Default)]
pub(crate) struct ProcessGroup {
    /// The group id (the leader's pid); 0 once killed, or for none.
    pgid: AtomicI32,
}

impl ProcessGroup {
    /// The group led by the process `leader` (a freshly spawned child that
    /// was made a group leader); `None` guards nothing.
    pub(crate) fn led_by(leader: Option<u32>) -> Self {
        let pgid = leader
            .and_then(|pid| i32::try_from(pid).ok())
            .filter(|pid| *pid > 0)
            .unwrap_or(0);
        ProcessGroup {
            pgid: AtomicI32::new(pgid),
        }
    }

    /// Kills every process of the group (SIGKILL, as `kill_on_drop` did
    /// for the server alone). A group that is gone already is fine.
    pub(crate) fn kill(&self) {
        let pgid = self.pgid.swap(0, Ordering::SeqCst);
        #[cfg(unix)]
        if pgid > 0 {
            // The group id stays reserved while any member lives, so this
            // reaches only the server's processes.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        #[cfg(not(unix))]
        let _ = pgid;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
