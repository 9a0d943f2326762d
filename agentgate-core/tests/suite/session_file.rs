//! FileSessionStore: sessions survive a restart of the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use super::common::*;
use agentgate_core::testing::Script;
use agentgate_core::{
    AgentSpec, ContentPart, Engine, FileSessionStore, ModelMessage, ModelRole, Session,
    SessionStore, SessionStoreError,
};
use agentgate_testing::ScratchDir;
use serde_json::json;

/// A fresh directory under the system temp dir, removed on drop.
fn store_dir() -> ScratchDir {
    ScratchDir::new("agentgate-core-store")
}

fn agent() -> AgentSpec {
    AgentSpec::new("build").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"}]"#,
    ))
}

#[tokio::test(start_paused = true)]
async fn sessions_resume_after_a_restart() {
    let dir = store_dir();
    let first_model = model([
        Script::calls([("c1", "echo", json!({"text": "persisted"}))]),
        Script::reply("Echoed."),
    ]);
    let session_id = {
        let store = FileSessionStore::open(dir.path()).await.unwrap();
        let engine = Engine::builder(first_model)
            .agent(agent())
            .tool(Echo::default())
            .store(Arc::new(store))
            .build();
        let mut session = Session::new("build", std::env::temp_dir());
        session.title = "restartable".into();
        let session = engine.create_session(session).await.unwrap();
        engine.prompt(&session.id, "echo something").await.unwrap();
        session.id
    };

    // A new process: a new store and engine over the same directory.
    let store = FileSessionStore::open(dir.path()).await.unwrap();
    let sessions = store.sessions().await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].id, session_id);
    assert_eq!(sessions[0].title, "restartable");
    let history = store.messages(&session_id).await.unwrap();
    assert_eq!(history.len(), 3, "user, tool step, answer");
    assert_every_call_has_result(&history);

    let second_model = model([Script::reply("Still here.")]);
    let engine = Engine::builder(second_model.clone())
        .agent(agent())
        .tool(Echo::default())
        .store(Arc::new(store))
        .build();
    let turn = engine.prompt(&session_id, "are you there?").await.unwrap();
    assert_eq!(turn.text(), "Still here.");

    let request = &second_model.requests()[0];
    assert_eq!(request.messages.len(), 5);
    assert_eq!(*request.messages[0], ModelMessage::user("echo something"));
    assert_eq!(results(request), [("c1".into(), "persisted".into(), false)]);
    assert_eq!(
        *request.messages[3],
        ModelMessage {
            role: ModelRole::Assistant,
            content: vec![ContentPart::Text {
                text: "Echoed.".into(),
                provider_metadata: None
            }]
        }
    );
    assert_eq!(*request.messages[4], ModelMessage::user("are you there?"));
    assert_eq!(engine.messages(&session_id).await.unwrap().len(), 5);
}

#[tokio::test(start_paused = true)]
async fn a_corrupt_file_is_an_error_naming_it() {
    let dir = store_dir();
    let store = FileSessionStore::open(dir.path()).await.unwrap();
    let session = Session::new("build", ".");
    store.put_session(&session).await.unwrap();
    let message = agentgate_core::Message::user(&session.id, "hello");
    store.put_message(&message).await.unwrap();

    let path = store
        .messages_dir(&session.id)
        .unwrap()
        .join(format!("{}.json", message.id));
    std::fs::write(&path, b"{\"id\": ").unwrap();
    let error = store.messages(&session.id).await.unwrap_err();
    assert!(
        matches!(&error, SessionStoreError::Corrupt { path: p, .. } if *p == path),
        "{error:?}"
    );
    assert!(error.to_string().contains(&path.display().to_string()));

    let session_path = store.session_path(&session.id).unwrap();
    std::fs::write(&session_path, b"not json").unwrap();
    let error = store.session(&session.id).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&session_path.display().to_string()),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn writes_leave_no_temporary_files_and_ids_cannot_escape() {
    let dir = store_dir();
    let store = FileSessionStore::open(dir.path()).await.unwrap();
    let mut session = Session::new("build", ".");
    store.put_session(&session).await.unwrap();
    session.title = "renamed".into();
    store.put_session(&session).await.unwrap();
    assert_eq!(store.session(&session.id).await.unwrap().title, "renamed");
    let names: Vec<String> = std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{}.json", session.id)]);

    assert!(matches!(
        store.session("../sessions/x").await,
        Err(SessionStoreError::NotFound(_))
    ));
    let mut evil = Session::new("build", ".");
    evil.id = "../../etc/passwd".into();
    assert!(matches!(
        store.put_session(&evil).await,
        Err(SessionStoreError::InvalidId(_))
    ));
    assert!(matches!(
        store.messages("nope").await,
        Err(SessionStoreError::NotFound(_))
    ));
}

/// Only the owner may read the store: folders 0700 and files 0600 under
/// this process's umask, and a folder left open is tightened on open.
#[cfg(unix)]
#[tokio::test]
async fn the_file_store_is_private() {
    use agentgate_core::Message;
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = store_dir();
    let root = dir.path().join("sessions-store");
    let store = FileSessionStore::open(&root).await.unwrap();
    let session = Session::new("build", std::env::temp_dir());
    store.put_session(&session).await.unwrap();
    store
        .put_message(&Message::user(&session.id, "secret"))
        .await
        .unwrap();
    let messages = store.messages_dir(&session.id).unwrap();
    for folder in [root.clone(), root.join("sessions"), messages.clone()] {
        assert_eq!(mode(&folder), 0o700, "{}", folder.display());
    }
    let session_file = store.session_path(&session.id).unwrap();
    assert_eq!(mode(&session_file), 0o600);
    for entry in std::fs::read_dir(&messages).unwrap() {
        assert_eq!(mode(&entry.unwrap().path()), 0o600);
    }
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    FileSessionStore::open(&root).await.unwrap();
    assert_eq!(mode(&root), 0o700);
}
