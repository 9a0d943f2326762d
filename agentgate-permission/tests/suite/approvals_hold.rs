//! "Always" approvals and revokes hold: when the store cannot persist an
//! approval, and when either lands while the gate is re-reading the store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use agentgate_permission::{
    Action, ApprovalStore, AskRequest, MemoryStore, PermissionGate, Reply, Rule, Ruleset,
    StoreError,
};

use super::common::{ask_pending, finished, pending_ids, within};

fn git_push(id: &str) -> AskRequest {
    AskRequest::new("s", "bash", ["git push"])
        .always(["git *"])
        .id(id)
}

fn git_rule() -> Rule {
    Rule::new("bash", "git *", Action::Allow)
}

/// Keeps approvals in memory but fails every append, like a full disk.
struct CannotAppend(MemoryStore);

impl ApprovalStore for CannotAppend {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.0.load(project)
    }
    fn append(&self, _: &str, _: &[Rule]) -> Result<(), StoreError> {
        Err(StoreError::Io {
            action: "write",
            path: "/full-disk/approvals.json".into(),
            source: std::io::Error::other("no space left on device"),
        })
    }
    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        self.0.revoke(project, rule)
    }
}

/// A gate over a [`CannotAppend`] store in which `bash git *` was just
/// approved with "always" (held in memory only).
async fn approved_but_not_persisted() -> PermissionGate {
    let gate = PermissionGate::builder()
        .store(Arc::new(CannotAppend(MemoryStore::new())), "p")
        .build()
        .unwrap();
    let first = ask_pending(&gate, git_push("a1")).await;
    gate.reply("a1", Reply::Always).unwrap();
    within("a1", finished(first)).await.unwrap();
    gate
}

#[tokio::test]
async fn an_unpersisted_approval_can_be_revoked_and_stays_revoked() {
    let gate = approved_but_not_persisted().await;
    assert_eq!(gate.approved().rules(), [git_rule()]);

    // Only memory held it: revoke still reports that something was removed.
    assert!(gate.revoke(&git_rule()).unwrap());
    assert!(gate.approved().is_empty());
    assert!(!gate.revoke(&git_rule()).unwrap());

    // The next ask re-reads the store; the revoked approval must not come
    // back from the list of approvals the store could not keep.
    let second = ask_pending(&gate, git_push("a2")).await;
    assert_eq!(pending_ids(&gate), ["a2"]);
    assert!(gate.approved().is_empty());
    gate.reply("a2", Reply::reject()).unwrap();
    assert!(within("a2", finished(second)).await.is_err());

    assert!(!gate.is_shut_down());
    gate.shutdown();
    assert!(gate.is_shut_down());
}

/// A store whose next `load` reports what it held when the read began, but
/// returns only when the test says so.
#[derive(Default)]
struct SlowRead {
    rules: Mutex<Ruleset>,
    hold: Mutex<Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>>,
}

impl ApprovalStore for SlowRead {
    fn load(&self, _: &str) -> Result<Ruleset, StoreError> {
        let snapshot = self.rules.lock().unwrap().clone();
        if let Some((started, release)) = self.hold.lock().unwrap().take() {
            started.send(()).unwrap();
            release.recv().unwrap();
        }
        Ok(snapshot)
    }
    fn append(&self, _: &str, rules: &[Rule]) -> Result<(), StoreError> {
        self.rules.lock().unwrap().extend(rules.iter().cloned());
        Ok(())
    }
    fn revoke(&self, _: &str, rule: &Rule) -> Result<bool, StoreError> {
        let mut rules = self.rules.lock().unwrap();
        let before = rules.len();
        *rules = rules.iter().filter(|r| *r != rule).cloned().collect();
        Ok(rules.len() != before)
    }
}

#[test]
fn a_revoke_during_a_store_read_is_not_undone_by_that_read() {
    let store = Arc::new(SlowRead::default());
    store.append("p", &[git_rule()]).unwrap();
    let gate = PermissionGate::builder()
        .store(Arc::clone(&store) as Arc<dyn ApprovalStore>, "p")
        .build()
        .unwrap();
    assert_eq!(gate.approved().rules(), [git_rule()]);

    // An ask that needs a prompt re-reads the store; hold that read.
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    *store.hold.lock().unwrap() = Some((started_tx, release_rx));
    let asking = gate.ask(AskRequest::new("s", "bash", ["rm -rf build"]).id("r1"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ask = std::thread::spawn(move || runtime.block_on(asking));
    started_rx
        .recv_timeout(super::common::limit())
        .expect("the ask never read the store");

    // The user revokes while that read is in flight, then the read returns
    // the list as it was before.
    assert!(gate.revoke(&git_rule()).unwrap());
    release_tx.send(()).unwrap();
    let deadline = std::time::Instant::now() + super::common::limit();
    while pending_ids(&gate) != ["r1"] {
        assert!(
            std::time::Instant::now() < deadline,
            "r1 never became pending"
        );
        std::thread::yield_now();
    }
    assert!(
        gate.approved().is_empty(),
        "the stale read brought back a revoked approval: {:?}",
        gate.approved()
    );
    gate.reply("r1", Reply::reject()).unwrap();
    assert!(ask.join().unwrap().is_err());
}

#[tokio::test]
async fn an_unpersisted_approval_survives_store_rereads_once() {
    let gate = approved_but_not_persisted().await;

    // An ask that needs a prompt re-reads the (empty) store: the approval
    // the store could not keep is added back, once.
    let other = ask_pending(&gate, AskRequest::new("s", "bash", ["rm x"]).id("b1")).await;
    assert_eq!(gate.approved().rules(), [git_rule()]);
    gate.reply("b1", Reply::reject()).unwrap();
    assert!(within("b1", finished(other)).await.is_err());
    within("a2", gate.ask(git_push("a2"))).await.unwrap();
}

/// A store read that began before an "always" reply does not erase it.
#[test]
fn an_approval_given_during_a_store_read_is_not_undone_by_that_read() {
    let store = Arc::new(SlowRead::default());
    let gate = PermissionGate::builder()
        .store(Arc::clone(&store) as Arc<dyn ApprovalStore>, "p")
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let waiting = runtime.spawn(gate.ask(git_push("a1")));
    wait_pending(&gate, &["a1"]);

    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    *store.hold.lock().unwrap() = Some((started_tx, release_rx));
    let reading = runtime.spawn(gate.ask(AskRequest::new("s", "bash", ["rm x"]).id("b1")));
    started_rx
        .recv_timeout(super::common::limit())
        .expect("the ask never read the store");
    gate.reply("a1", Reply::Always).unwrap();
    release_tx.send(()).unwrap();
    wait_pending(&gate, &["b1"]);
    assert_eq!(gate.approved().rules(), [git_rule()]);
    assert!(runtime.block_on(waiting).unwrap().is_ok());
    gate.reply("b1", Reply::reject()).unwrap();
    assert!(runtime.block_on(reading).unwrap().is_err());
}

/// The gate is not tied to tokio: an ask with a timeout awaited by another
/// executor waits for its answer (the timeout needs a tokio timer, so it
/// is not applied there).
#[test]
fn an_ask_with_a_timeout_outside_tokio_still_waits_for_the_answer() {
    let gate = PermissionGate::new();
    let request = AskRequest::new("s", "bash", ["git push"])
        .id("t1")
        .timeout(std::time::Duration::from_millis(1));
    let answering = {
        let gate = gate.clone();
        std::thread::spawn(move || {
            wait_pending(&gate, &["t1"]);
            gate.reply("t1", Reply::Once).unwrap();
        })
    };
    assert!(futures::executor::block_on(gate.ask(request)).is_ok());
    answering.join().unwrap();
}

/// Waits (real time, bounded) until exactly `ids` are pending.
fn wait_pending(gate: &PermissionGate, ids: &[&str]) {
    let deadline = std::time::Instant::now() + super::common::limit();
    while pending_ids(gate) != ids {
        assert!(
            std::time::Instant::now() < deadline,
            "{ids:?} never became pending"
        );
        std::thread::yield_now();
    }
}
