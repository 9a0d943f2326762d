//! The JSON approval store under attack and under concurrency: planted
//! symlinks, a file of another project, several
//! processes sharing one directory, and revocations that must stick.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use agentgate_permission::{
    Action, ApprovalStore, AskRequest, JsonFileStore, PermissionError, PermissionGate, Reply, Rule,
    Ruleset, StoreError,
};

use super::common::{ask_pending, finished, temp_dir, within};

fn allow(pattern: &str) -> Rule {
    Rule::new("bash", pattern, Action::Allow)
}

#[test]
fn a_file_naming_another_project_is_refused_and_left_alone() {
    let dir = temp_dir("wrong-project");
    let store = JsonFileStore::new(&dir);
    store.append("alpha", &[allow("ls *")]).unwrap();
    // The file of `alpha` copied to where `beta`'s approvals live.
    let copied = std::fs::read_to_string(store.path_for("alpha")).unwrap();
    std::fs::write(store.path_for("beta"), &copied).unwrap();

    let error = store.load("beta").unwrap_err();
    assert!(
        matches!(&error, StoreError::WrongProject { expected, found, .. } if expected == "beta" && found == "alpha"),
        "{error:?}"
    );
    assert!(error.to_string().contains("alpha"));
    assert!(PermissionGate::with_store(Arc::new(JsonFileStore::new(&dir)), "beta").is_err());
    assert!(store.append("beta", &[allow("rm *")]).is_err());
    assert_eq!(
        std::fs::read_to_string(store.path_for("beta")).unwrap(),
        copied
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn planted_symlinks_never_redirect_a_write() {
    use std::os::unix::fs::symlink;

    let dir = temp_dir("symlinks");
    let victim_dir = temp_dir("symlinks-victim");
    let victim = victim_dir.join("host-file");
    std::fs::write(&victim, "precious").unwrap();
    let store = JsonFileStore::new(&dir);
    let project = "p";

    // The temporary names the store used to pick (pid and a counter) are
    // all taken by links to the victim: the store must not open them.
    for n in 0..64 {
        let old_style = dir.join(format!(
            ".project-{project}.json.tmp-{}-{n}",
            std::process::id()
        ));
        symlink(&victim, old_style).unwrap();
    }
    store.append(project, &[allow("ls *")]).unwrap();
    assert_eq!(store.load(project).unwrap().rules(), [allow("ls *")]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // A link planted as the lock file is refused, not followed.
    std::fs::remove_file(store.lock_path_for(project)).unwrap();
    symlink(&victim, store.lock_path_for(project)).unwrap();
    let error = store.append(project, &[allow("cat *")]).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error:?}");

    // A link planted as the approvals file is neither read nor replaced
    // through.
    std::fs::remove_file(store.lock_path_for(project)).unwrap();
    std::fs::remove_file(store.path_for(project)).unwrap();
    symlink(&victim, store.path_for(project)).unwrap();
    assert!(matches!(store.load(project), Err(StoreError::Io { .. })));
    assert!(store.append(project, &[allow("cat *")]).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // The files the store writes are private to their owner.
    std::fs::remove_file(store.path_for(project)).unwrap();
    store.append(project, &[allow("ls *")]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(store.path_for(project))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&victim_dir).unwrap();
}

#[test]
fn temporary_names_are_not_reused_or_left_behind() {
    let dir = temp_dir("temp-names");
    let store = JsonFileStore::new(&dir);
    for i in 0..20 {
        store.append("p", &[allow(&format!("tool{i} *"))]).unwrap();
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    assert_eq!(store.load("p").unwrap().len(), 20);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_held_lock_makes_another_writer_wait() {
    let dir = temp_dir("held-lock");
    let store = JsonFileStore::new(&dir);
    store.append("p", &[allow("ls *")]).unwrap();
    // Another "process" holds the lock (flock is per open file, so a
    // second open file in this process contends like another process).
    let holder = File::options()
        .read(true)
        .write(true)
        .open(store.lock_path_for("p"))
        .unwrap();
    holder.lock().unwrap();

    let (done, finished_append) = mpsc::channel();
    let writer = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            let other = JsonFileStore::new(&dir);
            let result = other.append("p", &[allow("cat *")]);
            done.send(()).unwrap();
            result
        })
    };
    assert!(
        finished_append
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "the append went through a held lock"
    );
    holder.unlock().unwrap();
    finished_append
        .recv_timeout(Duration::from_secs(10))
        .unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(
        store.load("p").unwrap().rules(),
        [allow("ls *"), allow("cat *")]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_writers_on_one_directory_lose_nothing_and_revive_nothing() {
    let dir = temp_dir("writers");
    let revoked = allow("rm *");
    JsonFileStore::new(&dir)
        .append("p", std::slice::from_ref(&revoked))
        .unwrap();
    // Separate store values: nothing but the lock file orders them.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let dir = dir.clone();
            let revoked = revoked.clone();
            std::thread::spawn(move || {
                let store = JsonFileStore::new(&dir);
                for i in 0..25 {
                    store.append("p", &[allow(&format!("w{w}-{i} *"))]).unwrap();
                    if w == 0 && i == 3 {
                        assert!(store.revoke("p", &revoked).unwrap());
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let rules = JsonFileStore::new(&dir).load("p").unwrap();
    assert_eq!(rules.len(), 100, "every append survived");
    assert!(!rules.contains(&revoked), "the revoked rule came back");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_revoked_by_another_process_stops_allowing_at_once() {
    let dir = temp_dir("revoke-elsewhere");
    let rules = Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]);
    // Two services over one directory, as two processes of one project.
    let first = PermissionGate::with_store(Arc::new(JsonFileStore::new(&dir)), "p").unwrap();
    let second = PermissionGate::with_store(Arc::new(JsonFileStore::new(&dir)), "p").unwrap();

    let task = ask_pending(
        &first,
        AskRequest::new("s", "bash", ["git log -1"])
            .always(["git log *"])
            .ruleset(rules.clone())
            .id("a"),
    )
    .await;
    first.reply("a", Reply::Always).unwrap();
    assert_eq!(finished(task).await, Ok(()));

    // The second service sees the new approval without a restart ...
    assert_eq!(
        within(
            "approved elsewhere",
            second.ask(AskRequest::new("t", "bash", ["git log --stat"]).ruleset(rules.clone())),
        )
        .await,
        Ok(())
    );
    // ... and stops using it as soon as the first one revokes it.
    assert!(first.revoke(&allow("git log *")).unwrap());
    let again = ask_pending(
        &second,
        AskRequest::new("t", "bash", ["git log --stat"])
            .ruleset(rules.clone())
            .id("b"),
    )
    .await;
    second.reply("b", Reply::reject()).unwrap();
    assert_eq!(finished(again).await, Err(PermissionError::Rejected));
    assert!(second.approved().is_empty());
    // A later append by the second service does not bring it back.
    let task = ask_pending(
        &second,
        AskRequest::new("t", "bash", ["ls"])
            .always(["ls *"])
            .ruleset(rules)
            .id("c"),
    )
    .await;
    second.reply("c", Reply::Always).unwrap();
    assert_eq!(finished(task).await, Ok(()));
    assert_eq!(
        JsonFileStore::new(&dir).load("p").unwrap().rules(),
        [allow("ls *")]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
