//! A file tool's path held to what its permission requests were about.
//!
//! A tool asks about a path (as written, and where it leads), then opens
//! it. A folder on the way exchanged with a link between the two, by a
//! process the model started, would send the open elsewhere: `read sub/x`
//! approved inside the project, then `sub` swapped for a link to
//! `~/.ssh`; `write sub/x` landing in `~/.config`. So a call takes an
//! [`AskedPath`] before its first request (where the file and its folder
//! lead at that moment), and every open checks on the descriptor it got
//! where the kernel actually opened it (`/proc/self/fd`). Another place
//! fails the call, and nothing is read or written there.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{AT_FDCWD, AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fchmod, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::files::error::FileError;
use crate::files::paths;

/// A search root a call asked about, open.
pub(crate) enum OpenedRoot {
    /// A folder: a handle for `*at` calls.
    Folder(OwnedFd),
    /// The one file searched.
    File(File),
}

impl OpenedRoot {
    /// The folder, when the root is one.
    pub(crate) fn folder(&self) -> Option<&OwnedFd> {
        match self {
            OpenedRoot::Folder(fd) => Some(fd),
            OpenedRoot::File(_) => None,
        }
    }

    /// The file, when the root is one.
    pub(crate) fn file(&self) -> Option<&File> {
        match self {
            OpenedRoot::Folder(_) => None,
            OpenedRoot::File(file) => Some(file),
        }
    }
}

/// Where a file tool's path led when the call asked.
#[derive(Debug, Clone)]
pub(crate) struct AskedPath {
    /// The path as the call names it (absolute).
    path: PathBuf,
    /// Where it led: every link resolved, the last component's too.
    file: PathBuf,
    /// Where its folder led (the last component not resolved: a write
    /// replaces a link there, it does not write through it).
    folder: PathBuf,
    name: OsString,
}

impl AskedPath {
    /// Where `path` (absolute) leads now; taken before the call's first
    /// permission request, which [`AskedPath::pinned`] builds. Its folder is
    /// resolved once, and the file is that folder's entry (where it leads
    /// when it is a link), so the two cannot disagree.
    pub(crate) fn of(path: &Path) -> AskedPath {
        let path = paths::normalize(path);
        let folder = paths::real_path(path.parent().unwrap_or(Path::new("/")));
        let name = path.file_name().unwrap_or_default().to_os_string();
        let entry = folder.join(&name);
        let file = match std::fs::symlink_metadata(&entry) {
            Ok(metadata) if metadata.file_type().is_symlink() => paths::real_path(&entry),
            _ => entry,
        };
        AskedPath {
            path,
            file,
            folder,
            name,
        }
    }

    /// Runs `f` (which builds the call's permission requests) with this
    /// path's resolution pinned: the requests are about where the call
    /// will read and write.
    pub(crate) fn pinned<T>(&self, f: impl FnOnce() -> T) -> T {
        paths::with_pinned(&[self.pin()], f)
    }

    /// The path and where it leads, for [`paths::with_pinned`].
    pub(crate) fn pin(&self) -> (PathBuf, PathBuf) {
        (self.path.clone(), self.file.clone())
    }

    /// The path as the call names it.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file for reading, if it is still the file the call asked
    /// about: its folder (where the call found it, links resolved) is
    /// opened as a handle and checked, then the file is opened by name in
    /// it without following a link, and only when it is a regular file
    /// (opening a device can act; a FIFO is opened without blocking). So
    /// nothing the call did not ask about is ever opened for reading.
    pub(crate) fn open_file(&self) -> Result<File, FileError> {
        let (Some(parent), Some(name)) = (self.file.parent(), self.file.file_name()) else {
            return Err(FileError::NotRegular(self.path.clone()));
        };
        let fail = |errno: nix::errno::Errno| FileError::Read {
            path: self.path.clone(),
            source: errno.into(),
        };
        let folder = self.open_checked(parent)?;
        let stat = fstatat(&folder, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(fail)?;
        if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
            return Err(FileError::NotRegular(self.path.clone()));
        }
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&folder, name, flags, Mode::empty()).map_err(fail)?;
        Ok(File::from(fd))
    }

    /// The names in the folder at the path, if it is still the folder the
    /// call asked about, each with whether it leads to a folder (through
    /// a link too), read from the folder opened and checked.
    pub(crate) fn list_folder(&self) -> Result<Vec<(OsString, bool)>, FileError> {
        let (fd, names) = self.list_checked(&self.path, &self.file)?;
        Ok(names
            .into_iter()
            .map(|name| {
                let is_dir = fstatat(&fd, name.as_os_str(), AtFlags::empty()).is_ok_and(|stat| {
                    nix::sys::stat::SFlag::from_bits_truncate(stat.st_mode)
                        & nix::sys::stat::SFlag::S_IFMT
                        == nix::sys::stat::SFlag::S_IFDIR
                });
                (name, is_dir)
            })
            .collect())
    }

    /// The names in the file's folder, if it is still the folder the call
    /// asked about (for the names a "not found" suggests).
    pub(crate) fn list_parent(&self) -> Result<Vec<OsString>, FileError> {
        let parent = self.path.parent().unwrap_or(Path::new("/"));
        Ok(self.list_checked(parent, &self.folder)?.1)
    }

    /// The folder at `folder`, opened and held to `asked`, and its names.
    fn list_checked(
        &self,
        folder: &Path,
        asked: &Path,
    ) -> Result<(OwnedFd, Vec<OsString>), FileError> {
        let fail = |source| FileError::Read {
            path: folder.to_path_buf(),
            source,
        };
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd =
            openat(AT_FDCWD, folder, flags, Mode::empty()).map_err(|errno| fail(errno.into()))?;
        self.held_to(&fd, asked)?;
        // The open folder itself, through its descriptor's magic link.
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let mut names = Vec::new();
        for entry in std::fs::read_dir(format!("/proc/self/fd/{raw}")).map_err(fail)? {
            names.push(entry.map_err(fail)?.file_name());
        }
        Ok((fd, names))
    }

    /// Opens the path as a search root (a folder, or a file), if it is
    /// still where the call asked about.
    pub(crate) fn open_root(&self) -> Result<OpenedRoot, FileError> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        match openat(AT_FDCWD, &self.path, flags, Mode::empty()) {
            Ok(fd) => {
                self.held_to(&fd, &self.file)?;
                Ok(OpenedRoot::Folder(fd))
            }
            Err(nix::errno::Errno::ENOTDIR) => Ok(OpenedRoot::File(self.open_file()?)),
            Err(errno) => Err(FileError::Read {
                path: self.path.clone(),
                source: errno.into(),
            }),
        }
    }

    /// Opens the file's folder (a handle for `*at` calls), if it is still
    /// the folder the call asked about.
    fn open_folder(&self) -> Result<OwnedFd, FileError> {
        let folder = self.path.parent().unwrap_or(Path::new("/"));
        let fd = self.open_handle(folder)?;
        self.held_to(&fd, &self.folder)?;
        Ok(fd)
    }

    /// Opens the folder at `folder` (a path with no link, as the call
    /// found it) as a handle, if it is still there.
    fn open_checked(&self, folder: &Path) -> Result<OwnedFd, FileError> {
        let fd = self.open_handle(folder)?;
        self.held_to(&fd, folder)?;
        Ok(fd)
    }

    /// `folder` opened as a handle for `*at` calls (no side effect: the
    /// folder is not read).
    fn open_handle(&self, folder: &Path) -> Result<OwnedFd, FileError> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        openat(AT_FDCWD, folder, flags, Mode::empty()).map_err(|errno| FileError::Read {
            path: folder.to_path_buf(),
            source: errno.into(),
        })
    }

    /// Fails unless `fd` is open at `asked`.
    fn held_to(&self, fd: &OwnedFd, asked: &Path) -> Result<(), FileError> {
        match opened_at(fd) {
            Some(now) if now == asked => Ok(()),
            now => Err(FileError::Moved {
                path: self.path.clone(),
                asked: asked.to_path_buf(),
                now,
            }),
        }
    }

    /// Writes `bytes` to the file atomically, in the folder the call asked
    /// about: creates missing parent folders, writes and syncs a temporary
    /// file there, keeps the permissions of an existing file (through a
    /// link: its target's), then renames it over the file's name (a link
    /// there is replaced, not written through). On failure the temporary
    /// file is removed and the file is untouched.
    pub(crate) async fn write_atomic(&self, bytes: Vec<u8>) -> Result<(), FileError> {
        if let Some(parent) = self.path.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|source| self.write_error(source))?;
        }
        let asked = self.clone();
        tokio::task::spawn_blocking(move || asked.write_in_folder(&bytes))
            .await
            .map_err(|e| self.write_error(std::io::Error::other(e)))?
    }

    fn write_in_folder(&self, bytes: &[u8]) -> Result<(), FileError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let folder = self.open_folder()?;
        let temp = OsString::from(format!(
            ".{}.{}.{}.tmp",
            self.name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| -> nix::Result<()> {
            let flags = OFlag::O_WRONLY
                | OFlag::O_CREAT
                | OFlag::O_EXCL
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC;
            let mode = Mode::from_bits_truncate(0o666);
            let mut file = File::from(openat(&folder, temp.as_os_str(), flags, mode)?);
            file.write_all(bytes).map_err(io_errno)?;
            file.sync_all().map_err(io_errno)?;
            if let Ok(existing) = fstatat(&folder, self.name.as_os_str(), AtFlags::empty()) {
                fchmod(file.as_fd(), Mode::from_bits_truncate(existing.st_mode))?;
            }
            renameat(&folder, temp.as_os_str(), &folder, self.name.as_os_str())
        })();
        written.map_err(|errno| {
            let _ = unlinkat(&folder, temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            self.write_error(errno.into())
        })
    }

    /// Removes the file's name from the folder the call asked about (a
    /// link there is removed, not its target); a file already gone is not
    /// an error.
    pub(crate) async fn remove(&self) -> Result<(), FileError> {
        let asked = self.clone();
        tokio::task::spawn_blocking(move || {
            let folder = asked.open_folder()?;
            match unlinkat(&folder, asked.name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
                Err(errno) => Err(FileError::Read {
                    path: asked.path.clone(),
                    source: errno.into(),
                }),
            }
        })
        .await
        .map_err(|e| self.write_error(std::io::Error::other(e)))?
    }

    fn write_error(&self, source: std::io::Error) -> FileError {
        FileError::Write(crate::files::atomic::WriteError {
            path: self.path.clone(),
            source,
        })
    }
}

/// The errno of an I/O error (`EIO` when it has none).
fn io_errno(error: std::io::Error) -> nix::errno::Errno {
    nix::errno::Errno::from_raw(error.raw_os_error().unwrap_or(nix::libc::EIO))
}

/// Where the kernel opened `fd`, as `/proc/self/fd` tells; `None` when it
/// cannot tell (no `/proc`), which no asked path equals.
#[cfg(not(target_vendor = "apple"))]
fn opened_at(fd: &OwnedFd) -> Option<PathBuf> {
    let raw = std::os::fd::AsRawFd::as_raw_fd(fd);
    std::fs::read_link(format!("/proc/self/fd/{raw}")).ok()
}

/// Where the kernel opened `fd`, as `F_GETPATH` tells.
#[cfg(target_vendor = "apple")]
fn opened_at(fd: &OwnedFd) -> Option<PathBuf> {
    let mut path = PathBuf::new();
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETPATH(&mut path)).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_folder_swapped_after_the_ask_is_not_read_or_written_through() {
        let base =
            std::env::temp_dir().join(format!("agentgate-asked-path-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (project, outside) = (base.join("project"), base.join("outside"));
        std::fs::create_dir_all(project.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("sub/x"), "inside").unwrap();
        std::fs::write(outside.join("x"), "SECRET").unwrap();
        let asked = AskedPath::of(&project.join("sub/x"));
        // The file itself swapped for a link to a device, or for a FIFO:
        // refused before anything is opened.
        let other = AskedPath::of(&project.join("sub/y"));
        std::os::unix::fs::symlink("/dev/zero", project.join("sub/y")).unwrap();
        let error = other.open_file().unwrap_err();
        assert!(matches!(error, FileError::NotRegular(_)), "{error}");
        std::fs::remove_file(project.join("sub/y")).unwrap();
        nix::unistd::mkfifo(&project.join("sub/y"), Mode::from_bits_truncate(0o600)).unwrap();
        let error = other.open_file().unwrap_err();
        assert!(matches!(error, FileError::NotRegular(_)), "{error}");
        std::fs::remove_file(project.join("sub/y")).unwrap();
        let folder_before = AskedPath::of(&project.join("sub"));
        assert_eq!(asked.list_parent().unwrap(), vec![OsString::from("x")]);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut asked.open_file().unwrap(), &mut text).unwrap();
        assert_eq!(text, "inside");
        asked.write_atomic(b"written".to_vec()).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(project.join("sub/x")).unwrap(),
            "written"
        );
        // `sub` exchanged with a link to the outside folder after the ask.
        std::fs::rename(project.join("sub"), base.join("moved")).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("sub")).unwrap();
        let error = asked.open_file().unwrap_err();
        assert!(matches!(error, FileError::Moved { .. }), "{error}");
        assert!(
            error.to_string().contains("Nothing was read or written"),
            "{error}"
        );
        let error = asked.list_parent().unwrap_err();
        assert!(matches!(error, FileError::Moved { .. }), "{error}");
        let folder = AskedPath::of(&project.join("sub"));
        let error = asked.write_atomic(b"planted".to_vec()).await.unwrap_err();
        assert!(matches!(error, FileError::Moved { .. }), "{error}");
        assert_eq!(
            std::fs::read_to_string(outside.join("x")).unwrap(),
            "SECRET"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
        // A listing of the swapped folder, asked about before or after.
        let error = folder_before.list_folder().unwrap_err();
        assert!(matches!(error, FileError::Moved { .. }), "{error}");
        assert_eq!(
            folder.list_folder().unwrap(),
            vec![(OsString::from("x"), false)]
        );
        // Asked about where the link leads, it is that file.
        let through = AskedPath::of(&project.join("sub/x"));
        assert_eq!(through.file, outside.join("x"));
        assert!(through.open_file().is_ok());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[tokio::test]
    async fn a_write_replaces_a_link_and_keeps_the_targets_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let base =
            std::env::temp_dir().join(format!("agentgate-asked-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("target"), "old").unwrap();
        std::fs::set_permissions(base.join("target"), std::fs::Permissions::from_mode(0o750))
            .unwrap();
        std::os::unix::fs::symlink(base.join("target"), base.join("link")).unwrap();
        let asked = AskedPath::of(&base.join("link"));
        asked.write_atomic(b"new".to_vec()).await.unwrap();
        let link = std::fs::symlink_metadata(base.join("link")).unwrap();
        assert!(link.is_file());
        assert_eq!(link.permissions().mode() & 0o777, 0o750);
        assert_eq!(std::fs::read_to_string(base.join("target")).unwrap(), "old");
        // Missing folders are made.
        let deep = AskedPath::of(&base.join("a/b/c.txt"));
        deep.write_atomic(b"deep".to_vec()).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("a/b/c.txt")).unwrap(),
            "deep"
        );
        // Nothing left behind.
        let names: Vec<_> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let _ = std::fs::remove_dir_all(&base);
    }
}
