//! System calls that never touch `errno`, for the processes that share the
//! agent's memory (`clone_launch`): the namespace's init outlives the
//! spawn and runs beside the agent's threads with the thread pointer of
//! the thread that cloned it, so libc's wrappers would write that thread's
//! `errno` at any time. These return `-errno` instead, as the kernel does.
//!
//! x86-64 and AArch64 only; elsewhere the sandbox spawns by fork.

use libc::{c_int, c_long, pid_t};

/// One system call with up to four arguments; the kernel's return value
/// (`-errno` on failure).
#[inline(always)]
fn syscall4(number: c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
    let ret: isize;
    // SAFETY: the callers below pass system call numbers and arguments that
    // are valid for them (integers, or pointers to memory they own for the
    // call). The kernel clobbers only the registers declared here.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: as above, for AArch64's calling convention.
    #[cfg(target_arch = "aarch64")]
    #[allow(unsafe_code)]
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") number,
            inlateout("x0") a as isize => ret,
            in("x1") b,
            in("x2") c,
            in("x3") d,
            options(nostack),
        );
    }
    ret
}

/// `wait4(pid, &status, 0, NULL)`: the pid reaped and its raw status, or
/// the errno.
pub(super) fn wait(pid: pid_t) -> Result<(pid_t, c_int), c_int> {
    let mut status: c_int = 0;
    let ret = syscall4(
        libc::SYS_wait4,
        pid as isize as usize,
        &mut status as *mut c_int as usize,
        0,
        0,
    );
    if ret < 0 {
        Err(-ret as c_int)
    } else {
        Ok((ret as pid_t, status))
    }
}

/// `kill(pid, signal)`, ignoring the outcome.
pub(super) fn kill(pid: pid_t, signal: c_int) {
    let _ = syscall4(libc::SYS_kill, pid as isize as usize, signal as usize, 0, 0);
}

/// Closes every descriptor from `first` to `last` (`close_range`, Linux
/// 5.9).
pub(super) fn close_range(first: u32, last: u32) -> Result<(), c_int> {
    if first > last {
        return Ok(());
    }
    let ret = syscall4(libc::SYS_close_range, first as usize, last as usize, 0, 0);
    if ret < 0 { Err(-ret as c_int) } else { Ok(()) }
}

/// `close(fd)`, ignoring the outcome.
pub(super) fn close(fd: c_int) {
    let _ = syscall4(libc::SYS_close, fd as usize, 0, 0, 0);
}

/// `write(fd, bytes)`, once; how many bytes were written, or the errno.
pub(super) fn write(fd: c_int, bytes: &[u8]) -> Result<usize, c_int> {
    let ret = syscall4(
        libc::SYS_write,
        fd as usize,
        bytes.as_ptr() as usize,
        bytes.len(),
        0,
    );
    if ret < 0 {
        Err(-ret as c_int)
    } else {
        Ok(ret as usize)
    }
}

/// The kernel's `struct sigaction` (x86-64 and AArch64 share its layout).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// Whether `signal` has a handler (neither the default action nor
/// ignored). False when the kernel does not answer.
pub(super) fn is_caught(signal: c_int) -> bool {
    let mut old = KernelSigaction {
        handler: 0,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    let ret = syscall4(
        libc::SYS_rt_sigaction,
        signal as usize,
        0,
        &mut old as *mut KernelSigaction as usize,
        8,
    );
    ret == 0 && old.handler != libc::SIG_DFL && old.handler != libc::SIG_IGN
}

/// Puts `signal` back to its default action (no handler, so no restorer
/// is needed), ignoring the outcome.
pub(super) fn set_default(signal: c_int) {
    let action = KernelSigaction {
        handler: libc::SIG_DFL,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    let _ = syscall4(
        libc::SYS_rt_sigaction,
        signal as usize,
        &action as *const KernelSigaction as usize,
        0,
        8,
    );
}

/// Ends the calling process (`exit_group`) with `code`.
pub(super) fn exit(code: c_int) -> ! {
    loop {
        let _ = syscall4(libc::SYS_exit_group, code as usize, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_come_back_as_negative_errno_and_leave_errno_alone() {
        // SAFETY: writing this thread's own errno.
        #[allow(unsafe_code)]
        unsafe {
            *libc::__errno_location() = 1234;
        }
        // No such child.
        assert_eq!(wait(i32::MAX), Err(libc::ECHILD));
        // SAFETY: reading this thread's own errno.
        #[allow(unsafe_code)]
        let errno = unsafe { *libc::__errno_location() };
        assert_eq!(errno, 1234);
    }

    #[test]
    fn signal_dispositions_are_read_and_reset() {
        // SIGURG: default action; nothing else in the tests touches it.
        assert!(!is_caught(libc::SIGURG));
        extern "C" fn nothing(_: c_int) {}
        // SAFETY: installs a handler that does nothing, then resets it.
        #[allow(unsafe_code)]
        unsafe {
            libc::signal(
                libc::SIGURG,
                nothing as extern "C" fn(c_int) as libc::sighandler_t,
            );
        }
        assert!(is_caught(libc::SIGURG));
        set_default(libc::SIGURG);
        assert!(!is_caught(libc::SIGURG));
    }

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by `wait` under test
    fn wait_reaps_a_child_with_its_status() {
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .unwrap();
        let (pid, status) = wait(child.id() as pid_t).unwrap();
        assert_eq!(pid, child.id() as pid_t);
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 7);
    }
}
