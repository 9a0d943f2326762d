//! Reaching a path inside the project without following a symbolic link:
//! from the root, each parent component is opened with `O_NOFOLLOW |
//! O_DIRECTORY`, so a parent that is a link (to `/tmp/outside`, planted by
//! a hostile repository or a model) or a file stops the walk instead of
//! leading out. Every read and write of the checkpoints goes through the
//! parent's descriptor and the last component's name.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{FileStat, Mode, fstatat};

/// Where a path's parent was found.
#[derive(Debug)]
pub(crate) enum Reach {
    /// The parent folder, opened; the path's own name is the last
    /// component.
    Parent(OwnedFd),
    /// A parent component does not exist.
    Missing,
    /// A parent component is a symbolic link or not a folder: the path is
    /// not inside the project.
    Blocked,
}

/// Opens the project root (following a link there: the root is the
/// user's choice, not the project's content).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    openat(nix::fcntl::AT_FDCWD, root, flags, Mode::empty()).map_err(io::Error::from)
}

/// Opens `name` in `dir` as a folder, refusing a symbolic link.
pub(crate) fn open_dir_at(dir: impl AsFd, name: &str) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, name, flags, Mode::empty())
}

/// The parent folder of the path made of `components`, reached from
/// `root` without following links.
pub(crate) fn reach_parent(root: &OwnedFd, components: &[&str]) -> io::Result<Reach> {
    let Some((_, parents)) = components.split_last() else {
        return Ok(Reach::Blocked);
    };
    let mut current = root.try_clone()?;
    for name in parents {
        current = match open_dir_at(&current, name) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(Reach::Missing),
            Err(Errno::ELOOP | Errno::ENOTDIR) => return Ok(Reach::Blocked),
            Err(errno) => return Err(errno.into()),
        };
    }
    Ok(Reach::Parent(current))
}

/// `lstat` of `name` in `dir`: `None` when it does not exist.
pub(crate) fn lstat_at(dir: impl AsFd, name: &str) -> io::Result<Option<FileStat>> {
    match fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(Errno::ENOENT) => Ok(None),
        Err(errno) => Err(errno.into()),
    }
}

/// Opens the regular file `name` in `dir` for reading, refusing a link
/// (and not blocking on a FIFO swapped in meanwhile).
pub(crate) fn open_file_at(dir: impl AsFd, name: &str) -> io::Result<std::fs::File> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).map_err(io::Error::from)?;
    Ok(std::fs::File::from(fd))
}

/// Where the symbolic link `name` in `dir` points.
pub(crate) fn read_link_at(dir: impl AsFd, name: &str) -> io::Result<PathBuf> {
    let target = nix::fcntl::readlinkat(dir, name).map_err(io::Error::from)?;
    Ok(PathBuf::from(target))
}

/// The raw `st_mode` of a `stat` result (`u16` on some systems).
#[allow(clippy::useless_conversion)]
pub(crate) fn mode_of(stat: &FileStat) -> u32 {
    u32::from(stat.st_mode)
}

/// The permission bits of a `stat` result.
pub(crate) fn permission_bits(stat: &FileStat) -> u32 {
    mode_of(stat) & 0o7777
}

/// What kind of entry a `stat` result describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device: not captured.
    Other,
}

/// The kind of a raw `st_mode` (POSIX's file-type bits).
pub(crate) fn kind_of_mode(mode: u32) -> Kind {
    match mode & 0o170_000 {
        0o100_000 => Kind::File,
        0o040_000 => Kind::Dir,
        0o120_000 => Kind::Symlink,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_parent_blocks_the_path() {
        let dir = std::env::temp_dir().join(format!("cp-dirfd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink("/tmp", dir.join("link")).unwrap();
        std::fs::write(dir.join("file"), "x").unwrap();
        let root = open_root(&dir).unwrap();
        assert!(matches!(
            reach_parent(&root, &["real", "x"]).unwrap(),
            Reach::Parent(_)
        ));
        assert!(matches!(
            reach_parent(&root, &["link", "x"]).unwrap(),
            Reach::Blocked
        ));
        assert!(matches!(
            reach_parent(&root, &["file", "x"]).unwrap(),
            Reach::Blocked
        ));
        assert!(matches!(
            reach_parent(&root, &["none", "x"]).unwrap(),
            Reach::Missing
        ));
        let link = lstat_at(&root, "link").unwrap().unwrap();
        assert_eq!(kind_of_mode(mode_of(&link)), Kind::Symlink);
        assert!(open_file_at(&root, "link").is_err());
        assert_eq!(read_link_at(&root, "link").unwrap(), PathBuf::from("/tmp"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
