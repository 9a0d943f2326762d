//! Migration from the file stores: [`import_file_store`] copies a
//! [`FileSessionStore`] directory into any [`SessionStore`],
//! [`import_json_approvals`] a [`JsonFileStore`] directory into any
//! [`ApprovalStore`]. Both leave the files in place and are idempotent:
//! running them twice changes nothing the second time.

use std::path::Path;

use agentgate_core::{FileSessionStore, SessionStore, SessionStoreError};
use agentgate_permission::{ApprovalStore, JsonFileStore, Rule, StoreError};

/// What an import copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Sessions read from the source (each written, or rewritten unchanged).
    pub sessions: usize,
    /// Messages read from the source.
    pub messages: usize,
    /// Approvals added (those already present are not added twice).
    pub approvals: usize,
}

/// Copies every session and message of the [`FileSessionStore`] directory
/// `dir` into `target`, sessions in the file store's order and each
/// session's messages oldest first. Writes replace by id, so a second run
/// leaves `target` as the first left it. A directory that does not exist
/// (or has no `sessions/`) imports nothing and is not created.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agentgate_core::{FileSessionStore, MemorySessionStore, Message, Session, SessionStore};
///
/// let dir = std::env::temp_dir().join(format!("doc-import-{}", std::process::id()));
/// let files = FileSessionStore::open(&dir).await.unwrap();
/// let session = Session::new("build", ".");
/// files.put_session(&session).await.unwrap();
/// files.put_message(&Message::user(&session.id, "hi")).await.unwrap();
///
/// let target = MemorySessionStore::new();
/// let report = agentgate_store::import_file_store(&dir, &target).await.unwrap();
/// assert_eq!((report.sessions, report.messages), (1, 1));
/// assert_eq!(target.messages(&session.id).await.unwrap()[0].text(), "hi");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
pub async fn import_file_store(
    dir: &Path,
    target: &dyn SessionStore,
) -> Result<ImportReport, SessionStoreError> {
    let mut report = ImportReport::default();
    if !dir.join("sessions").is_dir() {
        return Ok(report);
    }
    let source = FileSessionStore::open(dir).await?;
    for session in source.sessions().await? {
        target.put_session(&session).await?;
        report.sessions += 1;
        let messages = source.messages(&session.id).await?;
        for message in &messages {
            target.put_message(message).await?;
            report.messages += 1;
        }
        // Storing the messages moved `time.updated` to now: the session
        // keeps its own times instead, taken from its messages when it was
        // stored before sessions had times.
        let mut session = session;
        if session.time.created == 0
            && let Some(first) = messages.first()
        {
            session.time.created = first.time.start;
        }
        for message in &messages {
            session
                .time
                .touch(message.time.end.unwrap_or(message.time.start));
        }
        target.put_session(&session).await?;
    }
    Ok(report)
}

/// Copies the approvals of every project in the [`JsonFileStore`]
/// directory `dir` into `target`, in order, skipping rules the project
/// already has there (so a second run adds nothing). Files are read
/// through [`JsonFileStore`], so a corrupt or foreign file is an error
/// naming it, as it would be for that store. A missing directory imports
/// nothing.
pub fn import_json_approvals(
    dir: &Path,
    target: &dyn ApprovalStore,
) -> Result<ImportReport, StoreError> {
    let mut report = ImportReport::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(source) => {
            return Err(StoreError::Io {
                action: "read",
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let files = JsonFileStore::new(dir);
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("project-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|source| StoreError::Io {
            action: "read",
            path: path.clone(),
            source,
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| StoreError::Corrupt {
                path: path.clone(),
                source,
            })?;
        let Some(project) = value.get("project").and_then(|p| p.as_str()) else {
            continue;
        };
        // Read through the file store: it checks the version and that the
        // file is the one it would use for this project.
        let rules = files.load(project)?;
        let mut present = target.load(project)?;
        let mut missing: Vec<Rule> = Vec::new();
        for rule in rules {
            if !present.contains(&rule) {
                present.0.push(rule.clone());
                missing.push(rule);
            }
        }
        if !missing.is_empty() {
            target.append(project, &missing)?;
            report.approvals += missing.len();
        }
    }
    Ok(report)
}
