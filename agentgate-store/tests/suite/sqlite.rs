//! What only the SQLite store promises: several connections on one file,
//! the schema version, and a newer file refused.

use std::sync::Arc;

use agentgate_core::{Message, Session, SessionStore};
use agentgate_permission::{Action, ApprovalStore, Rule, Ruleset};
use agentgate_store::{SCHEMA_VERSION, SqliteError, SqliteStore};

use super::fixtures::TempDir;

#[tokio::test]
async fn two_stores_on_one_file_see_each_others_writes() {
    let dir = TempDir::new("sqlite-two");
    let path = dir.0.join("agentgate.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();

    let session = Session::new("build", "/work");
    a.put_session(&session).await.unwrap();
    assert_eq!(b.session(&session.id).await.unwrap(), session);
    b.put_message(&Message::user(&session.id, "from b"))
        .await
        .unwrap();
    a.put_message(&Message::user(&session.id, "from a"))
        .await
        .unwrap();
    let texts: Vec<String> = b
        .messages(&session.id)
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(texts, ["from b", "from a"]);

    let project = "/work";
    a.append(project, &[Rule::new("bash", "git *", Action::Allow)])
        .unwrap();
    assert_eq!(
        b.load(project).unwrap(),
        Ruleset::from(vec![Rule::new("bash", "git *", Action::Allow)])
    );
    assert!(
        b.revoke(project, &Rule::new("bash", "git *", Action::Allow))
            .unwrap()
    );
    assert_eq!(a.load(project).unwrap(), Ruleset::default());
}

/// Two connections writing at the same time: every write lands (the busy
/// timeout queues them), none is lost or duplicated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_on_one_file_lose_nothing() {
    let dir = TempDir::new("sqlite-concurrent");
    let path = dir.0.join("agentgate.db");
    let a = Arc::new(SqliteStore::open(&path).unwrap());
    let b = Arc::new(SqliteStore::open(&path).unwrap());
    let session = Session::new("build", "/work");
    a.put_session(&session).await.unwrap();
    let mut tasks = Vec::new();
    for (name, store) in [("a", a.clone()), ("b", b.clone())] {
        let id = session.id.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..100 {
                store
                    .put_message(&Message::user(&id, format!("{name}{i}")))
                    .await
                    .unwrap();
                store
                    .append(
                        "/work",
                        &[Rule::new("bash", format!("{name}{i}"), Action::Allow)],
                    )
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let messages = a.messages(&session.id).await.unwrap();
    assert_eq!(messages.len(), 200);
    for name in ["a", "b"] {
        // Each writer's messages are in its own order.
        let mine: Vec<String> = messages
            .iter()
            .map(Message::text)
            .filter(|t| t.starts_with(name))
            .collect();
        let expected: Vec<String> = (0..100).map(|i| format!("{name}{i}")).collect();
        assert_eq!(mine, expected);
    }
    assert_eq!(b.load("/work").unwrap().len(), 200);
}

#[test]
fn a_new_file_has_the_current_schema_and_reopening_keeps_it() {
    let dir = TempDir::new("sqlite-version");
    let path = dir.0.join("nested/dir/agentgate.db");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.path(), path);
    drop(store);
    assert_eq!(
        SqliteStore::open(&path).unwrap().schema_version().unwrap(),
        SCHEMA_VERSION
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_file_from_a_newer_sdk_is_refused_and_left_alone() {
    let dir = TempDir::new("sqlite-newer");
    let path = dir.0.join("agentgate.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE schema_version SET version = ?1",
        [SCHEMA_VERSION + 1],
    )
    .unwrap();
    drop(conn);
    let error = SqliteStore::open(&path).unwrap_err();
    assert_eq!(
        error,
        SqliteError::TooNew {
            path: path.clone(),
            found: SCHEMA_VERSION + 1,
            supported: SCHEMA_VERSION
        }
    );
    assert!(error.to_string().contains("upgrade the SDK"), "{error}");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1);
}

#[test]
fn a_file_that_is_not_a_database_is_an_open_error() {
    let dir = TempDir::new("sqlite-garbage");
    let path = dir.0.join("agentgate.db");
    std::fs::write(
        &path,
        "this is not SQLite, just text that is long enough to fill a header",
    )
    .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(error, SqliteError::Open { .. }), "{error:?}");
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_reported_as_corrupt() {
    let dir = TempDir::new("sqlite-corrupt");
    let path = dir.0.join("agentgate.db");
    let store = SqliteStore::open(&path).unwrap();
    let session = Session::new("build", "/work");
    store.put_session(&session).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE sessions SET body = '{not json'", [])
        .unwrap();
    let error = store.session(&session.id).await.unwrap_err();
    assert!(
        matches!(&error, agentgate_core::SessionStoreError::Corrupt { path: p, .. } if *p == path),
        "{error:?}"
    );
}

/// `checkpoint` folds the log into the file and empties it, so the next
/// opening has nothing to replay; with another connection in a read it
/// returns at once (no wait on the busy timeout) and loses nothing.
#[tokio::test]
async fn a_checkpoint_empties_the_log_and_never_waits_for_a_reader() {
    let dir = TempDir::new("sqlite-checkpoint");
    let path = dir.0.join("agentgate.db");
    let wal = dir.0.join("agentgate.db-wal");
    let store = SqliteStore::open(&path).unwrap();
    let session = Session::new("build", "/work");
    store.put_session(&session).await.unwrap();
    for i in 0..20 {
        store
            .put_message(&Message::user(&session.id, format!("m{i}")))
            .await
            .unwrap();
    }
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "the writes are in the log"
    );
    store.checkpoint().await.unwrap();
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0);

    // Another process in the middle of a read: the checkpoint cannot
    // empty the log, and says so by returning, not by waiting 10 s.
    store
        .put_message(&Message::user(&session.id, "after"))
        .await
        .unwrap();
    let reader = rusqlite::Connection::open(&path).unwrap();
    reader
        .execute_batch("BEGIN; SELECT COUNT(*) FROM sessions;")
        .unwrap();
    let started = std::time::Instant::now();
    store.checkpoint().await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);

    let again = SqliteStore::open(&path).unwrap();
    assert_eq!(again.messages(&session.id).await.unwrap().len(), 21);
}
