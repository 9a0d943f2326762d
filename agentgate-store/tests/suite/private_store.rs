//! The SQLite store is private: `agentgate.db`, its `-wal` and `-shm` are
//! `0600` and a folder it creates `0700` under umask 022, existing files
//! are tightened on open, and another user can read none of it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use agentgate_core::{Message, Session, SessionStore};
use agentgate_store::SqliteStore;

use super::fixtures::TempDir;

/// Set for the child run of the umask test: the folder to fill.
const CHILD: &str = "AGENTGATE_PRIVATE_STORE_DIR";
const UMASK_TEST: &str = "suite::private_store::store_files_are_private_under_umask_022";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn companion(db: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// A store at `<dir>/data/agentgate.db` (the folder made by the store)
/// holding a session and a message; returned open, so the `-wal` and
/// `-shm` files exist.
async fn filled(dir: &Path) -> (SqliteStore, std::path::PathBuf) {
    let db = dir.join("data").join("agentgate.db");
    let store = SqliteStore::open(&db).unwrap();
    let session = Session::new("build", "/work");
    store.put_session(&session).await.unwrap();
    store
        .put_message(&Message::user(&session.id, "the secret transcript"))
        .await
        .unwrap();
    (store, db)
}

#[tokio::test]
async fn store_files_are_private_under_umask_022() {
    if let Some(dir) = std::env::var_os(CHILD) {
        // The child, started under `umask 022` by the run below.
        let dir = Path::new(&dir);
        let plain = dir.join("plain");
        std::fs::write(&plain, "x").unwrap();
        assert_eq!(mode(&plain), 0o644, "the control: umask 022 is in effect");
        let (_store, db) = filled(dir).await;
        assert_eq!(mode(db.parent().unwrap()), 0o700);
        for suffix in ["", "-wal", "-shm"] {
            assert_eq!(mode(&companion(&db, suffix)), 0o600, "agentgate.db{suffix}");
        }
        return;
    }
    let dir = TempDir::new("private-umask");
    let status = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", UMASK_TEST, "--test-threads=1"])
        .env(CHILD, &dir.0)
        .status()
        .unwrap();
    assert!(status.success(), "the child under umask 022 failed");
    // It ran: the store it left is still private.
    let db = dir.0.join("data").join("agentgate.db");
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&dir.0.join("data")), 0o700);
}

#[tokio::test]
async fn existing_store_files_are_tightened_on_open() {
    let dir = TempDir::new("private-tighten");
    let (store, db) = filled(&dir.0).await;
    drop(store);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let wal = companion(&db, "-wal");
    std::fs::write(&wal, b"").unwrap();
    std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o666)).unwrap();
    let _store = SqliteStore::open(&db).unwrap();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&wal), 0o600);
}

/// Runs `cat path` as `nobody`; whether it read the file.
fn nobody_reads(path: &Path) -> bool {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
        .arg(path)
        .output()
        .unwrap()
        .status
        .success()
}

#[tokio::test]
async fn another_user_cannot_read_the_store() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        eprintln!("skipped: needs root and setpriv to run a command as nobody");
        return;
    }
    let dir = TempDir::new("private-uid");
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_store, db) = filled(&dir.0).await;
    // The control: nobody reads an ordinary file beside it.
    let public = dir.0.join("public.txt");
    std::fs::write(&public, "x").unwrap();
    std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(
        nobody_reads(&public),
        "the control: nobody reaches the folder"
    );
    for suffix in ["", "-wal", "-shm"] {
        assert!(
            !nobody_reads(&companion(&db, suffix)),
            "agentgate.db{suffix}"
        );
    }
    // Each layer holds alone: with the folder opened, the files still
    // refuse.
    let data = db.parent().unwrap();
    std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o755)).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        assert!(
            !nobody_reads(&companion(&db, suffix)),
            "agentgate.db{suffix} (folder open)"
        );
    }
}
