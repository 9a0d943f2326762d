//! What grep remembers between searches: for each small text file it has
//! read, the file's [`TrigramFilter`] and the `lstat` data of the version
//! it was built from. A later search stats the file instead of reading
//! it; when the data is the same and the filter lacks a trigram the
//! pattern requires, the file holds no match and is not opened.
//!
//! One map for the whole process (sessions and agents in one project
//! share it), in shards so that the walker's threads rarely wait, bounded
//! by [`SearchLimits::grep_index_bytes`](crate::SearchLimits).
//!
//! When a filter may be kept, so that any later write shows in the
//! version:
//! - The file is on a local file system whose times the kernel sets
//!   ([`LOCAL_FILE_SYSTEMS`]: ext4, xfs, btrfs, tmpfs, overlayfs, f2fs,
//!   zfs, bcachefs, reiserfs). On a network file system the server sets
//!   them with its own clock, and FUSE with whatever its program says.
//! - Its change time and modification time are at least [`SETTLED`]
//!   before the search began, which is many times the coarsest kernel
//!   clock tick (10 ms). A write after the `fstat` that keyed the filter
//!   then gets a later change time, which nothing but the kernel sets, so
//!   the version no longer matches: git's "racily clean" rule.
//!
//! Not seen: a file changed through a shared memory mapping whose pages
//! were already writable (the kernel sets no new time), or with the
//! system clock set back to the very tick of the last change.

use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use nix::sys::stat::FileStat;
use nix::sys::statfs::{self, FsType};

use crate::search::trigrams::{Required, TrigramFilter};

/// How long before a search a file must have last changed for its filter
/// to be kept: ten times the coarsest kernel clock tick.
pub(crate) const SETTLED: Duration = Duration::from_millis(100);

/// The file systems whose files may have filters: local ones, whose
/// change times the kernel sets from its own clock.
pub(crate) const LOCAL_FILE_SYSTEMS: [FsType; 9] = [
    statfs::EXT4_SUPER_MAGIC, // ext2, ext3 and ext4 share it
    statfs::XFS_SUPER_MAGIC,
    statfs::BTRFS_SUPER_MAGIC,
    statfs::TMPFS_MAGIC,
    statfs::OVERLAYFS_SUPER_MAGIC,
    statfs::F2FS_SUPER_MAGIC,
    FsType(0x2fc1_2fc1), // zfs
    FsType(0xca45_1a4e), // bcachefs
    statfs::REISERFS_SUPER_MAGIC,
];

/// Whether the file system holding `fd` is one of [`LOCAL_FILE_SYSTEMS`].
fn is_local(fd: impl AsFd) -> bool {
    statfs::fstatfs(fd).is_ok_and(|stat| LOCAL_FILE_SYSTEMS.contains(&stat.filesystem_type()))
}

/// Whether `path` is on one of [`LOCAL_FILE_SYSTEMS`]: a search rooted
/// elsewhere does not use the filters (nor pay an `fstat` per file for
/// them).
pub(crate) fn is_local_path(path: &Path) -> bool {
    statfs::statfs(path).is_ok_and(|stat| LOCAL_FILE_SYSTEMS.contains(&stat.filesystem_type()))
}

/// The `lstat` data that tells one version of a file from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileVersion {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileVersion {
    /// The version `stat` describes.
    // The `stat` fields' types differ between targets (32-bit ones among
    // them): the conversions are identities only on some.
    #[allow(clippy::useless_conversion)]
    pub(crate) fn of(stat: &FileStat) -> FileVersion {
        FileVersion {
            dev: u64::from(stat.st_dev),
            ino: u64::from(stat.st_ino),
            size: u64::try_from(stat.st_size).unwrap_or(u64::MAX),
            mtime: (i64::from(stat.st_mtime), i64::from(stat.st_mtime_nsec)),
            ctime: (i64::from(stat.st_ctime), i64::from(stat.st_ctime_nsec)),
        }
    }

    /// Whether both its times are at least [`SETTLED`] before `start`.
    fn settled(&self, start: SystemTime) -> bool {
        let Some(limit) = start
            .checked_sub(SETTLED)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        else {
            return false;
        };
        let before = |(secs, nanos): (i64, i64)| {
            u64::try_from(secs).is_ok_and(|secs| {
                let nanos = u32::try_from(nanos).unwrap_or(u32::MAX);
                Duration::new(secs, nanos.min(999_999_999)) < limit
            })
        };
        before(self.mtime) && before(self.ctime)
    }
}

/// A filter and the version it was built from.
#[derive(Debug)]
pub(crate) struct Entry {
    version: FileVersion,
    filter: TrigramFilter,
}

impl Entry {
    /// What the entry says of `required` for the file now at `version`:
    /// [`Verdict::Learn`] when it was built from another version.
    pub(crate) fn verdict(&self, version: &FileVersion, required: &Required) -> Verdict {
        if self.version != *version {
            Verdict::Learn
        } else if required.admits(|t| self.filter.may_contain(t)) {
            Verdict::Known
        } else {
            Verdict::NoMatch
        }
    }

    /// What the entry costs in memory, about: the filter, the path, the
    /// map's slot.
    fn cost(&self, path: &Path) -> usize {
        self.filter.size() + path.as_os_str().len() + 96
    }
}

/// What the index says of a file for one pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The file is as it was, and holds no match: not to be read.
    NoMatch,
    /// The file is as it was and may hold a match: read it, nothing to
    /// learn.
    Known,
    /// Unknown or changed: read it, and keep its filter.
    Learn,
}

const SHARDS: usize = 16;

/// The map of one shard, keyed by the path's bytes (`Path`'s own hash
/// and equality walk its components, which showed in the profile).
/// foldhash, seeded per process, is several times faster than SipHash on
/// paths and still not predictable by a repository naming its files to
/// collide.
type Shard = HashMap<OsString, Arc<Entry>, foldhash::fast::RandomState>;

/// The process's filters, by absolute path.
#[derive(Debug)]
pub(crate) struct FileFilters {
    shards: [Mutex<Shard>; SHARDS],
    hasher: foldhash::fast::RandomState,
    bytes: AtomicUsize,
    /// Whether each device seen is on a local file system.
    devices: Mutex<HashMap<u64, bool>>,
}

static FILTERS: LazyLock<FileFilters> = LazyLock::new(FileFilters::new);

impl FileFilters {
    fn new() -> FileFilters {
        FileFilters {
            shards: std::array::from_fn(|_| Mutex::new(Shard::default())),
            hasher: foldhash::fast::RandomState::default(),
            bytes: AtomicUsize::new(0),
            devices: Mutex::new(HashMap::new()),
        }
    }

    /// The process's filters.
    pub(crate) fn global() -> &'static FileFilters {
        &FILTERS
    }

    fn shard(&self, path: &Path) -> MutexGuard<'_, Shard> {
        let index = (self.hasher.hash_one(path.as_os_str()) as usize) % SHARDS;
        self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The filter kept for `path` (of any version).
    pub(crate) fn get(&self, path: &Path) -> Option<Arc<Entry>> {
        self.shard(path).get(path.as_os_str()).cloned()
    }

    /// Drops `entry`, the filter of `path`, found to be of another
    /// version (unless another search has replaced it meanwhile).
    pub(crate) fn forget(&self, path: &Path, entry: &Arc<Entry>) {
        let mut shard = self.shard(path);
        if shard
            .get(path.as_os_str())
            .is_some_and(|kept| Arc::ptr_eq(kept, entry))
            && let Some(entry) = shard.remove(path.as_os_str())
        {
            self.bytes.fetch_sub(entry.cost(path), Ordering::Relaxed);
        }
    }

    /// Whether the device of `version` (whose file `fd` is open) is on a
    /// local file system, asked once per device.
    fn local_device(&self, version: &FileVersion, fd: impl AsFd) -> bool {
        let mut devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        *devices.entry(version.dev).or_insert_with(|| is_local(fd))
    }

    /// Keeps the filter of `bytes`, the content of `path` (open as `fd`)
    /// at `version`, when that version was settled at `start`, is on a
    /// local file system, and the index stays within `budget` bytes.
    pub(crate) fn learn(
        &self,
        path: &Path,
        fd: impl AsFd,
        version: FileVersion,
        bytes: &[u8],
        start: SystemTime,
        budget: usize,
    ) {
        if !version.settled(start) || !self.local_device(&version, fd) {
            return;
        }
        let entry = Entry {
            version,
            filter: TrigramFilter::of(bytes),
        };
        let cost = entry.cost(path);
        if self.bytes.load(Ordering::Relaxed).saturating_add(cost) > budget {
            return;
        }
        self.bytes.fetch_add(cost, Ordering::Relaxed);
        if let Some(old) = self
            .shard(path)
            .insert(path.as_os_str().to_owned(), Arc::new(entry))
        {
            self.bytes.fetch_sub(old.cost(path), Ordering::Relaxed);
        }
    }

    /// The memory the filters hold, about, in bytes.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentgate-filters-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_changed_since_is_read_again() {
        let dir = scratch("changed");
        let path = dir.join("a.rs");
        std::fs::write(&path, "let value = 1;\n").unwrap();
        let filters = FileFilters::new();
        let later = SystemTime::now() + Duration::from_secs(10);
        let version = FileVersion::of(&nix::sys::stat::lstat(&path).unwrap());
        let required = Required::of("needle");
        assert!(filters.get(&path).is_none());
        let file = std::fs::File::open(&path).unwrap();
        let text = b"let value = 1;\n";
        filters.learn(&path, &file, version, text, later, usize::MAX);
        let entry = filters.get(&path).unwrap();
        assert_eq!(entry.verdict(&version, &required), Verdict::NoMatch);
        let value = Required::of("value");
        assert_eq!(entry.verdict(&version, &value), Verdict::Known);
        // Same size, modification time put back: the change time moved.
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, "let needle = 1;\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let now = FileVersion::of(&nix::sys::stat::lstat(&path).unwrap());
        assert_ne!(now, version);
        assert_eq!(entry.verdict(&now, &required), Verdict::Learn);
        filters.forget(&path, &entry);
        assert!(filters.get(&path).is_none(), "the old filter is dropped");
        assert_eq!(filters.bytes(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_changed_just_before_the_search_is_not_kept() {
        let dir = scratch("fresh");
        let path = dir.join("a.rs");
        std::fs::write(&path, "fresh\n").unwrap();
        let filters = FileFilters::new();
        let version = FileVersion::of(&nix::sys::stat::lstat(&path).unwrap());
        let file = std::fs::File::open(&path).unwrap();
        filters.learn(
            &path,
            &file,
            version,
            b"fresh\n",
            SystemTime::now(),
            usize::MAX,
        );
        assert!(filters.get(&path).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_budget_bounds_the_index() {
        let dir = scratch("budget");
        let filters = FileFilters::new();
        let later = SystemTime::now() + Duration::from_secs(10);
        for i in 0..20 {
            let path = dir.join(format!("f{i}"));
            std::fs::write(&path, "x".repeat(1000)).unwrap();
            let version = FileVersion::of(&nix::sys::stat::lstat(&path).unwrap());
            let file = std::fs::File::open(&path).unwrap();
            let text = "x".repeat(1000);
            filters.learn(&path, &file, version, text.as_bytes(), later, 2000);
        }
        assert!(filters.bytes() <= 2000, "{}", filters.bytes());
        assert!(filters.bytes() > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
