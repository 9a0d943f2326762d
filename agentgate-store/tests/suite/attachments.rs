//! Attachments survive every `SessionStore`: a user message's file part
//! (an image, and the record of an attached text file) and a tool call
//! that returned an image.

use agentgate_core::{
    FilePart, FileSessionStore, MemorySessionStore, Message, Part, Role, Session, SessionStore,
    Timing, ToolPart, ToolState,
};
use agentgate_store::{PostgresStore, SqliteStore};
use serde_json::json;

use super::fixtures::{TempDir, postgres};

fn transcript(session: &str) -> Vec<Message> {
    let mut user = Message::user(session, "What is in the screenshot?");
    user.parts.push(Part::File(
        FilePart::data("image/png", b"\x89PNG\r\n\x1a\n\0\0").with_filename("shot.png"),
    ));
    user.parts.push(Part::File(
        FilePart::new("text/plain", "file:///work/notes.txt").with_filename("notes.txt"),
    ));
    let mut answer = Message::new(session, Role::Assistant);
    answer.parts.push(Part::Tool(ToolPart {
        id: "prt_tool".into(),
        call_id: "call_1".into(),
        tool: "read".into(),
        state: ToolState::Completed {
            input: json!({"filePath": "shot.png"}),
            output: "Image read successfully".into(),
            title: "shot.png".into(),
            metadata: json!({}),
            time: Timing::default(),
            compacted: false,
            attachments: vec![FilePart::data("image/gif", b"GIF89a")],
        },
        provider_metadata: None,
    }));
    vec![user, answer]
}

/// Writes the transcript and reads it back; returns the session id and
/// what was written.
async fn round_trip(store: &dyn SessionStore) -> (String, Vec<Message>) {
    let session = Session::new("build", "/work");
    store.put_session(&session).await.unwrap();
    let sent = transcript(&session.id);
    for message in &sent {
        store.put_message(message).await.unwrap();
    }
    assert_eq!(store.messages(&session.id).await.unwrap(), sent);
    (session.id, sent)
}

#[test]
fn a_file_part_is_written_as_opencodes_file_part() {
    let part = Part::File(FilePart::data("image/png", b"ab").with_filename("a.png"));
    let value = serde_json::to_value(&part).unwrap();
    assert_eq!(value["type"], "file");
    assert_eq!(value["mime"], "image/png");
    assert_eq!(value["filename"], "a.png");
    assert_eq!(value["url"], "data:image/png;base64,YWI=");
    let back: Part = serde_json::from_value(value).unwrap();
    assert_eq!(back, part);
}

#[tokio::test]
async fn memory_store_keeps_attachments() {
    round_trip(&MemorySessionStore::new()).await;
}

#[tokio::test]
async fn file_store_keeps_attachments() {
    let dir = TempDir::new("attachments-file");
    let (session, sent) = round_trip(&FileSessionStore::open(&dir.0).await.unwrap()).await;
    // And across a reopen (read back from disk, not from memory).
    let reopened = FileSessionStore::open(&dir.0).await.unwrap();
    assert_eq!(reopened.messages(&session).await.unwrap(), sent);
}

#[tokio::test]
async fn sqlite_store_keeps_attachments() {
    let dir = TempDir::new("attachments-sqlite");
    round_trip(&SqliteStore::open(dir.0.join("agentgate.db")).unwrap()).await;
}

#[tokio::test]
async fn postgres_store_keeps_attachments() {
    let Some(options) = postgres("attachments") else {
        return;
    };
    round_trip(&PostgresStore::connect(options).await.unwrap()).await;
}
