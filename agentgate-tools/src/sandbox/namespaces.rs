//! The Linux namespaces a command runs in: a PID namespace so that every
//! descendant ends with the call, a network namespace when the network is
//! off, a mount namespace for its private `/proc` and `/dev` (`mounts`),
//! and — for a caller that is not root — a user namespace that makes
//! the others possible without privileges, mapping the caller's own uid
//! and gid so files keep their owner.
//!
//! Everything here is computed before spawning; [`Namespaces::enter`] runs
//! in the forked child and only makes system calls on that prepared data.

use std::io;
use std::sync::OnceLock;

use libc::c_int;

use super::sys;

/// The uid and gid maps a new user namespace needs, formatted before the
/// fork so the child only writes bytes.
#[derive(Debug)]
struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// Which namespaces to enter, prepared before spawning.
#[derive(Debug)]
pub(super) struct Namespaces {
    flags: c_int,
    user_maps: Option<UserMaps>,
}

impl Namespaces {
    /// The namespaces for a command: a PID namespace always (when `pid`),
    /// a network namespace when `network_off`, a user namespace when the
    /// caller is not root and any other namespace is wanted.
    pub(super) fn new(pid: bool, network_off: bool) -> Self {
        let mut flags = 0;
        if pid {
            flags |= libc::CLONE_NEWPID;
        }
        if network_off {
            flags |= libc::CLONE_NEWNET;
        }
        Namespaces::with_flags(flags)
    }

    /// The same namespaces plus a mount namespace (for the private `/proc`
    /// and `/dev` of `mounts`).
    pub(super) fn with_mount_namespace(self) -> Self {
        Namespaces::with_flags((self.flags & !libc::CLONE_NEWUSER) | libc::CLONE_NEWNS)
    }

    fn with_flags(mut flags: c_int) -> Self {
        let uid = sys::geteuid();
        let user_maps = (flags != 0 && uid != 0).then(|| {
            flags |= libc::CLONE_NEWUSER;
            let gid = sys::getegid();
            UserMaps {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            }
        });
        Namespaces { flags, user_maps }
    }

    /// Whether the command gets a user namespace of its own (a non-root
    /// agent's), where `RLIMIT_NPROC` counts its processes alone.
    pub(super) fn user_namespace(&self) -> bool {
        self.flags & libc::CLONE_NEWUSER != 0
    }

    /// Whether a PID namespace is entered (the caller must then fork its
    /// init, see `reaper`).
    pub(super) fn pid(&self) -> bool {
        self.flags & libc::CLONE_NEWPID != 0
    }

    /// The `CLONE_NEW*` flags of these namespaces.
    pub(super) fn flags(&self) -> c_int {
        self.flags
    }

    /// Enters the namespaces. Runs in the forked child: system calls only.
    pub(super) fn enter(&self) -> io::Result<()> {
        if self.flags == 0 {
            return Ok(());
        }
        sys::unshare(self.flags)?;
        self.configure()
    }

    /// What a process that has just entered the namespaces (by `unshare`
    /// or by being cloned into them) sets up in them: its uid and gid maps
    /// and the loopback interface. System calls only.
    pub(super) fn configure(&self) -> io::Result<()> {
        if let Some(maps) = &self.user_maps {
            // Writing gid_map unprivileged requires setgroups to be denied
            // first; kernels before 3.19 have no such file.
            match sys::write_file(c"/proc/self/setgroups", b"deny") {
                Err(error) if error.raw_os_error() != Some(libc::ENOENT) => return Err(error),
                _ => {}
            }
            sys::write_file(c"/proc/self/uid_map", &maps.uid_map)?;
            sys::write_file(c"/proc/self/gid_map", &maps.gid_map)?;
        }
        if self.flags & libc::CLONE_NEWNET != 0 {
            // Loopback up: programs may talk to themselves; the host's
            // 127.0.0.1 stays out of reach. Not fatal if it fails.
            let _ = sys::bring_up_loopback();
        }
        Ok(())
    }
}

/// Whether this process can give commands the namespaces
/// [`Namespaces::new(true, true)`] asks for: probed once per process by
/// spawning `true` (or `sh -c :`) inside them.
pub(super) fn available() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    let namespaces = Namespaces::new(true, true);
    let program = ["/usr/bin/true", "/bin/true", "/bin/sh"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .ok_or_else(|| "no /bin/true or /bin/sh to probe namespaces with".to_string())?;
    let mut command = std::process::Command::new(program);
    if program.ends_with("sh") {
        command.args(["-c", ":"]);
    }
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    sys::register_pre_exec(&mut command, move || namespaces.enter());
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("the namespace probe exited with {status}")),
        Err(error) => Err(format!(
            "this kernel or container does not allow new user, PID and network namespaces ({error})"
        )),
    }
}
