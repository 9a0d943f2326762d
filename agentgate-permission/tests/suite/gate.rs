//! The approval gate under real concurrency: cascades, approvers,
//! cancellation, shutdown, leaks, persistence and timeouts.

// Helpers outside `#[test]` functions panic on purpose: a failed
// expectation is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate_permission::{
    Action, AllowAll, ApprovalStore, Approver, AskRequest, ChannelApprover, JsonFileStore,
    MemoryStore, PermissionError, PermissionEvent, PermissionGate, PermissionRequest, Reply, Rule,
    Ruleset, StoreError,
};
use async_trait::async_trait;
use tokio::sync::{Notify, broadcast};

use super::common::{ask_pending, finished, pending_ids, temp_dir, wait_until, within};

/// Every event received so far.
fn drain(events: &mut broadcast::Receiver<PermissionEvent>) -> Vec<PermissionEvent> {
    let mut out = Vec::new();
    while let Ok(event) = events.try_recv() {
        out.push(event);
    }
    out
}

fn replied(session: &str, id: &str, reply: Reply) -> PermissionEvent {
    PermissionEvent::Replied {
        session_id: session.into(),
        request_id: id.into(),
        reply,
    }
}

fn replies_only(events: Vec<PermissionEvent>) -> Vec<PermissionEvent> {
    events
        .into_iter()
        .filter(|e| matches!(e, PermissionEvent::Replied { .. }))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_fails_every_pending_ask_of_its_session_and_none_of_another() {
    let permissions = PermissionGate::new();
    let mut events = permissions.subscribe();
    let s1 = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("s1")).await;
    let t1 = ask_pending(&permissions, AskRequest::new("t", "bash", ["ls"]).id("t1")).await;
    let s2 = ask_pending(
        &permissions,
        AskRequest::new("s", "edit", ["a.rs"]).id("s2"),
    )
    .await;
    let s3 = ask_pending(&permissions, AskRequest::new("s", "bash", ["pwd"]).id("s3")).await;
    let t2 = ask_pending(
        &permissions,
        AskRequest::new("t", "edit", ["b.rs"]).id("t2"),
    )
    .await;

    permissions
        .reply("s2", Reply::correct("use the formatter"))
        .unwrap();

    assert_eq!(
        finished(s2).await,
        Err(PermissionError::Corrected {
            feedback: "use the formatter".into()
        })
    );
    assert_eq!(finished(s1).await, Err(PermissionError::Rejected));
    assert_eq!(finished(s3).await, Err(PermissionError::Rejected));
    assert_eq!(pending_ids(&permissions), ["t1", "t2"]);
    assert!(!t1.is_finished() && !t2.is_finished());
    assert_eq!(
        replies_only(drain(&mut events)),
        [
            replied("s", "s2", Reply::correct("use the formatter")),
            replied("s", "s1", Reply::reject()),
            replied("s", "s3", Reply::reject()),
        ]
    );
    // The cascaded requests are gone for good.
    assert_eq!(
        permissions.reply("s1", Reply::Once),
        Err(PermissionError::NotFound { id: "s1".into() })
    );

    // The other session still answers normally.
    permissions.reply("t1", Reply::Once).unwrap();
    assert_eq!(finished(t1).await, Ok(()));
    assert_eq!(pending_ids(&permissions), ["t2"]);
    permissions.shutdown();
    assert_eq!(finished(t2).await, Err(PermissionError::Rejected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_resolves_exactly_the_siblings_the_new_approvals_alone_allow() {
    let store = Arc::new(MemoryStore::new());
    let permissions = PermissionGate::with_store(store.clone(), "proj").unwrap();
    let mut events = permissions.subscribe();
    let ask_rule = Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]);

    let a = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git status"])
            .always(["git status *"])
            .id("a"),
    )
    .await;
    // Only partly covered: stays.
    let b = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git status -s", "git push"]).id("b"),
    )
    .await;
    // Covered by the approval alone: resolved.
    let c = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git status --short"]).id("c"),
    )
    .await;
    // Another permission: stays.
    let d = ask_pending(
        &permissions,
        AskRequest::new("s", "edit", ["git status"]).id("d"),
    )
    .await;
    // Its own ruleset says ask, but only the approvals count: resolved.
    let e = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["git status -v", "git status"])
            .ruleset(ask_rule.clone())
            .id("e"),
    )
    .await;
    // Another session: stays, even though it would now be allowed.
    let f = ask_pending(
        &permissions,
        AskRequest::new("t", "bash", ["git status"]).id("f"),
    )
    .await;

    permissions.reply("a", Reply::Always).unwrap();

    let approval = Rule::new("bash", "git status *", Action::Allow);
    assert_eq!(finished(a).await, Ok(()));
    assert_eq!(finished(c).await, Ok(()));
    assert_eq!(finished(e).await, Ok(()));
    assert_eq!(pending_ids(&permissions), ["b", "d", "f"]);
    assert_eq!(
        permissions.approved().rules(),
        std::slice::from_ref(&approval)
    );
    assert_eq!(
        store.list("proj").unwrap().rules(),
        std::slice::from_ref(&approval)
    );
    assert_eq!(
        replies_only(drain(&mut events)),
        [
            replied("s", "a", Reply::Always),
            replied("s", "c", Reply::Always),
            replied("s", "e", Reply::Always),
        ]
    );

    // A new ask in another session is allowed at once by the approval ...
    assert_eq!(
        within(
            "an approved ask",
            permissions.ask(AskRequest::new("t", "bash", ["git status"]))
        )
        .await,
        Ok(())
    );
    // ... but never over its own deny rule (a deviation from opencode,
    // where approvals come after the ruleset and win).
    let deny = Ruleset::from(vec![Rule::new("bash", "*", Action::Deny)]);
    assert!(matches!(
        within(
            "a denied ask",
            permissions.ask(AskRequest::new("t", "bash", ["git status"]).ruleset(deny))
        )
        .await,
        Err(PermissionError::Denied { .. })
    ));
    assert!(!b.is_finished() && !d.is_finished() && !f.is_finished());
    permissions.shutdown();
    for task in [b, d, f] {
        assert_eq!(finished(task).await, Err(PermissionError::Rejected));
    }
}

/// An approver that never answers until released, counting its live
/// futures and the answers it managed to give.
#[derive(Default)]
struct HeldApprover {
    started: AtomicUsize,
    live: Arc<AtomicUsize>,
    answered: AtomicUsize,
    release: Notify,
    seen: Mutex<Vec<String>>,
}

struct LiveGuard(Arc<AtomicUsize>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Approver for HeldApprover {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.live.fetch_add(1, Ordering::SeqCst);
        let _live = LiveGuard(self.live.clone());
        self.started.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(request.id.clone());
        self.release.notified().await;
        self.answered.fetch_add(1, Ordering::SeqCst);
        Reply::Once
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_answer_after_a_cascade_is_ignored() {
    let approver = Arc::new(HeldApprover::default());
    let permissions = PermissionGate::builder()
        .approver(approver.clone())
        .build()
        .unwrap();
    let mut events = permissions.subscribe();

    let a = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a")).await;
    let b = ask_pending(&permissions, AskRequest::new("s", "bash", ["pwd"]).id("b")).await;
    wait_until("the approver saw both requests", || {
        approver.started.load(Ordering::SeqCst) == 2
    })
    .await;
    // Each request's approver runs in its own task: in either order.
    let mut seen = approver.seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["a", "b"]);

    // The host answers first: the reject cascade resolves both.
    permissions.reply("a", Reply::reject()).unwrap();
    assert_eq!(finished(a).await, Err(PermissionError::Rejected));
    assert_eq!(finished(b).await, Err(PermissionError::Rejected));

    // The approver's futures are cancelled; releasing them changes nothing.
    wait_until("the approver futures are dropped", || {
        approver.live.load(Ordering::SeqCst) == 0
    })
    .await;
    approver.release.notify_waiters();
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(approver.answered.load(Ordering::SeqCst), 0);
    assert!(permissions.pending().is_empty());
    assert_eq!(
        replies_only(drain(&mut events)),
        [
            replied("s", "a", Reply::reject()),
            replied("s", "b", Reply::reject()),
        ]
    );
}

/// Answers `Once` after a scripted number of yields, racing the host.
struct LateApprover;

#[async_trait]
impl Approver for LateApprover {
    async fn approve(&self, _request: &PermissionRequest) -> Reply {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        Reply::Once
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_approver_and_host_resolve_each_request_exactly_once() {
    let permissions = PermissionGate::builder()
        .approver(Arc::new(LateApprover))
        .build()
        .unwrap();
    let mut events = permissions.subscribe();
    for round in 0..200 {
        let id = format!("r{round}");
        let task = tokio::spawn(permissions.ask(AskRequest::new("s", "bash", ["ls"]).id(&id)));
        // The host answers too, sometimes before, sometimes after the approver.
        for _ in 0..(round % 60) {
            tokio::task::yield_now().await;
        }
        let host = permissions.reply(&id, Reply::reject());
        let outcome = finished(task).await;
        match host {
            Ok(()) => assert_eq!(outcome, Err(PermissionError::Rejected)),
            Err(PermissionError::NotFound { .. }) => assert_eq!(outcome, Ok(())),
            Err(other) => panic!("unexpected reply error {other}"),
        }
    }
    let replies = replies_only(drain(&mut events));
    assert_eq!(replies.len(), 200, "one reply event per request");
    assert!(permissions.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_approver_brings_the_ui_answer_to_the_asker() {
    let (approver, mut requests) = ChannelApprover::new(8);
    let permissions = PermissionGate::builder()
        .approver(Arc::new(approver))
        .build()
        .unwrap();
    let ui = tokio::spawn(async move {
        let pending = within("the UI sees the request", requests.recv())
            .await
            .unwrap();
        assert_eq!(pending.request.patterns, ["cargo test"]);
        assert_eq!(
            pending.request.answers(),
            [
                agentgate_permission::ReplyKind::Once,
                agentgate_permission::ReplyKind::Always,
                agentgate_permission::ReplyKind::AlwaysExact,
                agentgate_permission::ReplyKind::Reject
            ]
        );
        assert!(pending.respond(Reply::Always));
    });
    let result = within(
        "ask",
        permissions.ask(
            AskRequest::new("s", "bash", ["cargo test"])
                .always(["cargo test *"])
                .id("x"),
        ),
    )
    .await;
    assert_eq!(result, Ok(()));
    within("the UI task", ui).await.unwrap();
    assert_eq!(
        permissions.approved().rules(),
        [Rule::new("bash", "cargo test *", Action::Allow)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_ask_leaves_no_entry_and_cannot_be_resurrected() {
    let permissions = PermissionGate::new();
    let mut events = permissions.subscribe();

    // Abort the task awaiting the ask (a cancelled session).
    let task = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a")).await;
    task.abort();
    wait_until("the aborted ask is withdrawn", || {
        permissions.pending().is_empty()
    })
    .await;
    assert_eq!(
        permissions.reply("a", Reply::Once),
        Err(PermissionError::NotFound { id: "a".into() })
    );

    // Drop a future after its first poll.
    let mut future = Box::pin(permissions.ask(AskRequest::new("s", "bash", ["pwd"]).id("b")));
    assert!(futures::poll!(future.as_mut()).is_pending());
    assert_eq!(pending_ids(&permissions), ["b"]);
    drop(future);
    assert!(permissions.pending().is_empty());
    assert!(permissions.reply("b", Reply::Once).is_err());

    let events = drain(&mut events);
    assert_eq!(events.len(), 2, "only the two Asked events: {events:?}");
    assert!(replies_only(events).is_empty());
}

/// A parked ask is no longer pending and is never answered: a reply finds
/// nothing, the asker keeps waiting (nothing it would do after an answer
/// happens) until it is dropped, and parking it again finds nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_ask_is_not_pending_and_its_asker_waits_until_dropped() {
    let permissions = PermissionGate::new();
    let mut events = permissions.subscribe();
    let mut future = Box::pin(permissions.ask(AskRequest::new("s", "bash", ["ls"]).id("p")));
    assert!(futures::poll!(future.as_mut()).is_pending());
    let parked = permissions.park("p").expect("pending, so parked");
    assert_eq!(parked.id, "p");
    assert!(permissions.pending().is_empty());
    assert_eq!(
        permissions.reply("p", Reply::Once),
        Err(PermissionError::NotFound { id: "p".into() })
    );
    assert!(permissions.park("p").is_none());
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(
        futures::poll!(future.as_mut()).is_pending(),
        "never answered"
    );
    drop(future);
    // A new ask reusing the id is an ordinary ask.
    let mut again = Box::pin(permissions.ask(AskRequest::new("s", "bash", ["ls"]).id("p")));
    assert!(futures::poll!(again.as_mut()).is_pending());
    permissions.reply("p", Reply::Once).unwrap();
    assert!(again.await.is_ok());
    let events = drain(&mut events);
    assert_eq!(replies_only(events).len(), 1, "only the second ask's reply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_and_dropping_the_service_reject_every_pending_ask() {
    let permissions = PermissionGate::new();
    let mut events = permissions.subscribe();
    let a = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a")).await;
    let b = ask_pending(&permissions, AskRequest::new("t", "edit", ["x"]).id("b")).await;
    permissions.shutdown();
    assert!(permissions.pending().is_empty());
    assert_eq!(finished(a).await, Err(PermissionError::Rejected));
    assert_eq!(finished(b).await, Err(PermissionError::Rejected));
    assert_eq!(drain(&mut events).len(), 2, "no Replied events");
    assert!(matches!(
        events.try_recv(),
        Err(broadcast::error::TryRecvError::Closed)
    ));
    // After shutdown, prompts are refused at once; rules still decide.
    assert_eq!(
        within("ask", permissions.ask(AskRequest::new("s", "bash", ["ls"]))).await,
        Err(PermissionError::Rejected)
    );
    let allow = Ruleset::from(vec![Rule::new("*", "*", Action::Allow)]);
    assert_eq!(
        within(
            "ask",
            permissions.ask(AskRequest::new("s", "bash", ["ls"]).ruleset(allow))
        )
        .await,
        Ok(())
    );

    // Dropping the last handle does the same.
    let permissions = PermissionGate::new();
    let clone = permissions.clone();
    let c = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("c")).await;
    drop(permissions);
    assert_eq!(
        pending_ids(&clone),
        ["c"],
        "a clone keeps the service alive"
    );
    drop(clone);
    assert_eq!(finished(c).await, Err(PermissionError::Rejected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_asks_and_cancels_leave_nothing_behind() {
    let approver = Arc::new(HeldApprover::default());
    let permissions = PermissionGate::builder()
        .approver(approver.clone())
        .event_capacity(16)
        .build()
        .unwrap();
    let mut events = permissions.subscribe();

    for round in 0..10_000u32 {
        let request = AskRequest::new(format!("s{}", round % 7), "bash", ["ls"]);
        if round % 2 == 0 {
            // Poll once, then drop: the request and its approver task go.
            let mut future = Box::pin(permissions.ask(request));
            assert!(futures::poll!(future.as_mut()).is_pending());
            drop(future);
        } else {
            // Spawn, then abort the asker mid-wait.
            let task = tokio::spawn(permissions.ask(request));
            if round % 3 == 0 {
                tokio::task::yield_now().await;
            }
            task.abort();
            let _ = within("an aborted ask", task).await;
        }
    }

    assert!(permissions.pending().is_empty());
    wait_until("every approver task is gone", || {
        approver.live.load(Ordering::SeqCst) == 0 && Arc::strong_count(&approver) == 2
    })
    .await;
    assert!(approver.started.load(Ordering::SeqCst) > 0);
    assert_eq!(approver.answered.load(Ordering::SeqCst), 0);
    // The unread receiver keeps only the last 16 events (the capacity), not
    // one per ask: the rest are reported as missed.
    let missed = match events.try_recv() {
        Err(broadcast::error::TryRecvError::Lagged(missed)) => missed,
        other => panic!("expected the receiver to have lagged, got {other:?}"),
    };
    assert!(missed >= 5_000 - 16, "missed {missed}");
    let kept = drain(&mut events);
    assert_eq!(kept.len(), 16);
    // No reply events were published for withdrawn requests.
    assert!(replies_only(kept).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_store_survives_a_restart_and_revokes() {
    let dir = temp_dir("restart");
    let project = "/home/u/proj";
    let approval = Rule::new("bash", "git log *", Action::Allow);
    {
        let permissions =
            PermissionGate::with_store(Arc::new(JsonFileStore::new(&dir)), project).unwrap();
        let task = ask_pending(
            &permissions,
            AskRequest::new("s", "bash", ["git log -1"])
                .always(["git log *"])
                .id("a"),
        )
        .await;
        permissions.reply("a", Reply::Always).unwrap();
        assert_eq!(finished(task).await, Ok(()));
    }

    // "Restart": a new store and service over the same directory.
    let store = Arc::new(JsonFileStore::new(&dir));
    let path = store.path_for(project);
    assert!(path.exists(), "{} was written", path.display());
    let permissions = PermissionGate::with_store(store.clone(), project).unwrap();
    assert_eq!(
        permissions.approved().rules(),
        std::slice::from_ref(&approval)
    );
    assert_eq!(
        within(
            "ask",
            permissions.ask(AskRequest::new(
                "other-session",
                "bash",
                ["git log --oneline"]
            ))
        )
        .await,
        Ok(()),
        "the remembered approval answers without a prompt"
    );
    // Other projects do not share it.
    assert!(store.list("elsewhere").unwrap().is_empty());

    assert!(permissions.revoke(&approval).unwrap());
    assert!(!permissions.revoke(&approval).unwrap());
    assert!(permissions.approved().is_empty());
    assert!(JsonFileStore::new(&dir).load(project).unwrap().is_empty());
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_store_refuses_a_corrupt_file_naming_it() {
    let dir = temp_dir("corrupt");
    let store = Arc::new(JsonFileStore::new(&dir));
    let path = store.path_for("proj");
    std::fs::write(&path, "{\"version\": 1, \"approved\": [ oops").unwrap();

    let error = PermissionGate::with_store(store.clone(), "proj").unwrap_err();
    assert!(matches!(&error, StoreError::Corrupt { path: p, .. } if *p == path));
    let message = error.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message names the file: {message}"
    );
    // Appending never overwrites the corrupt file.
    let rule = Rule::new("bash", "ls", Action::Allow);
    assert!(matches!(
        store.append("proj", &[rule]),
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"version\": 1, \"approved\": [ oops"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_store_refuses_a_file_of_another_format_version() {
    let dir = temp_dir("version");
    let store = Arc::new(JsonFileStore::new(&dir));
    let path = store.path_for("proj");
    let future = r#"{"version": 2, "project": "proj", "approved": []}"#;
    std::fs::write(&path, future).unwrap();

    let error = PermissionGate::with_store(store.clone(), "proj").unwrap_err();
    assert!(matches!(
        &error,
        StoreError::UnsupportedVersion { version: 2, .. }
    ));
    assert!(error.to_string().contains(&path.display().to_string()));
    let rule = Rule::new("bash", "ls", Action::Allow);
    assert!(store.append("proj", &[rule]).is_err());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        future,
        "left untouched"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_timeout_rejects_the_ask_and_removes_the_entry() {
    let permissions = PermissionGate::new();
    let mut events = permissions.subscribe();
    let task = tokio::spawn(
        permissions.ask(
            AskRequest::new("s", "bash", ["ls"])
                .id("a")
                .timeout(Duration::from_secs(30)),
        ),
    );
    tokio::task::yield_now().await;
    assert_eq!(pending_ids(&permissions), ["a"]);

    tokio::time::advance(Duration::from_secs(29)).await;
    tokio::task::yield_now().await;
    assert!(!task.is_finished());
    assert_eq!(pending_ids(&permissions), ["a"]);

    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(
        within("a timed-out ask", task).await.unwrap(),
        Err(PermissionError::Expired { seconds: 30 })
    );
    assert!(permissions.pending().is_empty());
    assert_eq!(
        replies_only(drain(&mut events)),
        [replied("s", "a", Reply::reject())]
    );
    assert!(permissions.reply("a", Reply::Once).is_err());

    // Without a timeout, nothing expires.
    let task = tokio::spawn(permissions.ask(AskRequest::new("s", "bash", ["ls"]).id("b")));
    tokio::time::advance(Duration::from_secs(3600)).await;
    tokio::task::yield_now().await;
    assert!(!task.is_finished());
    permissions.reply("b", Reply::Once).unwrap();
    assert_eq!(within("an answered ask", task).await.unwrap(), Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_all_and_deny_rules() {
    let permissions = PermissionGate::builder()
        .approver(Arc::new(AllowAll))
        .build()
        .unwrap();
    assert_eq!(
        within("ask", permissions.ask(AskRequest::new("s", "bash", ["ls"]))).await,
        Ok(())
    );
    // Deny rules still deny, listing the caller's relevant rules only.
    let rules = Ruleset::from(vec![
        Rule::new("*", "*", Action::Allow),
        Rule::new("read", "*", Action::Deny),
        Rule::new("bash", "rm *", Action::Deny),
    ]);
    let error = within(
        "ask",
        permissions.ask(AskRequest::new("s", "bash", ["ls", "rm -rf /"]).ruleset(rules)),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error,
        PermissionError::Denied {
            rules: Ruleset::from(vec![
                Rule::new("*", "*", Action::Allow),
                Rule::new("bash", "rm *", Action::Deny),
            ])
        }
    );
    assert!(permissions.pending().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_ids_ascend_and_events_stream() {
    use futures::StreamExt;
    let permissions = PermissionGate::new();
    let mut stream = Box::pin(permissions.events());
    let first = tokio::spawn(permissions.ask(AskRequest::new("s", "bash", ["a"])));
    let Some(PermissionEvent::Asked(one)) = within("first event", stream.next()).await else {
        panic!("expected an Asked event")
    };
    let second = tokio::spawn(permissions.ask(AskRequest::new("s", "bash", ["b"])));
    let Some(PermissionEvent::Asked(two)) = within("second event", stream.next()).await else {
        panic!("expected an Asked event")
    };
    assert!(
        one.id.starts_with("per_") && one.id < two.id,
        "{one:?} {two:?}"
    );
    permissions.reply(&two.id, Reply::Once).unwrap();
    permissions.reply(&one.id, Reply::Once).unwrap();
    assert_eq!(finished(first).await, Ok(()));
    assert_eq!(finished(second).await, Ok(()));
    permissions.shutdown();
    let rest: Vec<_> = within("the stream ends", stream.collect()).await;
    assert_eq!(rest.len(), 2, "two replies, then the stream ends: {rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reusing_a_pending_id_replaces_the_old_request_which_is_rejected() {
    let permissions = PermissionGate::new();
    let old = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("x")).await;
    let other = ask_pending(&permissions, AskRequest::new("s", "bash", ["pwd"]).id("y")).await;
    let new = tokio::spawn(permissions.ask(AskRequest::new("s", "edit", ["a.rs"]).id("x")));
    assert_eq!(finished(old).await, Err(PermissionError::Rejected));
    wait_until("the new request replaced the old one", || {
        permissions
            .pending()
            .iter()
            .any(|r| r.id == "x" && r.permission == "edit")
    })
    .await;
    // Replaced in place: insertion order is kept.
    assert_eq!(pending_ids(&permissions), ["x", "y"]);
    permissions.reply("x", Reply::Once).unwrap();
    assert_eq!(finished(new).await, Ok(()));
    assert_eq!(pending_ids(&permissions), ["y"]);
    permissions.reply("y", Reply::Once).unwrap();
    assert_eq!(finished(other).await, Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_approver_takes_pending_requests_and_clear_approver_stops_new_ones() {
    let permissions = PermissionGate::new();
    // Pending before any approver exists.
    let early = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["ls"]).id("early"),
    )
    .await;
    permissions.set_approver(Arc::new(AllowAll));
    assert_eq!(finished(early).await, Ok(()));
    // Asked while the approver is attached: answered by it.
    assert_eq!(
        within(
            "approved ask",
            permissions.ask(AskRequest::new("s", "bash", ["pwd"]))
        )
        .await,
        Ok(())
    );
    // Detached: new requests wait for a reply.
    permissions.clear_approver();
    let late = ask_pending(
        &permissions,
        AskRequest::new("s", "bash", ["df"]).id("late"),
    )
    .await;
    assert_eq!(pending_ids(&permissions), ["late"]);
    permissions.reply("late", Reply::reject()).unwrap();
    assert_eq!(finished(late).await, Err(PermissionError::Rejected));
}

/// "Always exactly" stores the asked patterns and nothing wider: the next
/// command the wider `always` pattern would have covered asks again, while
/// the same command and a pending sibling asking it are allowed; on a
/// request whose patterns hold wildcards it stores nothing (a `once`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_exact_stores_only_the_asked_patterns() {
    let permissions = PermissionGate::new();
    let ask = |id: &str, command: &str| {
        AskRequest::new("s", "bash", [command])
            .always(["rm *"])
            .id(id)
    };
    let a = ask_pending(&permissions, ask("a", "rm -f src/a.txt")).await;
    let same = ask_pending(&permissions, ask("b", "rm -f src/a.txt")).await;
    let wider = ask_pending(&permissions, ask("c", "rm -rf src")).await;
    let request = permissions.pending()[0].clone();
    assert_eq!(request.always_choices().len(), 2);
    permissions.reply("a", Reply::AlwaysExact).unwrap();
    assert_eq!(finished(a).await, Ok(()));
    assert_eq!(finished(same).await, Ok(()));
    assert_eq!(
        permissions.approved().rules(),
        [Rule::new("bash", "rm -f src/a.txt", Action::Allow)]
    );
    assert_eq!(request.always_choices()[1].rules, permissions.approved());
    // `rm -rf src` is still waiting for an answer.
    assert_eq!(pending_ids(&permissions), ["c"]);
    permissions.reply("c", Reply::reject()).unwrap();
    assert_eq!(finished(wider).await, Err(PermissionError::Rejected));

    let globbed = ask_pending(&permissions, ask("d", "rm -f *.txt")).await;
    assert!(permissions.pending()[0].exact_rules().is_empty());
    permissions.reply("d", Reply::AlwaysExact).unwrap();
    assert_eq!(finished(globbed).await, Ok(()));
    assert_eq!(permissions.approved().len(), 1);
}

/// The asks of the tools the tool suite cannot drive alone (their request
/// shapes as their code builds them: the task tool, the doom-loop check,
/// the skill tool, an MCP tool, an MCP resource read; a hook's has none): each
/// "always" label names exactly the rules the gate then stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_always_label_names_the_rules_the_gate_stores() {
    let shapes: &[(&str, &str, &str, &[&str])] = &[
        (
            "task",
            "explore",
            "*",
            &[
                r#"Always allow task "*" (starting every kind of sub-agent)"#,
                r#"Always allow task exactly "explore""#,
            ],
        ),
        (
            "doom_loop",
            "bash",
            "bash",
            &[r#"Always allow doom_loop "bash""#],
        ),
        ("skill", "pdf", "pdf", &[r#"Always allow skill "pdf""#]),
        (
            "docs_search",
            "*",
            "*",
            &[r#"Always allow docs_search "*" (every "docs_search" call)"#],
        ),
        (
            "read",
            "mcp:docs:file:///a",
            "mcp:docs:*",
            &[
                r#"Always allow read "mcp:docs:*""#,
                r#"Always allow read exactly "mcp:docs:file:///a""#,
            ],
        ),
    ];
    // A hook's ask has no "always" patterns: no "always" is offered.
    let request = PermissionRequest {
        id: "h".into(),
        session_id: "s".into(),
        permission: "hook".into(),
        patterns: vec!["bash".into()],
        always: vec![],
        metadata: serde_json::json!({}),
        tool: None,
    };
    assert!(request.always_choices().is_empty());
    for (permission, pattern, always, labels) in shapes {
        for (at, label) in labels.iter().enumerate() {
            let permissions = PermissionGate::new();
            let ask = ask_pending(
                &permissions,
                AskRequest::new("s", *permission, [*pattern])
                    .always([*always])
                    .id("x"),
            )
            .await;
            let request = permissions.pending()[0].clone();
            let choices = request.always_choices();
            let shown: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
            assert_eq!(shown, *labels, "{permission}");
            let reply = match choices[at].kind {
                agentgate_permission::ReplyKind::AlwaysExact => Reply::AlwaysExact,
                _ => Reply::Always,
            };
            permissions.reply("x", reply).unwrap();
            assert_eq!(finished(ask).await, Ok(()));
            assert_eq!(permissions.approved(), choices[at].rules, "{label}");
            assert!(
                choices[at].rules.iter().all(|rule| label
                    .contains(&format!("{} {:?}", rule.permission, rule.pattern))
                    || label.contains(&format!("exactly {:?}", rule.pattern))),
                "{label}"
            );
        }
    }
}

/// `on_asked` runs before an answer counts and `on_answered` before the
/// asking call goes on, in that order, for answered asks only: not for
/// asks the rules settle, nor for asks dropped by a shutdown.
#[tokio::test]
async fn the_ask_hooks_run_in_order_around_the_answer_and_only_for_asks() {
    let permissions = PermissionGate::new();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (asked_log, answered_log) = (Arc::clone(&log), Arc::clone(&log));
    permissions.on_asked(Arc::new(move |request: PermissionRequest| {
        let log = Arc::clone(&asked_log);
        Box::pin(async move {
            // Slow on purpose: an answer given meanwhile waits for it.
            tokio::time::sleep(Duration::from_millis(50)).await;
            log.lock().unwrap().push(format!("asked {}", request.id));
            true
        })
    }));
    permissions.on_answered(Arc::new(move |request: PermissionRequest| {
        let log = Arc::clone(&answered_log);
        Box::pin(async move {
            log.lock().unwrap().push(format!("answered {}", request.id));
            // Claimed elsewhere: the call must not run.
            request.id != "a4"
        })
    }));
    let task = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a1")).await;
    permissions.reply("a1", Reply::Once).unwrap();
    within("the answered ask", task).await.unwrap().unwrap();
    assert_eq!(*log.lock().unwrap(), ["asked a1", "answered a1"]);

    // Settled by the rules: no hook.
    let allow = Ruleset::from(vec![Rule::new("bash", "*", Action::Allow)]);
    permissions
        .ask(AskRequest::new("s", "bash", ["ls"]).id("a2").ruleset(allow))
        .await
        .unwrap();
    assert_eq!(log.lock().unwrap().len(), 2);

    // An answer whose claim was lost elsewhere rejects the call.
    let task = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a4")).await;
    permissions.reply("a4", Reply::Once).unwrap();
    assert!(matches!(
        within("the overruled ask", task).await.unwrap(),
        Err(PermissionError::Rejected)
    ));
    log.lock().unwrap().retain(|entry| !entry.ends_with("a4"));

    // Dropped by a shutdown: asked, never answered.
    let task = ask_pending(&permissions, AskRequest::new("s", "bash", ["ls"]).id("a3")).await;
    permissions.shutdown();
    assert!(within("the dropped ask", task).await.unwrap().is_err());
    assert_eq!(
        *log.lock().unwrap(),
        ["asked a1", "answered a1", "asked a3"]
    );
}

/// `answer_next` answers the same question at once, before any approver
/// sees it (a rejecting one is installed here), and without the gate's
/// hooks (the host saved and claimed the ask it repeats: saving it again
/// would list an ask nobody can answer); a different question is left to
/// the approver, with the hooks.
#[tokio::test]
async fn an_answer_held_for_a_question_beats_the_approver_and_only_for_it() {
    let permissions = PermissionGate::new();
    permissions.set_approver(Arc::new(agentgate_permission::RejectAll::new(
        std::io::sink(),
    )));
    let hooked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    for answered in [false, true] {
        let hooked = Arc::clone(&hooked);
        let hook: agentgate_permission::AnsweredHook =
            Arc::new(move |request: PermissionRequest| {
                let hooked = Arc::clone(&hooked);
                Box::pin(async move {
                    let kind = if answered { "answered" } else { "asked" };
                    hooked
                        .lock()
                        .unwrap()
                        .push(format!("{kind} {}", request.id));
                    true
                })
            });
        if answered {
            permissions.on_answered(hook);
        } else {
            permissions.on_asked(hook);
        }
    }
    let asked = |id: &str, pattern: &str| {
        AskRequest::new("s", "bash", [pattern])
            .id(id)
            .tool("msg_1", "call_1")
    };
    let held: PermissionRequest = serde_json::from_value(serde_json::json!({
        "id": "old", "session_id": "s", "permission": "bash", "patterns": ["ls"],
        "always": [], "metadata": {}, "tool": {"message_id": "msg_1", "call_id": "call_1"},
    }))
    .unwrap();
    permissions.answer_next(held, Reply::Once);
    // Another question: the approver rejects it, the held answer waits.
    assert!(
        within("another question", permissions.ask(asked("x", "rm -rf /")))
            .await
            .is_err()
    );
    // The same question: answered at once.
    within("the held question", permissions.ask(asked("y", "ls")))
        .await
        .unwrap();
    // Used once: the next time the approver decides again.
    assert!(
        within("asked again", permissions.ask(asked("z", "ls")))
            .await
            .is_err()
    );
    assert_eq!(
        *hooked.lock().unwrap(),
        ["asked x", "answered x", "asked z", "answered z"],
        "the held question ran no hook"
    );
}
