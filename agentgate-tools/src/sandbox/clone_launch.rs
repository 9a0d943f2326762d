//! Starting a sandboxed command without a copy of the agent.
//!
//! The fork path (`child`, `reaper`) forks the agent, and its watcher and
//! init are copies of the agent that never exec: the fork copies the
//! agent's page tables, and while the command runs every page the agent
//! writes is copied again, because those copies still share it. Here the
//! namespace's init and the command are clones that share the agent's
//! memory (`CLONE_VM`), each on its own stack mapped for the call, so
//! nothing is copied:
//!
//! ```text
//! agent thread ── clone(CLONE_VM | CLONE_PIDFD | CLONE_NEW*) ──▶ init
//!   (blocked until the command has    pid 1 of the new namespaces, its own
//!    exec'd or failed)                session; forwards SIGTERM/SIGINT/
//!                                     SIGHUP to the namespace, reaps, exits
//!                                     as the command did
//!                                       └─ clone(CLONE_VM | CLONE_VFORK) ─▶ command
//!                                          mounts, Landlock, capabilities,
//!                                          seccomp (the same steps as the
//!                                          fork path), then exec
//! ```
//!
//! What makes sharing memory sound:
//!
//! - the spawning thread waits, with every signal blocked, until the
//!   command has exec'd or failed: until then the children read the plan,
//!   the argument and environment strings from its memory and may write
//!   its `errno` (they share its thread pointer), and nothing else runs on
//!   that thread;
//! - both children put every signal the agent catches back to its default
//!   action before unblocking signals, so no handler of the agent ever runs
//!   in them;
//! - after the setup the init touches only its own stack, through system
//!   calls that never write `errno` (`raw_syscall`);
//! - the stacks are reused or unmapped only once the init has been reaped
//!   (or, for a child dropped unreaped, when a later reap finds it gone).
//!
//! The agent's child is the init itself, which is also the process group
//! the bash tool signals, and it exits as the command did (128 + signal
//! for a signal), as the fork path's watcher does.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use libc::{c_char, c_int, c_void, pid_t};

use super::child::ChildPlan;
use super::raw_syscall as raw;
use super::sys::{self, Disposition, ENDING_SIGNALS};

/// What to exec, as C strings prepared before cloning.
#[derive(Debug)]
pub(super) struct ExecSpec {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
}

impl ExecSpec {
    /// `program` (looked up on the command's `PATH`, then the agent's,
    /// when it has no `/`) with `args`, the environment `env` and the
    /// working directory `cwd`.
    pub(super) fn new<I, S>(
        program: &Path,
        args: I,
        env: &[(OsString, OsString)],
        cwd: &Path,
    ) -> io::Result<ExecSpec>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let resolved = resolve_program(program, env)?;
        let mut argv = vec![c_string(program.as_os_str())?];
        for arg in args {
            argv.push(c_string(arg.as_ref())?);
        }
        let envp = env
            .iter()
            .map(|(name, value)| {
                let mut pair = name.as_bytes().to_vec();
                pair.push(b'=');
                pair.extend_from_slice(value.as_bytes());
                CString::new(pair).map_err(|_| nul_error())
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(ExecSpec {
            program: c_string(resolved.as_os_str())?,
            argv,
            envp,
            cwd: c_string(cwd.as_os_str())?,
        })
    }
}

fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a program, argument, variable or directory contains a NUL byte",
    )
}

fn c_string(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| nul_error())
}

/// `program` itself when it names a path; otherwise the first executable
/// of that name on the command's `PATH` (or the agent's).
fn resolve_program(program: &Path, env: &[(OsString, OsString)]) -> io::Result<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Ok(program.to_path_buf());
    }
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} was not found on PATH", program.display()),
            )
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The two stacks of a launch, with a guard page under each: the init's
/// and the command's. Recycled for a later launch or unmapped (when
/// dropped), which the owner does only once the init has been reaped.
#[derive(Debug)]
pub(super) struct Stacks {
    base: *mut c_void,
    len: usize,
    page: usize,
}

// SAFETY: a private anonymous mapping owned by this value alone; moving it
// between threads moves nothing but the address.
#[allow(unsafe_code)]
unsafe impl Send for Stacks {}
// SAFETY: shared references only read the address and length.
#[allow(unsafe_code)]
unsafe impl Sync for Stacks {}

/// Each child's stack. The setup's deepest frames are a few kilobytes;
/// pages never touched cost nothing.
const STACK: usize = 256 * 1024;

/// Stacks of reaped launches, kept for the next ones: no map, unmap (and
/// its TLB shootdown across the agent's threads) or first-touch faults per
/// command.
static SPARE_STACKS: Mutex<Vec<Stacks>> = Mutex::new(Vec::new());

/// At most this many spare stacks are kept.
const MAX_SPARE_STACKS: usize = 8;

impl Stacks {
    /// Spare stacks if any, else a new mapping.
    fn take() -> io::Result<Stacks> {
        let spare = match SPARE_STACKS.lock() {
            Ok(mut spare) => spare.pop(),
            Err(poisoned) => poisoned.into_inner().pop(),
        };
        match spare {
            Some(stacks) => Ok(stacks),
            None => Stacks::new(),
        }
    }

    /// Gives back the stacks of an init that has been reaped (nothing runs
    /// on them any more); past the limit they are unmapped.
    pub(super) fn recycle(self) {
        let mut spare = match SPARE_STACKS.lock() {
            Ok(spare) => spare,
            Err(poisoned) => poisoned.into_inner(),
        };
        if spare.len() < MAX_SPARE_STACKS {
            spare.push(self);
        }
    }

    fn new() -> io::Result<Stacks> {
        // SAFETY: sysconf takes an integer only.
        #[allow(unsafe_code)]
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| *p > 0)
            .unwrap_or(4096);
        let len = 2 * (page + STACK);
        // SAFETY: a fresh anonymous mapping; no address is imposed.
        #[allow(unsafe_code)]
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stacks = Stacks { base, len, page };
        for guard in [0, page + STACK] {
            // SAFETY: `guard` is a page-aligned offset inside the mapping.
            #[allow(unsafe_code)]
            let ret = unsafe {
                libc::mprotect(
                    stacks.base.cast::<u8>().add(guard).cast(),
                    page,
                    libc::PROT_NONE,
                )
            };
            if ret != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(stacks)
    }

    /// The top of the init's stack (stacks grow down).
    fn init_top(&self) -> *mut c_void {
        // SAFETY: inside the mapping (its first half's end), 16-aligned.
        #[allow(unsafe_code)]
        unsafe {
            self.base.cast::<u8>().add(self.page + STACK).cast()
        }
    }

    /// The top of the command's stack: the mapping's end.
    fn command_top(&self) -> *mut c_void {
        // SAFETY: one past the mapping's last byte, the top of a stack.
        #[allow(unsafe_code)]
        unsafe {
            self.base.cast::<u8>().add(self.len).cast()
        }
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; its owner drops
        // it only when no child runs on it any more.
        #[allow(unsafe_code)]
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

/// What the children read from the spawning thread's memory while it
/// waits.
struct Shared<'a> {
    plan: &'a ChildPlan,
    program: &'a CStr,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: &'a CStr,
    stdin: c_int,
    stdout: c_int,
    stderr: c_int,
    /// The write end of the setup pipe: an 8-byte failure report, or
    /// nothing before it closes.
    report: c_int,
    command_stack: *mut c_void,
}

/// Where a launch failed, for the error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Namespaces = 1,
    StartCommand = 2,
    Stdio = 3,
    Directory = 4,
    Restrictions = 5,
    Exec = 6,
}

impl Stage {
    fn from_code(code: i32) -> Option<Stage> {
        [
            Stage::Namespaces,
            Stage::StartCommand,
            Stage::Stdio,
            Stage::Directory,
            Stage::Restrictions,
            Stage::Exec,
        ]
        .into_iter()
        .find(|stage| *stage as i32 == code)
    }

    fn what(self) -> &'static str {
        match self {
            Stage::Namespaces => "set up the command's namespaces (session, user maps, loopback)",
            Stage::StartCommand => "start the command under the namespace's init",
            Stage::Stdio => "connect the command's standard input and output",
            Stage::Directory => "enter the working directory",
            Stage::Restrictions => {
                "apply the sandbox (mounts, no_new_privs, Landlock, capabilities, seccomp)"
            }
            Stage::Exec => "execute the program",
        }
    }
}

/// A command started by [`launch`]: its init's pid (the process group),
/// a pidfd for it, the stacks it runs on and the read ends of its output.
#[derive(Debug)]
pub(super) struct Launched {
    pub(super) pid: pid_t,
    pub(super) pidfd: OwnedFd,
    pub(super) stacks: Stacks,
    pub(super) stdout: OwnedFd,
    pub(super) stderr: OwnedFd,
}

/// Why [`launch`] did not start the command.
#[derive(Debug)]
pub(super) enum LaunchError {
    /// This kernel does not clone that way: use the fork path.
    Unsupported,
    /// The command could not be started.
    Failed(io::Error),
}

impl From<io::Error> for LaunchError {
    fn from(error: io::Error) -> Self {
        LaunchError::Failed(error)
    }
}

/// Whether launching by clone is known to work here: 0 unknown, 1 yes,
/// 2 no.
static SUPPORTED: AtomicU8 = AtomicU8::new(0);

/// Whether this kernel has what [`launch`] needs: `CLONE_PIDFD` and
/// pollable pidfds (Linux 5.3), and no earlier launch found it lacking.
pub(super) fn supported() -> bool {
    match SUPPORTED.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let yes = kernel_at_least(5, 3);
            SUPPORTED.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
            yes
        }
    }
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// Children dropped before they were reaped: SIGKILLed, reaped here later
/// (at the next launch or drop), their stacks unmapped then.
static ORPHANS: Mutex<Vec<(pid_t, Stacks)>> = Mutex::new(Vec::new());

/// Keeps `pid` (SIGKILLed already) and its stacks until it is reaped.
pub(super) fn adopt_orphan(pid: pid_t, stacks: Stacks) {
    let mut orphans = match ORPHANS.lock() {
        Ok(orphans) => orphans,
        Err(poisoned) => poisoned.into_inner(),
    };
    orphans.push((pid, stacks));
}

/// Reaps the orphans that have ended and unmaps their stacks.
pub(super) fn reap_orphans() {
    let mut orphans = match ORPHANS.lock() {
        Ok(orphans) => orphans,
        Err(poisoned) => poisoned.into_inner(),
    };
    orphans.retain(|(pid, _)| try_reap(*pid) == Reap::Running);
}

/// What a non-blocking reap found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reap {
    /// Still running.
    Running,
    /// Ended with this raw wait status (now reaped).
    Ended(c_int),
    /// Not our child any more (reaped elsewhere).
    Gone,
}

/// `waitpid(pid, WNOHANG)`.
pub(super) fn try_reap(pid: pid_t) -> Reap {
    loop {
        let mut status: c_int = 0;
        // SAFETY: `status` is a valid out pointer for the call.
        #[allow(unsafe_code)]
        let ret = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG | libc::__WALL) };
        match ret {
            0 => return Reap::Running,
            r if r == pid => return Reap::Ended(status),
            _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => continue,
            _ => return Reap::Gone,
        }
    }
}

/// `waitpid(pid, 0)`: for an init known to be exiting.
fn reap_blocking(pid: pid_t) {
    loop {
        let mut status: c_int = 0;
        // SAFETY: `status` is a valid out pointer for the call.
        #[allow(unsafe_code)]
        let ret = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if ret >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// A pipe, both ends close-on-exec.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    #[allow(unsafe_code)]
    let ret = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody
    // else.
    #[allow(unsafe_code)]
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts `spec` under `plan`, which must have a PID namespace: the init
/// cloned into the namespaces, the command cloned by it. Returns once the
/// command has exec'd (or with the stage and errno where it failed).
pub(super) fn launch(plan: &ChildPlan, spec: &ExecSpec) -> Result<Launched, LaunchError> {
    reap_orphans();
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let (report_read, report_write) = pipe()?;
    let stdin = std::fs::File::open("/dev/null")?;
    let stacks = Stacks::take()?;
    let argv = null_terminated(&spec.argv);
    let envp = null_terminated(&spec.envp);

    // SAFETY: sigset_t is plain data; sigfillset and pthread_sigmask write
    // only the sets passed.
    #[allow(unsafe_code)]
    let mask = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        old
    };
    let shared = Shared {
        plan,
        program: &spec.program,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: &spec.cwd,
        stdin: stdin.as_raw_fd(),
        stdout: stdout_write.as_raw_fd(),
        stderr: stderr_write.as_raw_fd(),
        report: report_write.as_raw_fd(),
        command_stack: stacks.command_top(),
    };
    let mut pidfd: c_int = -1;
    let flags = libc::CLONE_VM | libc::CLONE_PIDFD | plan.namespace_flags() | libc::SIGCHLD;
    // SAFETY: `init_main` runs on the init's own stack of `stacks`, which
    // stays mapped until the init is reaped. `shared` and everything it
    // points to (the plan, `spec`, `argv`, `envp`, the descriptors) stay
    // alive and unmoved until the setup pipe reaches end-of-file or, on a
    // failure, until the init is reaped: both happen below, before any of
    // them is dropped. With CLONE_PIDFD the kernel stores the pidfd in
    // `pidfd`.
    #[allow(unsafe_code)]
    let pid = unsafe {
        libc::clone(
            init_main,
            stacks.init_top(),
            flags,
            (&shared as *const Shared).cast_mut().cast(),
            &mut pidfd as *mut c_int,
        )
    };
    let clone_error = io::Error::last_os_error();
    // The children hold their own copies of these.
    drop(report_write);
    drop(stdout_write);
    drop(stderr_write);
    let outcome = if pid < 0 {
        None
    } else {
        Some(read_report(&report_read))
    };
    if let Some(Some(_)) = outcome {
        // The init exits by itself (its command failed or never started);
        // until it has, it may still read `shared`.
        reap_blocking(pid);
    }
    // SAFETY: restores the mask saved above; `mask` is a valid set.
    #[allow(unsafe_code)]
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
    }
    drop(stdin);
    let report = match outcome {
        None => {
            // No child was made.
            stacks.recycle();
            return Err(match clone_error.raw_os_error() {
                Some(libc::EINVAL | libc::ENOSYS) => {
                    SUPPORTED.store(2, Ordering::Relaxed);
                    LaunchError::Unsupported
                }
                _ => LaunchError::Failed(clone_error),
            });
        }
        Some(report) => report,
    };
    // SAFETY: CLONE_PIDFD stored a new descriptor that nothing else owns.
    #[allow(unsafe_code)]
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    if let Some((stage, errno)) = report {
        // Reaped above: nothing runs on the stacks.
        stacks.recycle();
        drop(pidfd);
        return Err(LaunchError::Failed(launch_error(stage, errno)));
    }
    Ok(Launched {
        pid,
        pidfd,
        stacks,
        stdout: stdout_read,
        stderr: stderr_read,
    })
}

fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Reads the setup pipe to its end: `None` when the command exec'd, or
/// the stage and errno of the failure.
fn read_report(pipe: &OwnedFd) -> Option<(Stage, c_int)> {
    let mut buffer = [0u8; 8];
    let mut filled = 0;
    while filled < buffer.len() {
        let rest = &mut buffer[filled..];
        // SAFETY: `rest` is valid for `rest.len()` bytes.
        #[allow(unsafe_code)]
        let n = unsafe { libc::read(pipe.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        match n {
            0 => break,
            n if n > 0 => filled += n as usize,
            _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => break,
        }
    }
    if filled < buffer.len() {
        return None;
    }
    let [s0, s1, s2, s3, e0, e1, e2, e3] = buffer;
    let stage = Stage::from_code(i32::from_ne_bytes([s0, s1, s2, s3])).unwrap_or(Stage::Exec);
    Some((stage, i32::from_ne_bytes([e0, e1, e2, e3])))
}

fn launch_error(stage: Stage, errno: c_int) -> io::Error {
    let os = io::Error::from_raw_os_error(errno);
    if stage == Stage::Exec {
        return os;
    }
    io::Error::new(
        os.kind(),
        format!("the sandbox could not {}: {os}", stage.what()),
    )
}

/// Writes the 8-byte failure report.
fn report(fd: c_int, stage: Stage, errno: c_int) {
    let mut record = [0u8; 8];
    let (left, right) = record.split_at_mut(4);
    left.copy_from_slice(&(stage as i32).to_ne_bytes());
    right.copy_from_slice(&errno.to_ne_bytes());
    let _ = raw::write(fd, &record);
}

fn errno_of(error: &io::Error) -> c_int {
    error.raw_os_error().unwrap_or(libc::EIO)
}

/// Every signal the agent catches back to its default action: the agent's
/// handlers must never run in a process that shares its memory.
fn reset_caught_signals() {
    for signal in 1..=64 {
        if signal != libc::SIGKILL && signal != libc::SIGSTOP && raw::is_caught(signal) {
            raw::set_default(signal);
        }
    }
}

/// An empty signal mask, as std gives its children.
fn unblock_all_signals() {
    // SAFETY: sigset_t is plain data; sigemptyset and pthread_sigmask write
    // only the sets passed.
    #[allow(unsafe_code)]
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

/// The init: set up, start the command, then reap until it ends.
extern "C" fn init_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Shared` that `launch` keeps alive until this
    // process closes the setup pipe (the last thing `init_setup` does with
    // it) or exits.
    #[allow(unsafe_code)]
    let shared = unsafe { &*arg.cast_const().cast::<Shared>() };
    match init_setup(shared, arg) {
        Some(command) => init_loop(command),
        None => raw::exit(127),
    }
}

/// Everything the init does while the spawning thread waits; returns the
/// command's pid, after closing every descriptor (the setup pipe last).
fn init_setup(shared: &Shared, arg: *mut c_void) -> Option<pid_t> {
    reset_caught_signals();
    // A host that ignores SIGCHLD would have the command reaped by the
    // kernel before the init could read how it ended.
    raw::set_default(libc::SIGCHLD);
    if let Err(error) = shared.plan.enter_as_init() {
        report(shared.report, Stage::Namespaces, errno_of(&error));
        return None;
    }
    for signal in ENDING_SIGNALS {
        sys::set_signal(signal, Disposition::ForwardToNamespace);
    }
    // SAFETY: `command_main` runs on the command's own stack; CLONE_VFORK
    // suspends this process until the command has exec'd or exited, so the
    // two never run on shared data at once.
    #[allow(unsafe_code)]
    let command = unsafe {
        libc::clone(
            command_main,
            shared.command_stack,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        )
    };
    if command < 0 {
        report(
            shared.report,
            Stage::StartCommand,
            errno_of(&io::Error::last_os_error()),
        );
        return None;
    }
    unblock_all_signals();
    let last = shared.report;
    // From here on nothing of `shared` is read: closing the setup pipe
    // lets the spawning thread go on and free it.
    close_all_but_last(last);
    Some(command)
}

/// Closes every descriptor, `last` after the others.
fn close_all_but_last(last: c_int) {
    let last_u = u32::try_from(last).unwrap_or(0);
    let below = last_u.checked_sub(1).map(|end| raw::close_range(0, end));
    let above = raw::close_range(last_u.saturating_add(1), u32::MAX);
    if below.is_some_and(|r| r.is_err()) || above.is_err() {
        // Before Linux 5.9: the usual range one by one.
        for fd in 0..4096 {
            if fd != last {
                raw::close(fd);
            }
        }
    }
    raw::close(last);
}

/// The init after the setup: reaps every process of the namespace and
/// exits as the command did. Touches nothing but its own stack.
fn init_loop(command: pid_t) -> ! {
    loop {
        match raw::wait(-1) {
            Ok((pid, status)) if pid == command => {
                if libc::WIFSIGNALED(status) {
                    raw::exit(128 + libc::WTERMSIG(status));
                }
                if libc::WIFEXITED(status) {
                    raw::exit(libc::WEXITSTATUS(status));
                }
            }
            Ok(_) | Err(libc::EINTR) => {}
            Err(_) => raw::exit(127),
        }
    }
}

/// The command: the sandbox's steps, then exec. Returns only on failure,
/// after reporting it.
extern "C" fn command_main(arg: *mut c_void) -> c_int {
    // SAFETY: as for `init_main`; the init waits for this process
    // (CLONE_VFORK) and the spawning thread for the init.
    #[allow(unsafe_code)]
    let shared = unsafe { &*arg.cast_const().cast::<Shared>() };
    let (stage, errno) = command_exec(shared);
    report(shared.report, stage, errno);
    raw::exit(127)
}

/// The command's setup and exec; returns where it failed.
fn command_exec(shared: &Shared) -> (Stage, c_int) {
    reset_caught_signals();
    // As std does for its children: the agent ignores SIGPIPE, commands
    // expect the default.
    raw::set_default(libc::SIGPIPE);
    if let Err(errno) = redirect_stdio(shared) {
        return (Stage::Stdio, errno);
    }
    if let Err(error) = sys::chdir(shared.cwd) {
        return (Stage::Directory, errno_of(&error));
    }
    if let Err(error) = shared.plan.enter_as_command() {
        return (Stage::Restrictions, errno_of(&error));
    }
    unblock_all_signals();
    // SAFETY: the program, argv and envp are NUL-terminated strings and
    // null-terminated arrays that the spawning thread keeps alive.
    #[allow(unsafe_code)]
    unsafe {
        libc::execve(shared.program.as_ptr(), shared.argv, shared.envp);
    }
    (Stage::Exec, errno_of(&io::Error::last_os_error()))
}

/// Standard input from `/dev/null`, output and errors to the pipes. A
/// source among 0–2 is first moved above them, so no `dup2` overwrites
/// another's source.
fn redirect_stdio(shared: &Shared) -> Result<(), c_int> {
    let mut sources = [shared.stdin, shared.stdout, shared.stderr];
    for source in &mut sources {
        if *source < 3 {
            // SAFETY: fcntl with F_DUPFD_CLOEXEC takes integers only.
            #[allow(unsafe_code)]
            let moved = unsafe { libc::fcntl(*source, libc::F_DUPFD_CLOEXEC, 3) };
            if moved < 0 {
                return Err(errno_of(&io::Error::last_os_error()));
            }
            *source = moved;
        }
    }
    for (target, source) in sources.into_iter().enumerate() {
        // SAFETY: dup2 takes integers only; the result keeps no pointer.
        #[allow(unsafe_code)]
        let ret = unsafe { libc::dup2(source, target as c_int) };
        if ret < 0 {
            return Err(errno_of(&io::Error::last_os_error()));
        }
    }
    Ok(())
}
