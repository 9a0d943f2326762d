//! The command's own view of `/proc` and `/dev`, and masks over the denied
//! paths Landlock cannot take away, in a mount namespace of its own:
//!
//! - `/proc` is a fresh procfs of the command's PID namespace: the agent
//!   and every other process outside are not in it, so neither is
//!   `/proc/<agent pid>/environ` (the agent's API keys);
//! - `/dev` is a small read-only tmpfs holding only `null`, `zero`, `full`,
//!   `random`, `urandom` and `tty` (bound from the host's), `shm` (the
//!   host's, a writable root) and the `fd`, `stdin`, `stdout`, `stderr`
//!   links — no disks, no other terminals (`/dev/pts`), no `/dev/kmsg`;
//! - every denied path inside a writable root (where Landlock, which only
//!   grants, cannot deny it) is covered by an empty, read-only mount with
//!   mode 000: a directory by a tmpfs, a file by an empty file. Reading it
//!   fails with "Permission denied", as a Landlock denial does, and it can
//!   be neither replaced nor removed (it is a mount point);
//! - what a later run trusts inside a writable root (`.git`, the project's
//!   `opencode.json`/`opencode.jsonc` and `.opencode`, those that exist when
//!   the call starts) is bound read-only onto itself: commands read it,
//!   cannot change, remove or rename it;
//! - the folders that hold those, up to the project's outermost folder,
//!   are bound onto themselves (still writable): a mount point cannot be
//!   renamed or removed, so no command moves a protected entry away from
//!   where the next run looks for it (`mv packages/a packages/z` would
//!   otherwise take `packages/a/opencode.json`, and its rules, along).
//!
//! The new `/dev` is built on a tmpfs mounted over `/proc` for the moment
//! (the host's `/dev` is still reachable then), moved onto `/dev`, and only
//! then is the fresh procfs mounted. Mounts propagate to nothing outside
//! (`/` is made a slave first). Everything is prepared before the fork;
//! [`MountPlan::enter`] runs in the command's process (inside the PID
//! namespace, as procfs requires) and only makes system calls.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::sys;

/// A device bound into the new `/dev`: the host's node and the mount point
/// in the tmpfs while it is still mounted over `/proc`.
struct Device {
    host: &'static CStr,
    staged: &'static CStr,
}

const DEVICES: &[Device] = &[
    Device {
        host: c"/dev/null",
        staged: c"/proc/null",
    },
    Device {
        host: c"/dev/zero",
        staged: c"/proc/zero",
    },
    Device {
        host: c"/dev/full",
        staged: c"/proc/full",
    },
    Device {
        host: c"/dev/random",
        staged: c"/proc/random",
    },
    Device {
        host: c"/dev/urandom",
        staged: c"/proc/urandom",
    },
    Device {
        host: c"/dev/tty",
        staged: c"/proc/tty",
    },
];

/// The links of the new `/dev` (target, staged path).
const LINKS: &[(&CStr, &CStr)] = &[
    (c"/proc/self/fd", c"/proc/fd"),
    (c"/proc/self/fd/0", c"/proc/stdin"),
    (c"/proc/self/fd/1", c"/proc/stdout"),
    (c"/proc/self/fd/2", c"/proc/stderr"),
];

/// The empty file the masks of denied files are bound from, removed again
/// before the new `/dev` is moved in place.
const EMPTY_FILE: &CStr = c"/proc/.masked";

/// The empty directory bound over each masked directory (see `EMPTY_FILE`).
const EMPTY_DIR: &CStr = c"/proc/.masked-dir";

/// One denied path to cover.
#[derive(Debug)]
struct Mask {
    target: CString,
    directory: bool,
}

/// What the command's process mounts, prepared before the fork.
#[derive(Debug)]
pub(super) struct MountPlan {
    devices: Vec<usize>,
    shm: bool,
    masks: Vec<Mask>,
    /// Paths bound read-only onto themselves: what a later run trusts
    /// (`.git`, the project's opencode config), inside a writable root.
    readonly: Vec<CString>,
    /// Folders bound onto themselves, outermost first: the folders that
    /// hold the read-only paths, which must stay where they are.
    pinned: Vec<CString>,
    /// The command's working directory, entered again once everything is
    /// mounted: the process entered it before (between fork and exec, in
    /// the host's view), and a folder pinned since would leave it on the
    /// mount beneath, where the read-only binds made on the pin do not
    /// apply.
    cwd: Option<CString>,
}

impl MountPlan {
    /// The plan for a call whose denied paths inside writable roots are
    /// `masked` (absolute, canonical, existing). Host devices that do not
    /// exist are left out.
    pub(super) fn new(
        masked: &[PathBuf],
        readonly: &[PathBuf],
        pinned: &[PathBuf],
        cwd: Option<&Path>,
    ) -> MountPlan {
        let mut pinned: Vec<&PathBuf> = pinned.iter().collect();
        pinned.sort_by_key(|path| path.components().count());
        pinned.dedup();
        let exists = |path: &CStr| Path::new(std::ffi::OsStr::from_bytes(path.to_bytes())).exists();
        MountPlan {
            devices: (0..DEVICES.len())
                .filter(|&i| exists(DEVICES[i].host))
                .collect(),
            shm: Path::new("/dev/shm").is_dir(),
            masks: masked
                .iter()
                .filter_map(|path| {
                    let target = CString::new(path.as_os_str().as_bytes()).ok()?;
                    let directory = std::fs::symlink_metadata(path).ok()?.is_dir();
                    Some(Mask { target, directory })
                })
                .collect(),
            readonly: readonly
                .iter()
                .filter_map(|path| CString::new(path.as_os_str().as_bytes()).ok())
                .collect(),
            pinned: pinned
                .into_iter()
                .filter_map(|path| CString::new(path.as_os_str().as_bytes()).ok())
                .collect(),
            cwd: cwd.and_then(|cwd| CString::new(cwd.as_os_str().as_bytes()).ok()),
        }
    }

    /// Mounts the plan. Runs in the forked command process, inside the new
    /// mount and PID namespaces: system calls only, on prepared data.
    pub(super) fn enter(&self) -> io::Result<()> {
        // Nothing mounted here propagates back to the host.
        sys::mount(None, c"/", None, libc::MS_REC | libc::MS_SLAVE, None)?;
        self.stage_dev()?;
        self.pin()?;
        self.mask()?;
        self.protect()?;
        // The staged tmpfs: read-only, then moved onto /dev.
        sys::mount(
            None,
            c"/proc",
            None,
            libc::MS_REMOUNT
                | libc::MS_BIND
                | libc::MS_RDONLY
                | libc::MS_NOSUID
                | libc::MS_NODEV
                | libc::MS_NOEXEC,
            None,
        )?;
        sys::mount(Some(c"/proc"), c"/dev", None, libc::MS_MOVE, None)?;
        sys::mount(
            Some(c"proc"),
            c"/proc",
            Some(c"proc"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )?;
        match &self.cwd {
            Some(cwd) => sys::chdir(cwd),
            None => Ok(()),
        }
    }

    /// The new `/dev`, built on a tmpfs over `/proc`.
    fn stage_dev(&self) -> io::Result<()> {
        sys::mount(
            Some(c"tmpfs"),
            c"/proc",
            Some(c"tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            Some(c"mode=0755,size=64k,nr_inodes=64"),
        )?;
        for &i in &self.devices {
            let device = &DEVICES[i];
            sys::create_file(device.staged, 0o600)?;
            sys::mount(Some(device.host), device.staged, None, libc::MS_BIND, None)?;
        }
        if self.shm {
            sys::mkdir(c"/proc/shm", 0o755)?;
            sys::mount(
                Some(c"/dev/shm"),
                c"/proc/shm",
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
        }
        for (target, link) in LINKS {
            sys::symlink(target, link)?;
        }
        Ok(())
    }

    /// Binds each pinned folder onto itself (with what is mounted below
    /// it), outermost first: it stays writable, but as a mount point it
    /// can be neither renamed nor removed.
    fn pin(&self) -> io::Result<()> {
        for target in &self.pinned {
            sys::mount(
                Some(target),
                target,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
        }
        Ok(())
    }

    /// Binds each protected path read-only onto itself: readable, but
    /// neither writable nor removable or renamable (a mount point).
    fn protect(&self) -> io::Result<()> {
        for target in &self.readonly {
            sys::mount(
                Some(target),
                target,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
            sys::mount(
                None,
                target,
                None,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID,
                None,
            )?;
        }
        Ok(())
    }

    /// Covers each denied path inside a writable root: a bind of an empty
    /// entry with mode 000, made read-only. Binds share the staged tmpfs,
    /// where a tmpfs per directory would create (and, when the command
    /// ends, tear down) a file system for each mask.
    fn mask(&self) -> io::Result<()> {
        let files = self.masks.iter().any(|m| !m.directory);
        let directories = self.masks.iter().any(|m| m.directory);
        if files {
            sys::create_file(EMPTY_FILE, 0)?;
        }
        if directories {
            sys::mkdir(EMPTY_DIR, 0)?;
        }
        let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        for mask in &self.masks {
            let source = if mask.directory {
                EMPTY_DIR
            } else {
                EMPTY_FILE
            };
            sys::mount(Some(source), &mask.target, None, libc::MS_BIND, None)?;
            sys::mount(
                None,
                &mask.target,
                None,
                libc::MS_REMOUNT | libc::MS_BIND | flags,
                None,
            )?;
        }
        // The masks keep their entries alive; the names go, so the new
        // `/dev` holds neither.
        if files {
            sys::unlink(EMPTY_FILE)?;
        }
        if directories {
            sys::rmdir(EMPTY_DIR)?;
        }
        Ok(())
    }
}
