//! [`SandboxedChild`]: a command started by
//! [`PreparedCommand::spawn`](super::PreparedCommand::spawn), however it
//! was started (cloned without a copy of the agent, or by tokio's fork
//! path), and [`CommandOutput`], the read end of its output.

use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// A command started under the sandbox. Its pid is also its process
/// group; dropping it before it was waited for kills that process (and,
/// under a PID namespace, everything in the namespace with it).
#[derive(Debug)]
pub struct SandboxedChild {
    inner: Inner,
    /// The command's standard output, until taken.
    pub stdout: Option<CommandOutput>,
    /// The command's standard error, until taken.
    pub stderr: Option<CommandOutput>,
}

#[derive(Debug)]
enum Inner {
    Tokio(tokio::process::Child),
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    Cloned(cloned::ClonedChild),
}

/// The read end of a sandboxed command's standard output or error.
#[derive(Debug)]
pub struct CommandOutput(Output);

#[derive(Debug)]
enum Output {
    Stdout(tokio::process::ChildStdout),
    Stderr(tokio::process::ChildStderr),
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    Pipe(tokio::net::unix::pipe::Receiver),
}

impl AsyncRead for CommandOutput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Stdout(reader) => Pin::new(reader).poll_read(cx, buf),
            Output::Stderr(reader) => Pin::new(reader).poll_read(cx, buf),
            #[cfg(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            ))]
            Output::Pipe(reader) => Pin::new(reader).poll_read(cx, buf),
        }
    }
}

impl SandboxedChild {
    /// A child tokio spawned (the fork path).
    pub(super) fn from_tokio(mut child: tokio::process::Child) -> SandboxedChild {
        let stdout = child
            .stdout
            .take()
            .map(|s| CommandOutput(Output::Stdout(s)));
        let stderr = child
            .stderr
            .take()
            .map(|s| CommandOutput(Output::Stderr(s)));
        SandboxedChild {
            inner: Inner::Tokio(child),
            stdout,
            stderr,
        }
    }

    /// The pid (also the process group id); `None` once it was reaped.
    pub fn id(&self) -> Option<u32> {
        match &self.inner {
            Inner::Tokio(child) => child.id(),
            #[cfg(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            ))]
            Inner::Cloned(child) => child.id(),
        }
    }

    /// Waits for the command to end. Under a PID namespace that is its
    /// init, which exits as the command did: its exit code, or 128 plus
    /// the signal that ended it; a status with a signal means the init
    /// itself was killed (SIGKILL after a timeout's grace).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        match &mut self.inner {
            Inner::Tokio(child) => child.wait().await,
            #[cfg(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            ))]
            Inner::Cloned(child) => child.wait().await,
        }
    }

    /// The exit status if the command has ended, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match &mut self.inner {
            Inner::Tokio(child) => child.try_wait(),
            #[cfg(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            ))]
            Inner::Cloned(child) => child.try_wait(),
        }
    }

    /// Sends SIGKILL to the process (not its group; the bash tool signals
    /// the group itself). Nothing happens once it was reaped.
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Tokio(child) => match child.start_kill() {
                // Already reaped: nothing to kill.
                Err(error) if error.kind() == io::ErrorKind::InvalidInput => Ok(()),
                other => other,
            },
            #[cfg(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            ))]
            Inner::Cloned(child) => child.start_kill(),
        }
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
impl SandboxedChild {
    /// A command the clone path started.
    pub(super) fn from_launched(
        launched: super::clone_launch::Launched,
    ) -> io::Result<SandboxedChild> {
        let super::clone_launch::Launched {
            pid,
            pidfd,
            stacks,
            stdout,
            stderr,
        } = launched;
        // Wrapped first: from here on dropping kills and reaps.
        let mut child = cloned::ClonedChild::new(pid, pidfd, stacks);
        let pipes = tokio::net::unix::pipe::Receiver::from_owned_fd(stdout).and_then(|stdout| {
            tokio::net::unix::pipe::Receiver::from_owned_fd(stderr).map(|stderr| (stdout, stderr))
        });
        // On an error `child` is dropped: killed, and reaped later.
        let (stdout, stderr) = pipes?;
        child.register()?;
        Ok(SandboxedChild {
            inner: Inner::Cloned(child),
            stdout: Some(CommandOutput(Output::Pipe(stdout))),
            stderr: Some(CommandOutput(Output::Pipe(stderr))),
        })
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod cloned {
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use libc::pid_t;
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    use super::super::clone_launch::{self, Reap, Stacks};

    /// A child started by the clone path: its init's pid and pidfd, and
    /// the stacks it runs on until it is reaped.
    #[derive(Debug)]
    pub(super) struct ClonedChild {
        pid: pid_t,
        pidfd: Pidfd,
        stacks: Option<Stacks>,
        status: Option<ExitStatus>,
    }

    #[derive(Debug)]
    enum Pidfd {
        Plain(OwnedFd),
        Registered(AsyncFd<OwnedFd>),
        Taken,
    }

    impl Pidfd {
        fn raw(&self) -> Option<i32> {
            match self {
                Pidfd::Plain(fd) => Some(fd.as_raw_fd()),
                Pidfd::Registered(fd) => Some(fd.get_ref().as_raw_fd()),
                Pidfd::Taken => None,
            }
        }
    }

    impl ClonedChild {
        pub(super) fn new(pid: pid_t, pidfd: OwnedFd, stacks: Stacks) -> ClonedChild {
            ClonedChild {
                pid,
                pidfd: Pidfd::Plain(pidfd),
                stacks: Some(stacks),
                status: None,
            }
        }

        /// Registers the pidfd with tokio's reactor (it becomes readable
        /// when the process ends).
        pub(super) fn register(&mut self) -> io::Result<()> {
            let fd = match std::mem::replace(&mut self.pidfd, Pidfd::Taken) {
                Pidfd::Plain(fd) => fd,
                registered => {
                    self.pidfd = registered;
                    return Ok(());
                }
            };
            // SAFETY: the OwnedFd owns its descriptor, which stays open and
            // the same until the AsyncFd is dropped.
            #[allow(unsafe_code)]
            let registered = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) };
            match registered {
                Ok(registered) => {
                    self.pidfd = Pidfd::Registered(registered);
                    Ok(())
                }
                Err(error) => {
                    // The caller drops this child: killed through its pidfd.
                    let (fd, error) = error.into_parts();
                    self.pidfd = Pidfd::Plain(fd);
                    Err(error)
                }
            }
        }

        pub(super) fn id(&self) -> Option<u32> {
            match self.status {
                Some(_) => None,
                None => u32::try_from(self.pid).ok(),
            }
        }

        pub(super) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
            if let Some(status) = self.status {
                return Ok(Some(status));
            }
            match clone_launch::try_reap(self.pid) {
                Reap::Running => Ok(None),
                Reap::Ended(raw) => {
                    let status = ExitStatus::from_raw(raw);
                    self.status = Some(status);
                    // The init is gone: nothing runs on its stacks.
                    if let Some(stacks) = self.stacks.take() {
                        stacks.recycle();
                    }
                    Ok(Some(status))
                }
                Reap::Gone => {
                    // Someone else reaped it: it is gone all the same.
                    self.stacks = None;
                    Err(io::Error::other(
                        "the sandboxed command's process was reaped by someone else; its exit status is lost",
                    ))
                }
            }
        }

        pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
            loop {
                if let Some(status) = self.try_wait()? {
                    return Ok(status);
                }
                let Pidfd::Registered(fd) = &self.pidfd else {
                    return Err(io::Error::other("the sandboxed command has no pidfd"));
                };
                let mut ready = fd.readable().await?;
                ready.clear_ready();
            }
        }

        pub(super) fn start_kill(&mut self) -> io::Result<()> {
            if self.status.is_some() {
                return Ok(());
            }
            let Some(fd) = self.pidfd.raw() else {
                return Ok(());
            };
            // SAFETY: pidfd_send_signal takes a descriptor, a signal
            // number and a null info pointer.
            #[allow(unsafe_code)]
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd,
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0u32,
                )
            };
            if ret < 0 {
                let error = io::Error::last_os_error();
                // ESRCH: it has ended already.
                if error.raw_os_error() != Some(libc::ESRCH) {
                    return Err(error);
                }
            }
            Ok(())
        }
    }

    impl Drop for ClonedChild {
        /// Not waited for: killed, and reaped now or by a later launch
        /// (its stacks unmapped then, never while it may still run).
        fn drop(&mut self) {
            if self.status.is_some() {
                return;
            }
            let _ = self.start_kill();
            match clone_launch::try_reap(self.pid) {
                Reap::Running => {
                    if let Some(stacks) = self.stacks.take() {
                        clone_launch::adopt_orphan(self.pid, stacks);
                    }
                }
                Reap::Ended(_) | Reap::Gone => {}
            }
        }
    }
}
