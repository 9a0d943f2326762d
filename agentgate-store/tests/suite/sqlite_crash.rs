//! The SQLite store across a process killed mid-write: the test binary runs
//! itself as a writer (`writer_until_killed`, ignored in normal runs and
//! started with `--ignored` and `AGENTGATE_CRASH_WRITER`) that stores
//! growing messages and prints
//! each id once `put_message` has returned; the parent SIGKILLs it at
//! several points and reopens the file each time. Every acknowledged
//! message must be there and whole, and the file must stay writable.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use agentgate_core::{Message, Part, Role, Session, SessionStore};
use agentgate_store::SqliteStore;

use super::fixtures::TempDir;

const WRITER: &str = "AGENTGATE_CRASH_WRITER";

/// The writer's side: run only as the child of the test below.
#[tokio::test]
#[ignore = "the child process of a_killed_writer_loses_nothing_it_acknowledged"]
async fn writer_until_killed() {
    let Ok(spec) = std::env::var(WRITER) else {
        return;
    };
    let (path, session_id) = spec.split_once('\n').unwrap();
    let store = SqliteStore::open(path).unwrap();
    for n in 0.. {
        let mut message = Message::new(session_id, Role::Assistant);
        // Tens of kilobytes, as a tool output: a write spans many pages.
        message
            .parts
            .push(Part::text(format!("{n}:{}", "x".repeat(20_000 + n * 97))));
        store.put_message(&message).await.unwrap();
        println!("stored {}", message.id);
    }
}

#[test]
fn a_killed_writer_loses_nothing_it_acknowledged() {
    let dir = TempDir::new("sqlite-crash");
    let path = dir.0.join("agentgate.db");
    let session = Session::new("build", "/work");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(SqliteStore::open(&path).unwrap().put_session(&session))
        .unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut acknowledged: Vec<String> = Vec::new();
    // Kill after a different number of acknowledged writes each round, so
    // the signal lands at different points of a write.
    for round in 0..6 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "suite::sqlite_crash::writer_until_killed",
                "--ignored",
                "--nocapture",
            ])
            .env(WRITER, format!("{}\n{}", path.display(), session.id))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let wanted = 3 + round * 5;
        let mut seen = 0;
        while seen < wanted {
            let line = lines.next().unwrap().unwrap();
            if let Some(id) = line.strip_prefix("stored ") {
                acknowledged.push(id.to_string());
                seen += 1;
            }
        }
        child.kill().unwrap();
        // Lines written before the kill landed are acknowledged too.
        for line in lines.map_while(Result::ok) {
            if let Some(id) = line.strip_prefix("stored ") {
                acknowledged.push(id.to_string());
            }
        }
        child.wait().unwrap();

        let store = SqliteStore::open(&path).unwrap();
        let stored = rt.block_on(store.messages(&session.id)).unwrap();
        let ids: Vec<&str> = stored.iter().map(|m| m.id.as_str()).collect();
        for id in &acknowledged {
            assert!(ids.contains(&id.as_str()), "round {round}: {id} lost");
        }
        // At most the write in flight may have landed unacknowledged.
        assert!(ids.len() <= acknowledged.len() + 1, "round {round}");
        for message in stored.iter().filter(|m| m.role == Role::Assistant) {
            let text = message.text();
            let (n, body) = text.split_once(':').unwrap();
            let n: usize = n.parse().unwrap();
            assert_eq!(body.len(), 20_000 + n * 97, "round {round}: torn message");
        }
        // Still writable after the crash.
        rt.block_on(store.put_message(&Message::user(&session.id, "after")))
            .unwrap();
        let after = rt.block_on(store.messages(&session.id)).unwrap();
        assert_eq!(after.last().map(Message::text).as_deref(), Some("after"));
        acknowledged.push(after.last().unwrap().id.clone());
    }
}
