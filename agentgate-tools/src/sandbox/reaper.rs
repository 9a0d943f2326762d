//! No escaped survivors: the command runs as the child of a tiny init
//! process (pid 1) of its own PID namespace. When the init exits, the
//! kernel kills every process left in the namespace — including ones that
//! called `setsid` or double-forked out of the process group — so nothing
//! outlives the call.
//!
//! This is the fork path (`PreparedCommand::apply`, and `spawn` where the
//! clone path does not apply; `clone_launch` starts the same init without
//! a copy of the agent). Three processes, all forks of the agent running
//! only system calls:
//!
//! ```text
//! watcher   the process the agent spawned (its pid is the call's process
//!   │       group); ignores the ending signals, waits for init and exits
//!   │       the same way, so the agent sees the command's exit code
//!   └─ init pid 1 of the new namespace; dies with the watcher (parent
//!        │  death signal), forwards SIGTERM/SIGINT/SIGHUP to everything in
//!        │  the namespace, reaps orphans, exits when the command exits
//!        └─ command  (execs the shell)
//! ```
//!
//! On timeout the bash tool sends SIGTERM to the group: the command gets
//! it directly, anything that left the group gets it through init; after
//! the grace SIGKILL ends the watcher and init, and with init the
//! namespace.

use std::io;

use libc::pid_t;

use super::sys::{self, Disposition, ENDING_SIGNALS, Fork};

/// Forks the namespace's init and, inside it, the command. Must run in the
/// forked child right after `unshare(CLONE_NEWPID)`. Returns only in the
/// command's process; the watcher and init never return.
pub(super) fn fork_init_and_command() -> io::Result<()> {
    // Ignore the ending signals before forking, so a SIGTERM cannot end
    // the watcher in the instant before init has its parent death signal.
    for signal in ENDING_SIGNALS {
        sys::set_signal(signal, Disposition::Ignore);
    }
    match sys::fork()? {
        Fork::Parent(init) => watch(init),
        Fork::Child => {}
    }
    // pid 1 of the new namespace: if the watcher is killed (SIGKILL after
    // the grace, or with the agent), the namespace goes with it.
    sys::set_parent_death_signal(libc::SIGKILL)?;
    match sys::fork()? {
        Fork::Parent(command) => init(command),
        Fork::Child => {}
    }
    // The command: default signal handling, as any shell expects.
    for signal in ENDING_SIGNALS {
        sys::set_signal(signal, Disposition::Default);
    }
    Ok(())
}

/// The watcher: holds no descriptor (so pipes close when the command's
/// side closes them and the spawn sees the exec), waits for init and
/// mirrors its end.
fn watch(init: pid_t) -> ! {
    sys::close_from(0);
    match sys::wait(init) {
        Ok((_, status)) => sys::exit_like(status),
        Err(_) => sys::exit(127),
    }
}

/// The namespace's init: forwards the ending signals to the namespace,
/// reaps every orphan, and exits as the command did once it has.
fn init(command: pid_t) -> ! {
    sys::close_from(0);
    for signal in ENDING_SIGNALS {
        sys::set_signal(signal, Disposition::ForwardToNamespace);
    }
    loop {
        match sys::wait(-1) {
            Ok((pid, status)) if pid == command => {
                // pid 1 cannot raise a signal on itself: 128 + signal, as
                // shells report it.
                if libc::WIFSIGNALED(status) {
                    sys::exit(128 + libc::WTERMSIG(status));
                }
                sys::exit_like(status)
            }
            Ok(_) => {}
            Err(_) => sys::exit(127),
        }
    }
}
