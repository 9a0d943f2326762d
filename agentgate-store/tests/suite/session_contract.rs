//! One contract, every `SessionStore`: memory, file, SQLite, PostgreSQL.

use agentgate_core::{
    FileSessionStore, MemorySessionStore, Message, Session, SessionStore, SessionStoreError,
};
use agentgate_store::{PostgresStore, SqliteStore};

use super::fixtures::{TempDir, postgres};

/// Everything a store must do, in one pass over a fresh store.
async fn contract(store: &dyn SessionStore) {
    // Empty.
    assert!(store.sessions().await.unwrap().is_empty());

    // Put and get, listed in creation order.
    let first = Session::new("build", "/work/one").with_title("first");
    let second = Session::new("plan", "/work/two").with_title("second");
    store.put_session(&first).await.unwrap();
    store.put_session(&second).await.unwrap();
    assert_eq!(store.session(&first.id).await.unwrap(), first);
    assert_eq!(store.session(&second.id).await.unwrap(), second);
    let ids: Vec<String> = store
        .sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, [first.id.clone(), second.id.clone()]);

    // Replace keeps one session, with the new content.
    let renamed = first.clone().with_title("renamed");
    store.put_session(&renamed).await.unwrap();
    assert_eq!(store.session(&first.id).await.unwrap().title, "renamed");
    let all = store.sessions().await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all.iter().filter(|s| s.id == first.id).count(), 1);

    // A session without messages has an empty transcript.
    assert!(store.messages(&second.id).await.unwrap().is_empty());

    // Messages oldest first, per session.
    let texts = ["one", "two", "three", "four", "five"];
    let mut sent = Vec::new();
    for text in texts {
        let message = Message::user(&first.id, text);
        store.put_message(&message).await.unwrap();
        sent.push(message);
    }
    store
        .put_message(&Message::user(&second.id, "elsewhere"))
        .await
        .unwrap();
    let read = store.messages(&first.id).await.unwrap();
    assert_eq!(read, sent);
    assert_eq!(store.messages(&second.id).await.unwrap().len(), 1);

    // Replacing a message keeps its place.
    let mut changed = sent[1].clone();
    changed.parts = Message::user(&first.id, "two, edited").parts;
    store.put_message(&changed).await.unwrap();
    let read: Vec<String> = store
        .messages(&first.id)
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(read, ["one", "two, edited", "three", "four", "five"]);

    // Not found.
    let missing = "ses_does_not_exist";
    assert_eq!(
        store.session(missing).await,
        Err(SessionStoreError::NotFound(missing.to_string()))
    );
    assert_eq!(
        store.messages(missing).await,
        Err(SessionStoreError::NotFound(missing.to_string()))
    );
    assert_eq!(
        store.put_message(&Message::user(missing, "orphan")).await,
        Err(SessionStoreError::NotFound(missing.to_string()))
    );

    // Unicode, control characters and a large message come back intact.
    let unicode =
        Session::new("build", "/work/ünï/日本").with_title("héllo ✓ 日本語 🎉 \"quoted\" \\ \u{1}");
    store.put_session(&unicode).await.unwrap();
    assert_eq!(store.session(&unicode.id).await.unwrap(), unicode);
    let text = format!(
        "{}{}",
        "ü🎉\n\t\u{0}'; DROP TABLE messages; --",
        "x".repeat(2 << 20)
    );
    let large = Message::user(&unicode.id, text.clone());
    store.put_message(&large).await.unwrap();
    let back = store.messages(&unicode.id).await.unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].text(), text);
    assert_eq!(back[0], large);

    // Deleting a session takes its messages and leaves the others.
    store.delete_session(&unicode.id).await.unwrap();
    assert_eq!(
        store.session(&unicode.id).await,
        Err(SessionStoreError::NotFound(unicode.id.clone()))
    );
    assert!(
        !store
            .sessions()
            .await
            .unwrap()
            .iter()
            .any(|s| s.id == unicode.id)
    );
    assert_eq!(
        store.delete_session(&unicode.id).await,
        Err(SessionStoreError::NotFound(unicode.id.clone()))
    );
    // A session created again under the id starts with no messages.
    store.put_session(&unicode).await.unwrap();
    assert!(store.messages(&unicode.id).await.unwrap().is_empty());

    times_rename_and_fork(store).await;
}

/// Storing a message moves `time.updated` forward; rename and fork (the
/// trait's provided methods, or a store's own) keep everything else.
async fn times_rename_and_fork(store: &dyn SessionStore) {
    let mut session = Session::new("build", "/work/times").with_title("Times");
    session.time.created = 1_000;
    session.time.updated = 1_000;
    store.put_session(&session).await.unwrap();
    assert_eq!(
        store.session(&session.id).await.unwrap().time.updated,
        1_000
    );
    let question = Message::user(&session.id, "question");
    store.put_message(&question).await.unwrap();
    let stored = store.session(&session.id).await.unwrap();
    assert_eq!(stored.time.created, 1_000);
    assert!(stored.time.updated > 1_000_000, "{:?}", stored.time);
    let answer = Message::user(&session.id, "answer");
    store.put_message(&answer).await.unwrap();
    let later = store.session(&session.id).await.unwrap();
    assert!(later.time.updated >= stored.time.updated);
    assert_eq!(later.title, "Times");

    let renamed = store
        .rename_session(&session.id, "Renamed ✓")
        .await
        .unwrap();
    assert_eq!(renamed.title, "Renamed ✓");
    assert_eq!(store.session(&session.id).await.unwrap(), renamed);
    assert!(matches!(
        store.rename_session("ses_missing", "x").await,
        Err(SessionStoreError::NotFound(_))
    ));

    let fork = store
        .fork_session(&session.id, Some(&answer.id))
        .await
        .unwrap();
    assert_eq!(fork.title, "Renamed ✓ (fork #1)");
    assert_eq!(store.session(&fork.id).await.unwrap().title, fork.title);
    let copied = store.messages(&fork.id).await.unwrap();
    assert_eq!(copied.len(), 1);
    assert_eq!(copied[0].text(), "question");
    assert_ne!(copied[0].id, question.id);
    assert_eq!(store.messages(&session.id).await.unwrap().len(), 2);
    assert!(matches!(
        store.fork_session(&session.id, Some("msg_missing")).await,
        Err(SessionStoreError::MessageNotFound { .. })
    ));
}

#[tokio::test]
async fn memory_store_meets_the_contract() {
    contract(&MemorySessionStore::new()).await;
}

#[tokio::test]
async fn file_store_meets_the_contract() {
    let dir = TempDir::new("contract-file");
    contract(&FileSessionStore::open(&dir.0).await.unwrap()).await;
}

#[tokio::test]
async fn sqlite_store_meets_the_contract() {
    let dir = TempDir::new("contract-sqlite");
    contract(&SqliteStore::open(dir.0.join("agentgate.db")).unwrap()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn sqlite_store_meets_the_contract_on_a_current_thread_runtime() {
    let dir = TempDir::new("contract-sqlite-ct");
    contract(&SqliteStore::open(dir.0.join("agentgate.db")).unwrap()).await;
}

#[tokio::test]
async fn postgres_store_meets_the_contract() {
    let Some(options) = postgres("contract") else {
        return;
    };
    contract(&PostgresStore::connect(options).await.unwrap()).await;
}
