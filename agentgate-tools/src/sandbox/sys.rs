//! Thin safe wrappers around the raw system calls the sandbox makes in a
//! forked child. The agent is multi-threaded, so between `fork` and `exec`
//! only async-signal-safe code may run: every function here is one or a few
//! system calls on memory the caller prepared before spawning — no
//! allocation, no locks, no panics. Each `unsafe` block is local and says
//! why it is sound.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;

use libc::{c_int, pid_t};

/// `-1` → the last OS error; anything else passes.
fn check(ret: c_int) -> io::Result<c_int> {
    if ret < 0 {
        // `last_os_error` builds an error from errno without allocating.
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The effective user id.
pub(super) fn geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// The effective group id.
pub(super) fn getegid() -> u32 {
    // SAFETY: getegid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::getegid()
    }
}

/// Whether the caller may write `path` (`access(W_OK)`, by its real ids).
/// Not for the forked child: it allocates the C string.
pub(super) fn can_write(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    let ret = unsafe { libc::access(path.as_ptr(), libc::W_OK) };
    ret == 0
}

/// Starts a new session (and process group) led by the caller.
pub(super) fn setsid() -> io::Result<()> {
    // SAFETY: setsid takes no pointers; it only changes the caller's session.
    #[allow(unsafe_code)]
    check(unsafe { libc::setsid() }).map(drop)
}

/// Moves the caller into new namespaces (`CLONE_NEW*` flags).
pub(super) fn unshare(flags: c_int) -> io::Result<()> {
    // SAFETY: unshare takes no pointers. It is called in a single-threaded
    // forked child, as CLONE_NEWUSER requires.
    #[allow(unsafe_code)]
    check(unsafe { libc::unshare(flags) }).map(drop)
}

/// Writes `data` to the existing file `path` in one `write`.
pub(super) fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) })?;
    // SAFETY: `data` is valid for `data.len()` bytes; `fd` is ours.
    #[allow(unsafe_code)]
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let result = if written < 0 {
        Err(io::Error::last_os_error())
    } else if written as usize != data.len() {
        Err(io::Error::from_raw_os_error(libc::EIO))
    } else {
        Ok(())
    };
    close(fd);
    result
}

/// Writes `data` to the open descriptor `fd` in one `write`.
pub(super) fn write_fd(fd: RawFd, data: &[u8]) -> io::Result<()> {
    // SAFETY: `data` is valid for `data.len()` bytes; a wrong `fd` only
    // yields EBADF.
    #[allow(unsafe_code)]
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    if written < 0 {
        Err(io::Error::last_os_error())
    } else if written as usize != data.len() {
        Err(io::Error::from_raw_os_error(libc::EIO))
    } else {
        Ok(())
    }
}

/// The resource limits the sandbox sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rlimit {
    /// `RLIMIT_NPROC`: processes and threads of the real user (in its
    /// user namespace).
    Processes,
    /// `RLIMIT_DATA`: each process's data segment and private writable
    /// mappings.
    Data,
}

/// Sets both the soft and the hard limit of `which` to `value`.
pub(super) fn set_rlimit(which: Rlimit, value: u64) -> io::Result<()> {
    let resource = match which {
        Rlimit::Processes => libc::RLIMIT_NPROC,
        Rlimit::Data => libc::RLIMIT_DATA,
    };
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: `limit` is a valid rlimit for the call, which only reads it.
    #[allow(unsafe_code)]
    check(unsafe { libc::setrlimit(resource, &limit) }).map(drop)
}

/// Closes a descriptor, ignoring errors.
pub(super) fn close(fd: RawFd) {
    // SAFETY: closing a descriptor we own; a wrong one only yields EBADF.
    #[allow(unsafe_code)]
    unsafe {
        libc::close(fd);
    }
}

/// Closes every descriptor from `first` up.
pub(super) fn close_from(first: RawFd) {
    let first = first.max(0) as libc::c_uint;
    // SAFETY: close_range takes no pointers and only closes descriptors.
    #[allow(unsafe_code)]
    let done = unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) } == 0;
    if !done {
        // Kernels before 5.9: close the usual range one by one.
        for fd in first..4096 {
            close(fd as RawFd);
        }
    }
}

/// Marks every descriptor from 3 up close-on-exec, so none the host left
/// inheritable reaches the command (Linux 5.11; before, the descriptors'
/// own flags decide, as for any child std starts).
pub(super) fn close_on_exec_from_3() {
    // SAFETY: close_range takes integers only; with CLOSE_RANGE_CLOEXEC it
    // closes nothing, it only sets the flag.
    #[allow(unsafe_code)]
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
    }
}

/// Which side of a fork the caller is on.
pub(super) enum Fork {
    /// The parent, with the child's pid.
    Parent(pid_t),
    /// The child.
    Child,
}

/// `fork(2)`.
pub(super) fn fork() -> io::Result<Fork> {
    // SAFETY: called from a single-threaded forked child (inside pre_exec),
    // so the new process gets a consistent copy of the only thread; both
    // sides go on with async-signal-safe code only.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    match pid {
        p if p < 0 => Err(io::Error::last_os_error()),
        0 => Ok(Fork::Child),
        p => Ok(Fork::Parent(p)),
    }
}

/// Asks the kernel to send `signal` to the caller when its parent dies.
pub(super) fn set_parent_death_signal(signal: c_int) -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes an integer argument only.
    #[allow(unsafe_code)]
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) })
        .map(drop)
}

/// Sets `no_new_privs`: exec can no longer grant privileges (setuid bits,
/// file capabilities), which Landlock requires of an unprivileged caller.
pub(super) fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    #[allow(unsafe_code)]
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }).map(drop)
}

/// Enforces the Landlock ruleset `fd` on the caller (and what it execs).
pub(super) fn landlock_restrict_self(fd: RawFd) -> io::Result<()> {
    // SAFETY: landlock_restrict_self(2) takes a descriptor and flags, no
    // pointers; `fd` is a ruleset descriptor created before the fork.
    #[allow(unsafe_code)]
    let ret = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Landlock's read rights (execute, read file, read directory), as
/// `landlock_add_rule(2)` takes them.
pub(super) const LANDLOCK_READ: u64 = (1 << 0) | (1 << 2) | (1 << 3);

/// Adds to the (not yet enforced) Landlock ruleset `ruleset` a rule giving
/// `access` beneath `path`: for a file system mounted in the child after
/// the ruleset was built (the command's own `/proc`).
pub(super) fn landlock_allow_beneath(ruleset: RawFd, path: &CStr, access: u64) -> io::Result<()> {
    /// `struct landlock_path_beneath_attr` (packed in the kernel's ABI).
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    // SAFETY: `path` is a NUL-terminated string; the flags take no pointers.
    #[allow(unsafe_code)]
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) })?;
    let attr = PathBeneath {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: LANDLOCK_RULE_PATH_BENEATH (1) takes a pointer to a valid
    // `landlock_path_beneath_attr`, which `attr` is for the call.
    #[allow(unsafe_code)]
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1 as libc::c_int,
            &attr as *const PathBeneath,
            0 as libc::c_uint,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: `fd` was opened above and is not used after this.
    #[allow(unsafe_code)]
    unsafe {
        libc::close(fd);
    }
    if ret < 0 { Err(error) } else { Ok(()) }
}

/// `waitpid(pid, 0)`, retried on EINTR; returns the pid and raw status.
pub(super) fn wait(pid: pid_t) -> io::Result<(pid_t, c_int)> {
    loop {
        let mut status: c_int = 0;
        // SAFETY: `status` is a valid out pointer for the call.
        #[allow(unsafe_code)]
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret >= 0 {
            return Ok((ret, status));
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(error);
        }
    }
}

/// Ends the caller at once with `code`, running no destructors or atexit
/// handlers (which would touch the parent's copied state).
pub(super) fn exit(code: c_int) -> ! {
    // SAFETY: _exit is async-signal-safe and never returns.
    #[allow(unsafe_code)]
    unsafe {
        libc::_exit(code)
    }
}

/// Ends the caller the way a child with wait status `status` ended: the
/// same exit code, or the same signal (128 + signal where it cannot be
/// raised, as in a PID namespace's init).
pub(super) fn exit_like(status: c_int) -> ! {
    if libc::WIFEXITED(status) {
        exit(libc::WEXITSTATUS(status));
    }
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        set_signal(signal, Disposition::Default);
        // SAFETY: kill takes integers only; the signal is sent to ourselves.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(libc::getpid(), signal);
        }
        exit(128 + signal);
    }
    exit(1)
}

/// What a process does with a signal.
#[derive(Clone, Copy)]
pub(super) enum Disposition {
    /// The default action.
    Default,
    /// Ignored.
    Ignore,
    /// Sent on to every other process of the caller's PID namespace (for
    /// the namespace's init).
    ForwardToNamespace,
}

/// The signals the bash tool and terminals use to end a command.
pub(super) const ENDING_SIGNALS: [c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Signal handler of [`Disposition::ForwardToNamespace`]: `kill(-1, sig)`
/// from a PID namespace's init reaches every other process in it.
extern "C" fn forward_to_namespace(signal: c_int) {
    // Where the init shares the agent's memory (`clone_launch`) it must not
    // touch errno, which is the spawning thread's: the raw call leaves it
    // alone.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    super::raw_syscall::kill(-1, signal);
    // SAFETY: only async-signal-safe calls (errno access and kill); errno is
    // restored so the interrupted waitpid sees its own error.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[allow(unsafe_code)]
    unsafe {
        let errno = *libc::__errno_location();
        libc::kill(-1, signal);
        *libc::__errno_location() = errno;
    }
}

/// Sets how the caller handles `signal`.
pub(super) fn set_signal(signal: c_int, disposition: Disposition) {
    let handler = match disposition {
        Disposition::Default => libc::SIG_DFL,
        Disposition::Ignore => libc::SIG_IGN,
        Disposition::ForwardToNamespace => {
            forward_to_namespace as extern "C" fn(c_int) as libc::sighandler_t
        }
    };
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
    // the handler is SIG_DFL, SIG_IGN or an async-signal-safe extern "C"
    // function; both pointers are valid for the call.
    #[allow(unsafe_code)]
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// Brings the loopback interface of the caller's (new) network namespace
/// up, so programs inside can talk to themselves on 127.0.0.1.
pub(super) fn bring_up_loopback() -> io::Result<()> {
    // SAFETY: socket takes integers only.
    #[allow(unsafe_code)]
    let fd =
        check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: a zeroed ifreq is valid; the name "lo" fits IFNAMSIZ with its
    // NUL; `request` outlives both ioctls, which read and write only it.
    #[allow(unsafe_code)]
    let result = unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        request.ifr_name[0] = b'l' as libc::c_char;
        request.ifr_name[1] = b'o' as libc::c_char;
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut request) < 0 {
            Err(io::Error::last_os_error())
        } else {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            if libc::ioctl(fd, libc::SIOCSIFFLAGS, &request) < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        }
    };
    close(fd);
    result
}

/// `mount(2)`. `None` arguments are passed as null pointers.
pub(super) fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: every pointer is null or a valid NUL-terminated string that
    // outlives the call; `data` is a string, as tmpfs and proc expect.
    #[allow(unsafe_code)]
    let ret = unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    };
    check(ret).map(drop)
}

/// Creates the directory `path` (an existing one is fine).
pub(super) fn mkdir(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    let ret = unsafe { libc::mkdir(path.as_ptr(), mode) };
    match check(ret) {
        Err(error) if error.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        other => other.map(drop),
    }
}

/// Creates the empty regular file `path` with `mode` (an existing one is
/// fine), e.g. as a mount point.
pub(super) fn create_file(path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string; the mode is passed
    // as the variadic argument O_CREAT requires.
    #[allow(unsafe_code)]
    let fd = check(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            mode as libc::c_uint,
        )
    })?;
    close(fd);
    Ok(())
}

/// Creates the symbolic link `path` pointing to `target`.
pub(super) fn symlink(target: &CStr, path: &CStr) -> io::Result<()> {
    // SAFETY: both are valid NUL-terminated strings for the call.
    #[allow(unsafe_code)]
    check(unsafe { libc::symlink(target.as_ptr(), path.as_ptr()) }).map(drop)
}

/// Enters the directory `path`.
pub(super) fn chdir(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    check(unsafe { libc::chdir(path.as_ptr()) }).map(drop)
}

/// Removes the file `path`.
pub(super) fn unlink(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    check(unsafe { libc::unlink(path.as_ptr()) }).map(drop)
}

/// Removes the empty directory `path`.
pub(super) fn rmdir(path: &CStr) -> io::Result<()> {
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    #[allow(unsafe_code)]
    check(unsafe { libc::rmdir(path.as_ptr()) }).map(drop)
}

/// `prctl` with integer arguments only.
fn prctl(option: c_int, arg2: libc::c_ulong, arg3: libc::c_ulong) -> io::Result<c_int> {
    // SAFETY: the options used here (capability bounding set, ambient set,
    // securebits) take integer arguments only.
    #[allow(unsafe_code)]
    check(unsafe { libc::prctl(option, arg2, arg3, 0, 0) })
}

/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`, `SECBIT_KEEP_CAPS_LOCKED`,
/// `SECBIT_NO_CAP_AMBIENT_RAISE` and their locks (not `SECBIT_KEEP_CAPS`):
/// uid 0 gains nothing at exec, and nothing can turn that off again.
const SECUREBITS_NO_REGAIN: libc::c_ulong = 0b1110_1111;

/// The header of `capget`/`capset` (`_LINUX_CAPABILITY_VERSION_3`).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

/// One half of the 64 capability bits of `capset`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Leaves the caller without any capability, for good: with
/// `bounding_set` (the caller holds `CAP_SETPCAP`: root, or in its own
/// user namespace) the securebits that let uid 0 regain capabilities at
/// exec are locked off and every capability leaves the bounding set; in
/// any case the ambient set is cleared and the effective, permitted and
/// inheritable sets are emptied.
pub(super) fn drop_capabilities(bounding_set: bool) -> io::Result<()> {
    if bounding_set {
        prctl(libc::PR_SET_SECUREBITS, SECUREBITS_NO_REGAIN, 0)?;
        for capability in 0..64 {
            match prctl(libc::PR_CAPBSET_DROP, capability, 0) {
                Ok(_) => {}
                // Past the last capability this kernel knows.
                Err(error) if error.raw_os_error() == Some(libc::EINVAL) && capability > 0 => {
                    break;
                }
                Err(error) => return Err(error),
            }
        }
    }
    prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
    )?;
    let mut header = CapHeader {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a version-3 header and two data structs, both
    // valid for the call.
    #[allow(unsafe_code)]
    let ret = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Installs the seccomp filter `program` on the caller (and what it execs).
/// `no_new_privs` must be set. The program was built and checked (length,
/// instructions) before the fork.
pub(super) fn seccomp_install(program: &[libc::sock_filter]) -> io::Result<()> {
    let Ok(len) = u16::try_from(program.len()) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let fprog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `len` instructions that outlive the call;
    // the kernel copies them and never writes through the pointer.
    #[allow(unsafe_code)]
    check(unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
            0,
            0,
        )
    })
    .map(drop)
}

/// Registers `setup` to run in the child between fork and exec.
///
/// `setup` must be async-signal-safe: it runs in a copy of a multi-threaded
/// process where another thread may have held the allocator's or any other
/// lock at the fork. Every caller (the child plan and the namespace probe) passes a closure that only
/// makes system calls (see `sys`) on data it owns.
pub(super) fn register_pre_exec(
    command: &mut std::process::Command,
    setup: impl FnMut() -> io::Result<()> + Send + Sync + 'static,
) {
    // SAFETY: `pre_exec` is unsafe because the closure runs after fork in a
    // multi-threaded program. The closures registered here (ChildPlan::enter
    // and the namespace probe) only call the async-signal-safe wrappers of
    // `sys` on memory prepared before the fork: no allocation, no locks, no
    // access to state other threads could be changing.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(setup);
    }
}
