//! Session stores: 1,000 sessions x 20 messages written (one put per
//! message, as the engine stores each step) and read back (every session's
//! transcript) through `SqliteStore` and through `FileSessionStore`, in the
//! same run, and the ratio of their times. `--json` adds one
//! machine-readable line.
//!
//! `cargo bench -p agentgate-benches --bench store [-- --sessions N --messages M]`.
//! Without `--bench` (as `cargo test --all-targets` runs it) it does a
//! small smoke run.

#![allow(missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use agentgate_core::{FileSessionStore, Message, Session, SessionStore};
use agentgate_store::SqliteStore;

fn arg(args: &[String], name: &str) -> Option<usize> {
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1)?.parse().ok()
}

struct Timing {
    write: Duration,
    read: Duration,
}

/// Writes `sessions` x `messages` through `store`, then reads every
/// transcript back and checks it.
async fn run(store: &dyn SessionStore, sessions: usize, messages: usize) -> Timing {
    let mut created = Vec::with_capacity(sessions);
    let started = Instant::now();
    for s in 0..sessions {
        let session = Session::new("build", "/work/project").with_title(format!("session {s}"));
        store
            .put_session(&session)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        for m in 0..messages {
            // About the size of a short step: a sentence and a file path.
            let text = format!(
                "message {m} of session {s}: please read src/module_{m}/file.rs and explain what it does"
            );
            store
                .put_message(&Message::user(&session.id, text))
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        created.push(session.id);
    }
    let write = started.elapsed();
    let started = Instant::now();
    for id in &created {
        let read = store.messages(id).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.len(), messages, "a transcript came back short");
    }
    assert_eq!(
        store
            .sessions()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .len(),
        sessions
    );
    Timing {
        write,
        read: started.elapsed(),
    }
}

fn fresh(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let sessions = arg(&args, "--sessions").unwrap_or(if full { 1000 } else { 20 });
    let messages = arg(&args, "--messages").unwrap_or(if full { 20 } else { 5 });
    let json = args.iter().any(|a| a == "--json");
    let root = std::env::temp_dir().join(format!("agentgate-bench-store-{}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let (sqlite, file) = runtime.block_on(async {
        fresh(&root.join("sqlite"));
        let store =
            SqliteStore::open(root.join("sqlite/agentgate.db")).unwrap_or_else(|e| panic!("{e}"));
        let sqlite = run(&store, sessions, messages).await;
        fresh(&root.join("files"));
        let store = FileSessionStore::open(root.join("files"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let file = run(&store, sessions, messages).await;
        (sqlite, file)
    });
    let _ = std::fs::remove_dir_all(&root);

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = (sessions * messages) as f64;
    let us_per = |d: Duration| d.as_secs_f64() * 1e6 / n;
    println!(
        "store: {sessions} sessions x {messages} messages, one put per message, then every transcript read back"
    );
    for (name, t) in [("SqliteStore", &sqlite), ("FileSessionStore", &file)] {
        println!(
            "  {name:<16} write {:>9.1} ms ({:>6.1} µs/message)   read {:>8.1} ms ({:>5.1} µs/message)",
            ms(t.write),
            us_per(t.write),
            ms(t.read),
            us_per(t.read)
        );
    }
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
    println!(
        "  file / sqlite:   write {:.2}x   read {:.2}x   total {:.2}x",
        ratio(sqlite.write, file.write),
        ratio(sqlite.read, file.read),
        ratio(sqlite.write + sqlite.read, file.write + file.read)
    );
    if json {
        println!(
            "{{\"store\":{{\"sessions\":{sessions},\"messages\":{messages},\"sqlite_write_ms\":{:.1},\"sqlite_read_ms\":{:.1},\"file_write_ms\":{:.1},\"file_read_ms\":{:.1}}}}}",
            ms(sqlite.write),
            ms(sqlite.read),
            ms(file.write),
            ms(file.read)
        );
    }
}
