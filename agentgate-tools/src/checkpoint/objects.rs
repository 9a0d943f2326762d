//! The content-addressed object store: `<dir>/objects/<2 hex>/<62 hex>`,
//! named by the SHA-256 of the content. An object is written once, to a
//! temporary file in `<dir>/objects/` (the same file system) renamed into
//! place, so a reader sees a whole object or none; storing content that is
//! already there only refreshes its time.
//!
//! A size cap ([`ObjectStore::new`]'s `max_bytes`) prunes the objects
//! least recently stored first when the total exceeds it. A change whose
//! content was pruned cannot be taken back:
//! [`CheckpointError::Missing`](agentgate_core::CheckpointError::Missing).

use agentgate_permission::private_files::{create_private_dir_all, private_file_options};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The object store of one checkpoint folder.
#[derive(Debug)]
pub(crate) struct ObjectStore {
    objects: PathBuf,
    max_bytes: u64,
    /// The total size of the objects, counted at the first store.
    total: Mutex<Option<u64>>,
}

/// Whether `blob` has the shape of an object id (64 lowercase hex digits).
pub(crate) fn is_blob_id(blob: &str) -> bool {
    blob.len() == 64
        && blob
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The lowercase hex of a digest.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies `reader` into `writer` while hashing: the content's id and size.
pub(crate) fn copy_hashed(
    mut reader: impl Read,
    mut writer: impl Write,
) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        hasher.update(&buffer[..read]);
        writer.write_all(&buffer[..read])?;
        size += read as u64;
    }
    Ok((hex(&hasher.finalize()), size))
}

impl ObjectStore {
    /// The store under `dir` (created at the first write), pruned to
    /// `max_bytes`.
    pub(crate) fn new(dir: &Path, max_bytes: u64) -> Self {
        ObjectStore {
            objects: dir.join("objects"),
            max_bytes,
            total: Mutex::new(None),
        }
    }

    /// Where object `blob` lives (`blob` must satisfy [`is_blob_id`]).
    pub(crate) fn path_of(&self, blob: &str) -> PathBuf {
        self.objects.join(&blob[..2]).join(&blob[2..])
    }

    /// Where object `blob` lives, when `blob` is an object id.
    pub(crate) fn path_of_checked(&self, blob: &str) -> Option<PathBuf> {
        is_blob_id(blob).then(|| self.path_of(blob))
    }

    /// Whether object `blob` is stored.
    pub(crate) fn contains(&self, blob: &str) -> bool {
        is_blob_id(blob) && self.path_of(blob).is_file()
    }

    /// Opens object `blob`: `None` when it is not stored.
    pub(crate) fn open(&self, blob: &str) -> io::Result<Option<File>> {
        if !is_blob_id(blob) {
            return Ok(None);
        }
        match File::open(self.path_of(blob)) {
            Ok(file) => Ok(Some(file)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Stores what `reader` yields: its id and size.
    pub(crate) fn put(&self, reader: impl Read) -> io::Result<(String, u64)> {
        // Copies of the project's files, its secrets included: the owner's
        // only, wherever the store lives.
        create_private_dir_all(&self.objects)?;
        let temp = self.objects.join(format!(
            "tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let stored = (|| {
            let file =
                private_file_options(File::options().write(true).create_new(true)).open(&temp)?;
            let (blob, size) = copy_hashed(reader, io::BufWriter::new(&file))?;
            drop(file);
            let added = self.settle(&temp, &blob)?;
            Ok::<_, io::Error>((blob, size, added))
        })();
        let (blob, size, added) = match stored {
            Ok(stored) => stored,
            Err(error) => {
                let _ = fs::remove_file(&temp);
                return Err(error);
            }
        };
        if added {
            self.count(size, &blob)?;
        }
        Ok((blob, size))
    }

    /// Moves the temporary file `temp` into place as `blob`, or drops it
    /// when the object is already there: whether it was added.
    fn settle(&self, temp: &Path, blob: &str) -> io::Result<bool> {
        let target = self.path_of(blob);
        if let Ok(existing) = File::options().append(true).open(&target) {
            fs::remove_file(temp)?;
            let _ = existing.set_modified(SystemTime::now());
            return Ok(false);
        }
        if let Some(folder) = target.parent() {
            create_private_dir_all(folder)?;
        }
        fs::rename(temp, &target)?;
        Ok(true)
    }

    /// Adds `size` to the total and prunes past the cap, keeping `keep`.
    fn count(&self, size: u64, keep: &str) -> io::Result<()> {
        let mut total = match self.total.lock() {
            Ok(total) => total,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = match *total {
            Some(known) => known + size,
            None => self.listing()?.iter().map(|(_, _, size)| size).sum(),
        };
        *total = Some(if now > self.max_bytes {
            self.prune(now, keep)?
        } else {
            now
        });
        Ok(())
    }

    /// Removes the oldest objects until the total is within the cap: the
    /// new total.
    fn prune(&self, mut total: u64, keep: &str) -> io::Result<u64> {
        let mut objects = self.listing()?;
        objects.sort_by_key(|(_, time, _)| *time);
        let kept = self.path_of(keep);
        for (path, _, size) in objects {
            if total <= self.max_bytes {
                break;
            }
            if path != kept && fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
        Ok(total)
    }

    /// Every stored object: its path, time and size.
    fn listing(&self) -> io::Result<Vec<(PathBuf, SystemTime, u64)>> {
        let mut found = Vec::new();
        let Ok(folders) = fs::read_dir(&self.objects) else {
            return Ok(found);
        };
        for folder in folders.flatten() {
            if !folder.file_type().is_ok_and(|kind| kind.is_dir()) {
                continue;
            }
            for object in fs::read_dir(folder.path())?.flatten() {
                let metadata = object.metadata()?;
                let time = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                found.push((object.path(), time, metadata.len()));
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cp-objects-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn stored_copies_are_the_owners_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("private");
        let store = ObjectStore::new(&dir, 1 << 30);
        let (blob, _) = store.put(&b"API_KEY=secret"[..]).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&store.path_of(&blob)), 0o600);
        assert_eq!(mode(store.path_of(&blob).parent().unwrap()), 0o700);
        assert_eq!(mode(&dir.join("objects")), 0o700);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn content_is_stored_once_under_its_sha256() {
        let dir = temp("once");
        let store = ObjectStore::new(&dir, 1 << 30);
        let (blob, size) = store.put(&b"hello"[..]).unwrap();
        assert_eq!(
            blob,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(size, 5);
        assert_eq!(store.put(&b"hello"[..]).unwrap().0, blob);
        assert!(store.path_of(&blob).ends_with(
            "objects/2c/f24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        ));
        let mut text = String::new();
        store
            .open(&blob)
            .unwrap()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "hello");
        assert_eq!(
            fs::read_dir(dir.join("objects")).unwrap().count(),
            1,
            "no temporary file left"
        );
        assert!(store.open("../../etc/passwd").unwrap().is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cap_prunes_the_oldest_objects_first() {
        let dir = temp("cap");
        let store = ObjectStore::new(&dir, 25);
        let (first, _) = store.put(&[1u8; 10][..]).unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        File::options()
            .append(true)
            .open(store.path_of(&first))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let (second, _) = store.put(&[2u8; 10][..]).unwrap();
        let (third, _) = store.put(&[3u8; 10][..]).unwrap();
        assert!(!store.contains(&first), "the oldest is pruned");
        assert!(store.contains(&second) && store.contains(&third));
        fs::remove_dir_all(&dir).unwrap();
    }
}
