//! The migration from the file stores: everything copied, idempotent,
//! once-only markers, the files left in place.

use agentgate_core::{FileSessionStore, Message, Session, SessionStore};
use agentgate_permission::{Action, ApprovalStore, JsonFileStore, Rule, Ruleset};
use agentgate_store::{ImportReport, SqliteStore, import_file_store, import_json_approvals};

use super::fixtures::TempDir;

/// A file store with 3 sessions of 4 messages each.
async fn file_store(dir: &std::path::Path) -> FileSessionStore {
    let files = FileSessionStore::open(dir).await.unwrap();
    for s in 0..3 {
        let session =
            Session::new("build", format!("/work/{s}")).with_title(format!("session {s}"));
        files.put_session(&session).await.unwrap();
        for m in 0..4 {
            files
                .put_message(&Message::user(&session.id, format!("{s}.{m}")))
                .await
                .unwrap();
        }
    }
    files
}

async fn same_content(a: &dyn SessionStore, b: &dyn SessionStore) {
    let sessions = a.sessions().await.unwrap();
    assert_eq!(sessions, b.sessions().await.unwrap());
    for session in sessions {
        assert_eq!(
            a.messages(&session.id).await.unwrap(),
            b.messages(&session.id).await.unwrap()
        );
    }
}

#[tokio::test]
async fn importing_a_file_store_twice_copies_everything_once() {
    let dir = TempDir::new("import-sessions");
    let files = file_store(&dir.0.join("sessions")).await;
    let db = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();

    let first = import_file_store(&dir.0.join("sessions"), &db)
        .await
        .unwrap();
    assert_eq!(
        first,
        ImportReport {
            sessions: 3,
            messages: 12,
            approvals: 0
        }
    );
    same_content(&files, &db).await;
    let second = import_file_store(&dir.0.join("sessions"), &db)
        .await
        .unwrap();
    assert_eq!(second, first);
    same_content(&files, &db).await;
    assert_eq!(db.sessions().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_missing_directory_imports_nothing_and_is_not_created() {
    let dir = TempDir::new("import-missing");
    let db = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();
    let absent = dir.0.join("no-sessions");
    let report = import_file_store(&absent, &db).await.unwrap();
    assert_eq!(report, ImportReport::default());
    assert!(!absent.exists());
    assert_eq!(
        import_json_approvals(&absent, &db).unwrap(),
        ImportReport::default()
    );
}

#[tokio::test]
async fn the_once_imports_run_once_and_leave_the_files() {
    let dir = TempDir::new("import-once");
    let sessions_dir = dir.0.join("sessions");
    let approvals_dir = dir.0.join("approvals");
    let files = file_store(&sessions_dir).await;
    let json = JsonFileStore::new(&approvals_dir);
    let rules = [
        Rule::new("bash", "git *", Action::Allow),
        Rule::new("edit", "src/*", Action::Allow),
    ];
    json.append("/work/0", &rules).unwrap();
    json.append("/work/ü 1", &rules[..1]).unwrap();

    let db = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();
    let report = db.import_file_sessions_once(&sessions_dir).await.unwrap();
    assert_eq!(
        report,
        Some(ImportReport {
            sessions: 3,
            messages: 12,
            approvals: 0
        })
    );
    let report = db.import_json_approvals_once(&approvals_dir).unwrap();
    assert_eq!(
        report,
        Some(ImportReport {
            sessions: 0,
            messages: 0,
            approvals: 3
        })
    );
    assert_eq!(db.load("/work/0").unwrap(), Ruleset::from(rules.to_vec()));
    assert_eq!(
        db.load("/work/ü 1").unwrap(),
        Ruleset::from(rules[..1].to_vec())
    );

    // A revocation after the import is not undone by opening again: the
    // import is recorded and does not run twice.
    assert!(db.revoke("/work/0", &rules[0]).unwrap());
    let reopened = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();
    assert_eq!(
        reopened
            .import_file_sessions_once(&sessions_dir)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        reopened.import_json_approvals_once(&approvals_dir).unwrap(),
        None
    );
    assert_eq!(
        reopened.load("/work/0").unwrap(),
        Ruleset::from(rules[1..].to_vec())
    );

    // The old files are still there, unchanged.
    same_content(
        &files,
        &FileSessionStore::open(&sessions_dir).await.unwrap(),
    )
    .await;
    assert_eq!(json.load("/work/0").unwrap(), Ruleset::from(rules.to_vec()));
}

#[test]
fn importing_json_approvals_twice_adds_nothing_the_second_time() {
    let dir = TempDir::new("import-approvals");
    let json = JsonFileStore::new(dir.0.join("approvals"));
    json.append("/p", &[Rule::new("bash", "ls *", Action::Allow)])
        .unwrap();
    let db = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();
    assert_eq!(
        import_json_approvals(&dir.0.join("approvals"), &db)
            .unwrap()
            .approvals,
        1
    );
    assert_eq!(
        import_json_approvals(&dir.0.join("approvals"), &db)
            .unwrap()
            .approvals,
        0
    );
    assert_eq!(db.load("/p").unwrap().len(), 1);
}

#[test]
fn a_corrupt_approvals_file_is_an_error_naming_it() {
    let dir = TempDir::new("import-corrupt");
    let approvals = dir.0.join("approvals");
    std::fs::create_dir_all(&approvals).unwrap();
    let bad = approvals.join("project-x.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let db = SqliteStore::open(dir.0.join("agentgate.db")).unwrap();
    let error = db.import_json_approvals_once(&approvals).unwrap_err();
    assert!(error.to_string().contains("project-x.json"), "{error}");
    // Not recorded as imported: fixing the file lets the next open import.
    std::fs::remove_file(&bad).unwrap();
    assert!(db.import_json_approvals_once(&approvals).unwrap().is_some());
}
