//! What runs in the child between fork and exec: its own session, the
//! namespaces, the reaper, the mounts, `no_new_privs`, the Landlock
//! rulesets, the capabilities and the seccomp filter — all prepared by the
//! parent, applied here with system calls only, so the agent process itself
//! is never restricted.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::bounds::LimitPlan;
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
    /// The call's cgroup leaf to join and the resource limits to set.
    limits: LimitPlan,
}

impl ChildPlan {
    /// A plan; a mount namespace joins `namespaces` when `kernel` mounts.
    pub(super) fn new(
        namespaces: Namespaces,
        no_new_privs: bool,
        landlock: Option<OwnedFd>,
        kernel: KernelPlan,
        limits: LimitPlan,
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
            limits,
        }
    }

    /// Runs in the forked child. Async-signal-safe: system calls on data
    /// prepared before the fork, no allocation. The order matters: mounts
    /// need the privileges (and, for `/proc`, the PID namespace) that the
    /// later steps take away, and the seccomp filter comes last.
    fn enter(&self) -> io::Result<()> {
        self.limits.join()?;
        sys::setsid()?;
        self.namespaces.enter()?;
        if self.namespaces.pid() {
            reaper::fork_init_and_command()?;
            return self.enter_as_command();
        }
        self.restrict()
    }

    /// Whether the command can be started without a fork of the agent
    /// (`clone_launch`): it gets a PID namespace under its own init, and it
    /// loses every capability before exec. The init shares the agent's
    /// memory and keeps its capabilities, so the kernel refuses the
    /// command (and anything it starts) every ptrace-class access to it —
    /// `ptrace`, `process_vm_writev`, `/proc/1/mem` — whatever seccomp
    /// does. Without that drop the fork path runs, whose init is a copy.
    pub(super) fn can_start_by_clone(&self) -> bool {
        self.namespaces.pid() && self.kernel.drops_capabilities()
    }

    /// The `CLONE_NEW*` flags the init is cloned with.
    pub(super) fn namespace_flags(&self) -> libc::c_int {
        self.namespaces.flags()
    }

    /// The init's part when it was cloned straight into the namespaces: its
    /// own session and process group, then the maps and loopback of the
    /// new namespaces. It does **not** join the call's cgroup leaf: it
    /// shares the agent's memory, and the kernel's out-of-memory killer,
    /// choosing a victim in the leaf, kills every process sharing the
    /// victim's memory — the agent with it. Only the command joins (see
    /// [`enter_as_command`](Self::enter_as_command)). System calls only.
    pub(super) fn enter_as_init(&self) -> io::Result<()> {
        sys::setsid()?;
        self.namespaces.configure()
    }

    /// The command's part, in the process that execs it (a child of the
    /// namespace's init): it joins the call's cgroup leaf first (so all it
    /// starts is counted there; in the cloned path it is the leaf's only
    /// member until its exec gives it memory of its own, and allocates
    /// nothing before), then everything [`enter`](Self::enter) does after
    /// the reaper, in the same order. System calls only.
    pub(super) fn enter_as_command(&self) -> io::Result<()> {
        self.limits.join()?;
        if let Some(mounts) = &self.kernel.mounts {
            mounts.enter()?;
            // The ruleset was built from the host's `/proc`; the command
            // reads its own, mounted just now.
            if let Some(ruleset) = &self.landlock {
                sys::landlock_allow_beneath(ruleset.as_raw_fd(), c"/proc", sys::LANDLOCK_READ)?;
            }
        }
        self.restrict()
    }

    /// Every inherited descriptor past 0–2 closed at exec, `no_new_privs`,
    /// the file system ruleset and the rest of the kernel layer: the last
    /// steps before exec, in both ways of starting.
    fn restrict(&self) -> io::Result<()> {
        // Standard input, output and error are in place by now; nothing
        // else of the agent's descriptors passes exec.
        sys::close_on_exec_from_3();
        self.limits.set_rlimits()?;
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
