//! Where "always" approvals live: the [`ApprovalStore`] trait, the in-memory
//! default [`MemoryStore`] and the restart-proof [`JsonFileStore`].
//!
//! Approvals are keyed by *project* (opencode's "instance", one project
//! directory): every session of a project shares them, and two projects
//! never do. A [`Permissions`](crate::Permissions) service loads its
//! project's approvals once, at construction, appends to the store on every
//! `always` answer and removes from it on
//! [`Permissions::revoke`](crate::Permissions::revoke).
//!
//! The trait is synchronous on purpose: approvals change at human speed, a
//! few rules at a time, so a short blocking write is cheaper than the
//! machinery of an asynchronous one.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

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
///
/// **Corrupt files are errors:** a file that does not parse is reported as
/// [`StoreError::Corrupt`] naming its path, on load and before any write;
/// it is never silently replaced by an empty list.
#[derive(Debug)]
pub struct JsonFileStore {
    dir: PathBuf,
    /// Serialises read-modify-write cycles within this process.
    write_lock: Mutex<()>,
}

/// Distinguishes temporary files of concurrent writers in one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

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

    fn read(&self, project: &str) -> Result<Ruleset, StoreError> {
        let path = self.path_for(project);
        let text = match fs::read_to_string(&path) {
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
            Ok(file) if file.version == FILE_VERSION => Ok(file.approved),
            Ok(file) => Err(StoreError::UnsupportedVersion {
                path,
                version: file.version,
            }),
            Err(source) => Err(StoreError::Corrupt { path, source }),
        }
    }

    fn write(&self, project: &str, approved: &Ruleset) -> Result<(), StoreError> {
        let path = self.path_for(project);
        fs::create_dir_all(&self.dir).map_err(|source| StoreError::Io {
            action: "create directory",
            path: self.dir.clone(),
            source,
        })?;
        let file = ApprovalsFile {
            version: FILE_VERSION,
            project: project.to_string(),
            approved: approved.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file)
            .map_err(|err| StoreError::Backend(Box::new(err)))?;
        text.push('\n');

        let temp = self.dir.join(format!(
            ".project-{}.json.tmp-{}-{}",
            encode_project(project),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut out = fs::File::create(&temp)?;
            out.write_all(text.as_bytes())?;
            out.sync_all()
        })();
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

impl ApprovalStore for JsonFileStore {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.read(project)
    }

    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        if rules.is_empty() {
            return Ok(());
        }
        let _guard = lock(&self.write_lock);
        let mut approved = self.read(project)?;
        approved.extend(rules.iter().cloned());
        self.write(project, &approved)
    }

    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        let _guard = lock(&self.write_lock);
        let mut approved = self.read(project)?;
        let before = approved.len();
        approved.0.retain(|r| r != rule);
        if approved.len() == before {
            return Ok(false);
        }
        self.write(project, &approved)?;
        Ok(true)
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
}
