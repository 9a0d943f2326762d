//! Where "always" approvals live: the [`ApprovalStore`] trait, the in-memory
//! default [`MemoryStore`] and the restart-proof [`JsonFileStore`].
//!
//! Approvals are keyed by *project* (opencode's "instance", one project
//! directory): every session of a project shares them, and two projects
//! never do. A [`PermissionGate`](crate::PermissionGate) service loads its
//! project's approvals once, at construction, appends to the store on every
//! `always` answer and removes from it on
//! [`PermissionGate::revoke`](crate::PermissionGate::revoke).
//!
//! The trait is synchronous on purpose: approvals change at human speed, a
//! few rules at a time, so a short blocking write is cheaper than the
//! machinery of an asynchronous one.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::rule::{Rule, Ruleset};

/// Why an [`ApprovalStore`] could not load or save approvals.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing a file failed.
    #[error("approval store: cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `create directory`, `replace`).
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// An approvals file exists but is not what this store writes. It is
    /// left untouched: fix or delete it by hand.
    #[error(
        "approval store: {} is corrupt ({source}); it was left untouched: fix it or delete it to start with no approvals",
        path.display()
    )]
    Corrupt {
        /// The corrupt file.
        path: PathBuf,
        /// What the JSON parser found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// An approvals file written by a newer (or unknown) format version. It
    /// is left untouched.
    #[error(
        "approval store: {} has format version {version}, but this version of the SDK reads only version {FILE_VERSION}; upgrade the SDK or move the file away",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version it declares.
        version: u32,
    },
    /// An approvals file names another project than the one it was opened
    /// for (a copied or renamed file, or two long project names whose
    /// shortened file names collide). It is left untouched.
    #[error(
        "approval store: {} holds the approvals of project {found:?}, not of {expected:?}; it was left untouched: move it back or delete it",
        path.display()
    )]
    WrongProject {
        /// The file.
        path: PathBuf,
        /// The project it was opened for.
        expected: String,
        /// The project it names.
        found: String,
    },
    /// Another process (or another store on the same directory) held the
    /// project's lock file for longer than the store waits.
    #[error(
        "approval store: {} stayed locked for {waited:?} by another process; retry, or remove the lock holder",
        path.display()
    )]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// How long the store waited.
        waited: Duration,
    },
    /// A custom store's own failure.
    #[error("approval store: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where a project's "always" approvals are kept.
///
/// Implementations must be safe to share between threads; every method may
/// be called from inside an async task, so they should return quickly.
pub trait ApprovalStore: Send + Sync {
    /// The approvals of `project`, in the order they were given. An unknown
    /// project has none.
    fn load(&self, project: &str) -> Result<Ruleset, StoreError>;

    /// Appends `rules` (in order) to the approvals of `project`.
    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError>;

    /// The approvals of `project`, for display. Same as [`load`](Self::load)
    /// unless a store has a cheaper way to list.
    fn list(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.load(project)
    }

    /// Removes every approval of `project` equal to `rule`. Returns whether
    /// anything was removed.
    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError>;
}

/// Locks a mutex, recovering the data of a poisoned one (a panic elsewhere
/// never makes approvals unreachable).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Approvals kept in memory only: opencode's behaviour. They start empty and
/// are gone when the process ends; every session using the same store and
/// project shares them.
#[derive(Debug, Default)]
pub struct MemoryStore {
    projects: Mutex<HashMap<String, Ruleset>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose `project` starts with `rules` already approved (handy
    /// for tests and for hosts that keep approvals elsewhere).
    pub fn with_approved(project: impl Into<String>, rules: Ruleset) -> Self {
        let store = Self::new();
        lock(&store.projects).insert(project.into(), rules);
        store
    }
}

impl ApprovalStore for MemoryStore {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        Ok(lock(&self.projects)
            .get(project)
            .cloned()
            .unwrap_or_default())
    }

    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        lock(&self.projects)
            .entry(project.to_string())
            .or_default()
            .extend(rules.iter().cloned());
        Ok(())
    }

    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        let mut projects = lock(&self.projects);
        let Some(rules) = projects.get_mut(project) else {
            return Ok(false);
        };
        let before = rules.len();
        rules.0.retain(|r| r != rule);
        Ok(rules.len() != before)
    }
}

/// The on-disk shape of one project's approvals file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsFile {
    /// Format version, currently 1.
    version: u32,
    /// The project the approvals belong to (the file name is only an
    /// encoding of it).
    project: String,
    /// The approvals, oldest first.
    approved: Ruleset,
}

const FILE_VERSION: u32 = 1;

/// Approvals kept in JSON files that survive restarts.
///
/// **Layout:** one file per project, `<dir>/project-<name>.json`, where
/// `<name>` is the project name with every byte other than ASCII letters,
/// digits, `-` and `_` written as `%XX` (so `/home/u/proj` becomes
/// `project-%2Fhome%2Fu%2Fproj.json`); names whose encoding would exceed
/// 160 bytes are shortened and suffixed with a hash of the full name. The
/// file holds `{"version": 1, "project": "<name>", "approved": [rules]}`.
///
/// **Writes are atomic:** the new content goes to a temporary file in the
/// same directory, is flushed to disk, then renamed over the old file, so a
/// crash leaves either the old or the new approvals, never half of them.
/// The temporary file has an unpredictable name and is created with
/// `O_EXCL` and `O_NOFOLLOW` (mode `0600` on Unix), so a symlink planted in
/// the directory cannot redirect the write; the approvals file and the lock
/// file are opened without following symlinks too.
///
/// **Processes share a project safely:** every read-modify-write (append,
/// revoke) holds an exclusive lock on `<dir>/.project-<name>.json.lock`
/// (`flock`, through [`File::try_lock`]; waiting at most 10 seconds, then
/// [`StoreError::Busy`]), so one process's revocation is never undone by
/// another's append. The gate re-reads the file before each decision.
///
/// **Corrupt files are errors:** a file that does not parse is reported as
/// [`StoreError::Corrupt`] naming its path, on load and before any write;
/// it is never silently replaced by an empty list. A file whose `project`
/// field names another project is [`StoreError::WrongProject`].
#[derive(Debug)]
pub struct JsonFileStore {
    dir: PathBuf,
    /// Serialises read-modify-write cycles within this process.
    write_lock: Mutex<()>,
}

/// Mixed into temporary file names (with per-process random keys).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How long a read-modify-write waits for another holder of the lock file.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// How many names are tried for a temporary file before giving up.
const TEMP_TRIES: usize = 16;

/// Makes `options` refuse to open a symlink as the last path component.
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    }
    options
}

/// 32 random bits drawn once per process: what keeps the request ids of
/// two processes sharing a database apart.
pub(crate) fn process_tag() -> u32 {
    static TAG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // The low half of 64 unpredictable bits; truncation is the point.
    *TAG.get_or_init(|| (unpredictable() & 0xffff_ffff) as u32)
}

/// 64 bits nobody outside this process can predict: SipHash, keyed with the
/// random keys std draws for every [`std::collections::hash_map::RandomState`],
/// over a counter, the process id and the time.
fn unpredictable() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish()
}

/// Creates a new file at `path` for writing: fails if anything (a file or a
/// symlink) is already there.
fn create_exclusive(path: &Path) -> io::Result<File> {
    no_follow(OpenOptions::new().write(true).create_new(true)).open(path)
}

impl JsonFileStore {
    /// A store keeping its files in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        JsonFileStore {
            dir: dir.into(),
            write_lock: Mutex::new(()),
        }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding `project`'s approvals.
    pub fn path_for(&self, project: &str) -> PathBuf {
        self.dir
            .join(format!("project-{}.json", encode_project(project)))
    }

    /// The lock file serialising read-modify-write cycles on `project`.
    pub fn lock_path_for(&self, project: &str) -> PathBuf {
        self.dir
            .join(format!(".project-{}.json.lock", encode_project(project)))
    }

    fn read(&self, project: &str) -> Result<Ruleset, StoreError> {
        let path = self.path_for(project);
        let opened = no_follow(OpenOptions::new().read(true))
            .open(&path)
            .and_then(|mut file| {
                let mut text = String::new();
                file.read_to_string(&mut text).map(|_| text)
            });
        let text = match opened {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Ruleset::new()),
            Err(source) => {
                return Err(StoreError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
        };
        match serde_json::from_str::<ApprovalsFile>(&text) {
            Ok(file) if file.version != FILE_VERSION => Err(StoreError::UnsupportedVersion {
                path,
                version: file.version,
            }),
            Ok(file) if file.project != project => Err(StoreError::WrongProject {
                path,
                expected: project.to_string(),
                found: file.project,
            }),
            Ok(file) => Ok(file.approved),
            Err(source) => Err(StoreError::Corrupt { path, source }),
        }
    }

    /// Creates the store's folder `0700` (an existing one is tightened:
    /// its files name every approved command).
    fn create_dir(&self) -> Result<(), StoreError> {
        crate::private_files::create_private_dir_all(&self.dir)
            .and_then(|()| crate::private_files::tighten(&self.dir))
            .map_err(|source| StoreError::Io {
                action: "create directory",
                path: self.dir.clone(),
                source,
            })
    }

    /// Takes the cross-process lock of `project`; it is released when the
    /// returned file is dropped.
    fn lock_project(&self, project: &str) -> Result<File, StoreError> {
        self.create_dir()?;
        let path = self.lock_path_for(project);
        let file =
            match no_follow(OpenOptions::new().read(true).write(true).create(true)).open(&path) {
                Ok(file) => file,
                Err(source) => {
                    return Err(StoreError::Io {
                        action: "open the lock file",
                        path,
                        source,
                    });
                }
            };
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(StoreError::Busy {
                        path,
                        waited: LOCK_WAIT,
                    });
                }
                Err(TryLockError::Error(source)) => {
                    return Err(StoreError::Io {
                        action: "lock",
                        path,
                        source,
                    });
                }
            }
        }
    }

    /// Runs a read-modify-write cycle on `project`'s approvals under both
    /// locks; `change` returns whether to write the list back.
    fn update<T>(
        &self,
        project: &str,
        change: impl FnOnce(&mut Ruleset) -> (bool, T),
    ) -> Result<T, StoreError> {
        let _in_process = lock(&self.write_lock);
        let _across_processes = self.lock_project(project)?;
        let mut approved = self.read(project)?;
        let (write, out) = change(&mut approved);
        if write {
            self.write(project, &approved)?;
        }
        Ok(out)
    }

    fn write(&self, project: &str, approved: &Ruleset) -> Result<(), StoreError> {
        let path = self.path_for(project);
        self.create_dir()?;
        let file = ApprovalsFile {
            version: FILE_VERSION,
            project: project.to_string(),
            approved: approved.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file)
            .map_err(|err| StoreError::Backend(Box::new(err)))?;
        text.push('\n');

        let (temp, mut out) = self.create_temp(project)?;
        let written = out.write_all(text.as_bytes()).and_then(|()| out.sync_all());
        drop(out);
        if let Err(source) = written {
            let _ = fs::remove_file(&temp);
            return Err(StoreError::Io {
                action: "write",
                path: temp,
                source,
            });
        }
        if let Err(source) = fs::rename(&temp, &path) {
            let _ = fs::remove_file(&temp);
            return Err(StoreError::Io {
                action: "replace",
                path,
                source,
            });
        }
        Ok(())
    }
}

impl JsonFileStore {
    /// A new, empty temporary file next to `project`'s approvals file, under
    /// an unpredictable name.
    fn create_temp(&self, project: &str) -> Result<(PathBuf, File), StoreError> {
        let mut last = None;
        for _ in 0..TEMP_TRIES {
            let temp = self.dir.join(format!(
                ".project-{}.json.{:016x}.tmp",
                encode_project(project),
                unpredictable()
            ));
            match create_exclusive(&temp) {
                Ok(file) => return Ok((temp, file)),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some((temp, err)),
                Err(source) => {
                    return Err(StoreError::Io {
                        action: "create",
                        path: temp,
                        source,
                    });
                }
            }
        }
        let (path, source) = last.unwrap_or_else(|| {
            (
                self.dir.clone(),
                io::Error::other("no temporary file name was tried"),
            )
        });
        Err(StoreError::Io {
            action: "create",
            path,
            source,
        })
    }
}

impl ApprovalStore for JsonFileStore {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.read(project)
    }

    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        if rules.is_empty() {
            return Ok(());
        }
        self.update(project, |approved| {
            approved.extend(rules.iter().cloned());
            (true, ())
        })
    }

    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        self.update(project, |approved| {
            let before = approved.len();
            approved.0.retain(|r| r != rule);
            let removed = approved.len() != before;
            (removed, removed)
        })
    }
}

impl fmt::Display for JsonFileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON approvals in {}", self.dir.display())
    }
}

/// Longest encoded project name used verbatim in a file name.
const MAX_ENCODED: usize = 160;

/// Encodes a project name into a file-name-safe string (see
/// [`JsonFileStore`]).
fn encode_project(project: &str) -> String {
    let mut out = String::with_capacity(project.len());
    for byte in project.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    if out.len() > MAX_ENCODED {
        // Cut on a char boundary (the encoding is ASCII) and add a stable
        // 64-bit FNV-1a hash of the full name to keep names distinct.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in project.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.truncate(MAX_ENCODED);
        out.push_str(&format!("~{hash:016x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_project_names() {
        assert_eq!(encode_project("default"), "default");
        assert_eq!(encode_project("/home/u/proj"), "%2Fhome%2Fu%2Fproj");
        assert_eq!(encode_project("a.b"), "a%2Eb");
        let long = "x/".repeat(200);
        let encoded = encode_project(&long);
        assert!(encoded.len() <= MAX_ENCODED + 17);
        assert_ne!(encoded, encode_project(&"x/".repeat(201)));
    }

    #[test]
    fn memory_store_appends_lists_and_revokes() {
        let store = MemoryStore::new();
        let rule = Rule::new("bash", "ls *", crate::rule::Action::Allow);
        store.append("p", std::slice::from_ref(&rule)).unwrap();
        assert_eq!(
            store.list("p").unwrap().rules(),
            std::slice::from_ref(&rule)
        );
        assert!(store.load("q").unwrap().is_empty());
        assert!(store.revoke("p", &rule).unwrap());
        assert!(!store.revoke("p", &rule).unwrap());
        assert!(store.load("p").unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn file_store_is_private_and_tightens_an_open_folder() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let root = std::env::temp_dir().join(format!("agentgate-approvals-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let dir = root.join("approvals");
        let store = JsonFileStore::new(&dir);
        let rule = Rule::new("bash", "ls *", crate::rule::Action::Allow);
        store.append("p", std::slice::from_ref(&rule)).unwrap();
        assert_eq!(mode(&dir), 0o700);
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path) & 0o077, 0, "{}", path.display());
        }
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        store.append("p", std::slice::from_ref(&rule)).unwrap();
        assert_eq!(mode(&dir), 0o700);
        fs::remove_dir_all(&root).unwrap();
    }
}
