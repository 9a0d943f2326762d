//! Opening paths without following symbolic links: every component from
//! `/` is opened with `O_NOFOLLOW` relative to the one before it, so a link
//! planted anywhere on the way (by a command, between two calls) makes the
//! open fail instead of leading elsewhere.
//!
//! The sandbox holds the descriptors these return for its fixed roots (see
//! `roots`), and the bash tool spills long outputs through
//! [`create_new_file`], so neither can be redirected by a command.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{Mode, SFlag, fstat, mkdirat};

/// An `O_PATH` descriptor of `path` (absolute, no `..`), opened component
/// by component without following links; `Ok((fd, is_dir))`. The last
/// component must not be a link either.
pub(crate) fn open_path(path: &Path) -> io::Result<(OwnedFd, bool)> {
    let (parent, name) = walk(path, false)?;
    let fd = match name {
        Some(name) => openat(
            &parent,
            name,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?,
        None => parent,
    };
    let stat = fstat(&fd).map_err(io::Error::from)?;
    let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
    if kind == SFlag::S_IFLNK {
        return Err(io::Error::from(Errno::ELOOP));
    }
    Ok((fd, kind == SFlag::S_IFDIR))
}

/// Creates the new file `name` in the directory `dir` (absolute), making
/// missing directories (mode 0700) on the way; nothing on the way may be a
/// symbolic link, and the file must not exist (`O_EXCL`). The file is
/// created with mode 0600.
pub(crate) fn create_new_file(dir: &Path, name: &str) -> io::Result<std::fs::File> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::from(Errno::EINVAL));
    }
    let (parent, last) = walk(dir, true)?;
    let dir_fd = match last {
        Some(last) => open_dir_creating(&parent, last)?,
        None => parent,
    };
    let fd = openat(
        &dir_fd,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(io::Error::from)?;
    Ok(std::fs::File::from(fd))
}

/// Opens every directory of `path` but its last component (returned as
/// the name to open last, `None` for `/`), each with `O_NOFOLLOW`;
/// `create` makes missing ones.
fn walk(path: &Path, create: bool) -> io::Result<(OwnedFd, Option<&std::ffi::OsStr>)> {
    if !path.is_absolute() {
        return Err(io::Error::from(Errno::EINVAL));
    }
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(name) => names.push(name),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(io::Error::from(Errno::EINVAL));
            }
        }
    }
    let mut dir = open(
        "/",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let Some((last, inner)) = names.split_last() else {
        return Ok((dir, None));
    };
    for name in inner {
        dir = if create {
            open_dir_creating(&dir, name)?
        } else {
            open_dir(&dir, name).map_err(io::Error::from)?
        };
    }
    Ok((dir, Some(last)))
}

fn open_dir(parent: &OwnedFd, name: &std::ffi::OsStr) -> nix::Result<OwnedFd> {
    openat(
        parent,
        name,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

fn open_dir_creating(parent: &OwnedFd, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    match open_dir(parent, name) {
        Err(Errno::ENOENT) => {
            match mkdirat(parent, name, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(error) => return Err(error.into()),
            }
            open_dir(parent, name).map_err(io::Error::from)
        }
        other => other.map_err(io::Error::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir()
            .canonicalize()
            .unwrap()
            .join(format!("handles-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn opens_directories_and_files_but_no_links() {
        let dir = scratch("open");
        std::fs::write(dir.join("f"), "x").unwrap();
        std::os::unix::fs::symlink(&dir, dir.join("link")).unwrap();
        assert!(open_path(&dir).unwrap().1);
        assert!(!open_path(&dir.join("f")).unwrap().1);
        assert!(open_path(&dir.join("link")).is_err(), "a link at the end");
        assert!(
            open_path(&dir.join("link").join("f")).is_err(),
            "a link on the way"
        );
        assert!(open_path(Path::new("relative")).is_err());
        assert!(open_path(&dir.join("..").join("x")).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn creates_new_files_only_through_real_directories() {
        let dir = scratch("create");
        let mut file = create_new_file(&dir.join("a").join("b"), "out.txt").unwrap();
        file.write_all(b"hi").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("a/b/out.txt")).unwrap(),
            "hi"
        );
        assert!(
            create_new_file(&dir.join("a").join("b"), "out.txt").is_err(),
            "an existing file is never reused"
        );
        let elsewhere = scratch("create-elsewhere");
        std::fs::remove_dir_all(dir.join("a")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join("a")).unwrap();
        assert!(create_new_file(&dir.join("a").join("b"), "out.txt").is_err());
        assert!(!elsewhere.join("b").exists());
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_dir_all(elsewhere).unwrap();
    }
}
