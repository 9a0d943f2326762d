//! What runs in the child between fork and exec: its own session, the
//! namespaces, the reaper, the mounts, `no_new_privs`, the Landlock
//! rulesets, the capabilities and the seccomp filter — all prepared by the
//! parent, applied here with system calls only, so the agent process itself
//! is never restricted.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::kernel::KernelPlan;
use super::namespaces::Namespaces;
use super::{reaper, sys};

/// Everything the child does before exec, prepared before spawning.
#[derive(Debug)]
pub(super) struct ChildPlan {
    /// The namespaces to enter (PID, network, mount, user).
    namespaces: Namespaces,
    /// Set `no_new_privs` (always when the file system is restricted).
    no_new_privs: bool,
    /// The Landlock ruleset to enforce, created in the parent.
    landlock: Option<OwnedFd>,
    /// The kernel layer: mounts, abstract-socket scope, capabilities,
    /// seccomp.
    kernel: KernelPlan,
}

impl ChildPlan {
    /// A plan; a mount namespace joins `namespaces` when `kernel` mounts.
    pub(super) fn new(
        namespaces: Namespaces,
        no_new_privs: bool,
        landlock: Option<OwnedFd>,
        kernel: KernelPlan,
    ) -> Self {
        let namespaces = if kernel.mounts() && namespaces.pid() {
            namespaces.with_mount_namespace()
        } else {
            namespaces
        };
        ChildPlan {
            namespaces,
            no_new_privs,
            landlock,
            kernel,
        }
    }

    /// Runs in the forked child. Async-signal-safe: system calls on data
    /// prepared before the fork, no allocation. The order matters: mounts
    /// need the privileges (and, for `/proc`, the PID namespace) that the
    /// later steps take away, and the seccomp filter comes last.
    fn enter(&self) -> io::Result<()> {
        sys::setsid()?;
        self.namespaces.enter()?;
        if self.namespaces.pid() {
            reaper::fork_init_and_command()?;
            if let Some(mounts) = &self.kernel.mounts {
                mounts.enter()?;
                // The ruleset was built from the host's `/proc`; the
                // command reads its own, mounted just now.
                if let Some(ruleset) = &self.landlock {
                    sys::landlock_allow_beneath(ruleset.as_raw_fd(), c"/proc", sys::LANDLOCK_READ)?;
                }
            }
        }
        if self.no_new_privs {
            sys::set_no_new_privs()?;
        }
        if let Some(ruleset) = &self.landlock {
            // The descriptor is close-on-exec: the shell never sees it.
            sys::landlock_restrict_self(ruleset.as_raw_fd())?;
        }
        self.kernel.enter_last()
    }

    /// Makes `command` run this plan between fork and exec.
    pub(super) fn install(self, command: &mut std::process::Command) {
        sys::register_pre_exec(command, move || self.enter());
    }
}
