//! The user's record of trusted projects: one small private JSON file,
//! `<data dir>/trusted-projects.json` (0600, its folder 0700), written
//! whole through a temporary file and a rename. A file rather than a table
//! of the SQLite store so that it works the same with and without the
//! `sqlite` feature, and an embedder can point it anywhere.
//!
//! A record holds, per project directory, the parts of its layers that
//! trust enabled ([`RiskyPart`]s, values with outside substitutions
//! blanked) and their fingerprint. Trust holds while every risky part the
//! project has now is one of those: a new or changed part (a new MCP
//! command, a new URL, a looser rule) makes it untrusted again, and
//! [`TrustRecord::changes`] names it. The comparison is on the parts
//! themselves, so the fingerprint is only a short name for them.

use agentgate_permission::private_files::create_private_dir_all;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::trust::{RiskyPart, canonical_json};

/// The file name of the record in the data directory.
pub const TRUST_FILE: &str = "trusted-projects.json";

/// Why the record could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustStoreError {
    /// Reading or writing the file failed.
    #[error("the trusted-projects record {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a record this version reads.
    #[error(
        "the trusted-projects record {path} is not valid ({message}); fix or delete it, then run `agent trust` again"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// One trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TrustRecord {
    /// The project directory (its worktree root, symbolic links resolved).
    pub directory: String,
    /// When it was trusted, seconds since the Unix epoch.
    pub trusted_at: u64,
    /// [`fingerprint`] of `parts`.
    pub fingerprint: String,
    /// What trust enabled when it was given.
    pub parts: Vec<RiskyPart>,
}

impl TrustRecord {
    /// The parts of `current` this record does not cover (new or changed
    /// since trust was given); empty while trust holds.
    pub fn changes(&self, current: &[RiskyPart]) -> Vec<RiskyPart> {
        current
            .iter()
            .filter(|part| !self.parts.contains(part))
            .cloned()
            .collect()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    projects: Vec<TrustRecord>,
}

/// A short name of a set of parts: FNV-1a (64 bits) of their canonical
/// JSON, sorted, as 16 hex digits.
pub fn fingerprint(parts: &[RiskyPart]) -> String {
    let mut sorted: Vec<&RiskyPart> = parts.iter().collect();
    sorted.sort();
    let text = canonical_json(&serde_json::to_value(&sorted).unwrap_or_default());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The key a directory is recorded under: the path with symbolic links
/// resolved (as given when it does not exist).
pub fn project_key(directory: &Path) -> String {
    std::fs::canonicalize(directory)
        .unwrap_or_else(|_| directory.to_path_buf())
        .display()
        .to_string()
}

/// The record file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The record at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The record in a data directory ([`TRUST_FILE`]).
    pub fn in_data_dir(dir: &Path) -> Self {
        TrustStore::new(dir.join(TRUST_FILE))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<TrustFile, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
            Err(source) => {
                return Err(TrustStoreError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| TrustStoreError::Invalid {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    fn write(&self, file: &TrustFile) -> Result<(), TrustStoreError> {
        let io = |source| TrustStoreError::Io {
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_string_pretty(file).unwrap_or_default();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir_all(dir).map_err(io)?;
        let temporary = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let mut out = private_file(&temporary, true).map_err(io)?;
        out.write_all(text.as_bytes()).map_err(io)?;
        out.sync_all().map_err(io)?;
        drop(out);
        std::fs::rename(&temporary, &self.path).map_err(io)
    }

    /// Runs `change` on the record file under an exclusive lock (a
    /// `.lock` file beside it), so two processes recording or revoking at
    /// once do not lose each other's change.
    fn locked<T>(
        &self,
        change: impl FnOnce(&Self) -> Result<T, TrustStoreError>,
    ) -> Result<T, TrustStoreError> {
        let lock_path = self.path.with_extension("lock");
        let io = |source| TrustStoreError::Io {
            path: lock_path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir_all(dir).map_err(io)?;
        let lock = private_file(&lock_path, false).map_err(io)?;
        lock.lock().map_err(io)?;
        let result = change(self);
        drop(lock);
        result
    }

    /// Every trusted project.
    pub fn list(&self) -> Result<Vec<TrustRecord>, TrustStoreError> {
        Ok(self.read()?.projects)
    }

    /// The record of `directory`, if it is trusted.
    pub fn get(&self, directory: &Path) -> Result<Option<TrustRecord>, TrustStoreError> {
        let key = project_key(directory);
        Ok(self
            .read()?
            .projects
            .into_iter()
            .find(|r| r.directory == key))
    }

    /// Records `directory` as trusted with what trust enables now,
    /// replacing an earlier record.
    pub fn record(
        &self,
        directory: &Path,
        parts: &[RiskyPart],
    ) -> Result<TrustRecord, TrustStoreError> {
        self.locked(|store| store.record_unlocked(directory, parts))
    }

    fn record_unlocked(
        &self,
        directory: &Path,
        parts: &[RiskyPart],
    ) -> Result<TrustRecord, TrustStoreError> {
        let mut file = self.read()?;
        let key = project_key(directory);
        file.projects.retain(|r| r.directory != key);
        let record = TrustRecord {
            directory: key,
            trusted_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            fingerprint: fingerprint(parts),
            parts: parts.to_vec(),
        };
        file.projects.push(record.clone());
        file.version = 1;
        self.write(&file)?;
        Ok(record)
    }

    /// Forgets `directory`; whether it was trusted.
    pub fn revoke(&self, directory: &Path) -> Result<bool, TrustStoreError> {
        self.locked(|store| store.revoke_unlocked(directory))
    }

    fn revoke_unlocked(&self, directory: &Path) -> Result<bool, TrustStoreError> {
        let mut file = self.read()?;
        let key = project_key(directory);
        let before = file.projects.len();
        file.projects
            .retain(|r| r.directory != key && r.directory != directory.display().to_string());
        if file.projects.len() == before {
            return Ok(false);
        }
        self.write(&file)?;
        Ok(true)
    }
}

/// A file only its owner reads and writes (0600 on Unix, whatever the
/// umask), created if missing; `truncate` empties it.
fn private_file(path: &Path, truncate: bool) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(truncate);
    agentgate_permission::private_files::private_file_options(&mut options).open(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn records_made_at_once_are_all_kept() {
        let dir = std::env::temp_dir().join(format!("trust-store-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = TrustStore::in_data_dir(&dir);
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let store = store.clone();
                let dir = dir.clone();
                std::thread::spawn(move || {
                    store
                        .record(&dir.join(format!("project-{n}")), &[])
                        .unwrap();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(store.list().unwrap().len(), 8, "no record was lost");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
