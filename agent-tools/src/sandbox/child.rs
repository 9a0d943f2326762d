//! What runs in the child between fork and exec: its own session, the
//! namespaces, the reaper, `no_new_privs` and the Landlock ruleset — all
//! prepared by the parent, applied here with system calls only, so the
//! agent process itself is never restricted.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::namespaces::Namespaces;
use super::{reaper, sys};

/// Everything the child does before exec, prepared before spawning.
#[derive(Debug)]
pub(super) struct ChildPlan {
    /// The namespaces to enter (PID, network, user).
    pub(super) namespaces: Namespaces,
    /// Set `no_new_privs` (always when the file system is restricted).
    pub(super) no_new_privs: bool,
    /// The Landlock ruleset to enforce, created in the parent.
    pub(super) landlock: Option<OwnedFd>,
}

impl ChildPlan {
    /// Runs in the forked child. Async-signal-safe: system calls on data
    /// prepared before the fork, no allocation.
    fn enter(&self) -> io::Result<()> {
        sys::setsid()?;
        self.namespaces.enter()?;
        if self.namespaces.pid() {
            reaper::fork_init_and_command()?;
        }
        if self.no_new_privs {
            sys::set_no_new_privs()?;
        }
        if let Some(ruleset) = &self.landlock {
            // The descriptor is close-on-exec: the shell never sees it.
            sys::landlock_restrict_self(ruleset.as_raw_fd())?;
        }
        Ok(())
    }

    /// Makes `command` run this plan between fork and exec.
    pub(super) fn install(self, command: &mut std::process::Command) {
        sys::register_pre_exec(command, move || self.enter());
    }
}
