//! What a path is now: its `lstat` (the [`StatKey`] the index compares to
//! decide whether to read it again) and its [`FileState`], read without
//! following links, a file's content stored in the object store.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;

use agentgate_core::FileState;
use nix::sys::stat::FileStat;

use crate::checkpoint::dir_fd::{self, Kind, Reach};
use crate::checkpoint::objects::ObjectStore;
use crate::checkpoint::rel_path;

/// What `lstat` says of an entry, enough to tell that it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatKey {
    /// Device.
    pub(crate) dev: u64,
    /// Inode.
    pub(crate) ino: u64,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Modification time, in nanoseconds since the epoch.
    pub(crate) mtime_ns: i128,
    /// Inode change time, in nanoseconds since the epoch.
    pub(crate) ctime_ns: i128,
    /// The raw `st_mode` (type and permission bits).
    pub(crate) mode: u32,
}

/// Nanoseconds of a (seconds, nanoseconds) time.
fn nanos(seconds: i64, nanoseconds: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds)
}

impl StatKey {
    /// The key of a `stat` result.
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    pub(crate) fn of_stat(stat: &FileStat) -> Self {
        StatKey {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
            size: stat.st_size as u64,
            mtime_ns: nanos(stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            ctime_ns: nanos(stat.st_ctime as i64, stat.st_ctime_nsec as i64),
            mode: dir_fd::mode_of(stat),
        }
    }

    /// The key of `std`'s metadata (of an `lstat`).
    pub(crate) fn of_metadata(metadata: &std::fs::Metadata) -> Self {
        StatKey {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime_ns: nanos(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: nanos(metadata.ctime(), metadata.ctime_nsec()),
            mode: metadata.mode(),
        }
    }
}

/// A path as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// It does not exist (or is a FIFO, socket or device, not captured).
    Absent,
    /// A parent is a link or a file: the path is not inside the project.
    Blocked,
    /// It exists, with this key.
    Present(StatKey),
}

/// `lstat` of the path made of `components`, from `root`, no link
/// followed.
pub(crate) fn look(root: &OwnedFd, components: &[&str]) -> io::Result<Found> {
    let parent = match dir_fd::reach_parent(root, components)? {
        Reach::Parent(parent) => parent,
        Reach::Missing => return Ok(Found::Absent),
        Reach::Blocked => return Ok(Found::Blocked),
    };
    let name = components.last().copied().unwrap_or_default();
    Ok(match dir_fd::lstat_at(&parent, name)? {
        Some(stat) if dir_fd::kind_of_mode(dir_fd::mode_of(&stat)) != Kind::Other => {
            Found::Present(StatKey::of_stat(&stat))
        }
        _ => Found::Absent,
    })
}

/// The state of `rel` now, reading (and storing) a file's content: the
/// state and the key it was read under (`None` with `Found::Absent` or
/// `Found::Blocked`).
pub(crate) fn read(
    root: &OwnedFd,
    rel: &str,
    objects: &ObjectStore,
) -> io::Result<(Found, Option<FileState>)> {
    let components = rel_path::components(rel);
    let parent = match dir_fd::reach_parent(root, &components)? {
        Reach::Parent(parent) => parent,
        Reach::Missing => return Ok((Found::Absent, None)),
        Reach::Blocked => return Ok((Found::Blocked, None)),
    };
    let name = components.last().copied().unwrap_or_default();
    let Some(stat) = dir_fd::lstat_at(&parent, name)? else {
        return Ok((Found::Absent, None));
    };
    let bits = dir_fd::permission_bits(&stat);
    let state = match dir_fd::kind_of_mode(dir_fd::mode_of(&stat)) {
        Kind::Dir => FileState::Dir { mode: bits },
        Kind::Symlink => FileState::Symlink {
            target: dir_fd::read_link_at(&parent, name)?,
        },
        Kind::File => {
            let file = dir_fd::open_file_at(&parent, name)?;
            let stat = nix::sys::stat::fstat(&file).map_err(io::Error::from)?;
            let (blob, size) = objects.put(&file)?;
            let key = StatKey::of_stat(&stat);
            let state = FileState::File {
                blob,
                mode: dir_fd::permission_bits(&stat),
                size,
            };
            return Ok((Found::Present(key), Some(state)));
        }
        Kind::Other => return Ok((Found::Absent, None)),
    };
    Ok((Found::Present(StatKey::of_stat(&stat)), Some(state)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_links_and_folders_are_read_without_following_links() {
        let dir = std::env::temp_dir().join(format!("cp-observe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("p/d")).unwrap();
        std::fs::write(dir.join("p/f"), "x").unwrap();
        std::fs::set_permissions(dir.join("p/f"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("p/l")).unwrap();
        let objects = ObjectStore::new(&dir.join("store"), 1 << 20);
        let root = dir_fd::open_root(&dir.join("p")).unwrap();
        let (_, file) = read(&root, "f", &objects).unwrap();
        assert!(matches!(
            file,
            Some(FileState::File {
                mode: 0o755,
                size: 1,
                ..
            })
        ));
        let (_, link) = read(&root, "l", &objects).unwrap();
        assert_eq!(
            link,
            Some(FileState::Symlink {
                target: "/etc".into()
            })
        );
        assert!(matches!(
            read(&root, "d", &objects).unwrap().1,
            Some(FileState::Dir { .. })
        ));
        assert_eq!(
            read(&root, "l/passwd", &objects).unwrap(),
            (Found::Blocked, None)
        );
        assert_eq!(
            read(&root, "none/x", &objects).unwrap(),
            (Found::Absent, None)
        );
        assert_eq!(
            read(&root, "none", &objects).unwrap(),
            (Found::Absent, None)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
