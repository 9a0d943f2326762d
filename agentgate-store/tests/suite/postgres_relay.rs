//! The PostgreSQL ask relay between two connections, as two server
//! processes would hold them.

use std::time::Duration;

use agentgate_permission::{PermissionRequest, Reply};
use agentgate_store::{AskRelay, PostgresRelay, RelayedReply};
use tokio::sync::broadcast;

use super::fixtures::postgres;

fn request(id: &str) -> PermissionRequest {
    PermissionRequest {
        id: id.to_string(),
        session_id: "ses_1".to_string(),
        permission: "bash".to_string(),
        patterns: vec!["git push origin main".to_string()],
        always: vec!["git push *".to_string()],
        metadata: serde_json::json!({"command": "git push origin main", "note": "日本語 ✓"}),
        tool: None,
    }
}

/// The next reply; a guard against hanging forever if it never comes
/// (the bound is not what is tested).
async fn next(replies: &mut broadcast::Receiver<RelayedReply>) -> RelayedReply {
    tokio::time::timeout(Duration::from_secs(60), replies.recv())
        .await
        .expect("a reply arrives")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_published_in_one_process_is_answered_from_another() {
    let Some(options) = postgres("relay") else {
        return;
    };
    let a = PostgresRelay::connect(options.clone()).await.unwrap();
    let b = PostgresRelay::connect(options).await.unwrap();
    let mut a_replies = a.replies();
    let mut b_replies = b.replies();

    let first = request("per_first");
    let second = request("per_second");
    a.publish(&first).await.unwrap();
    a.publish(&first).await.unwrap(); // publishing twice lists it once
    b.publish(&second).await.unwrap();
    assert_eq!(b.pending().await.unwrap(), [first.clone(), second.clone()]);
    assert_eq!(a.pending().await.unwrap(), [first.clone(), second.clone()]);

    // B answers A's ask; A's receiver gets it (and so does B's own, which
    // ignores requests its gate does not hold).
    assert!(b.answer("per_first", &Reply::Always).await.unwrap());
    let got = next(&mut a_replies).await;
    assert_eq!(
        got,
        RelayedReply {
            request_id: "per_first".to_string(),
            reply: Reply::Always
        }
    );
    assert_eq!(next(&mut b_replies).await, got);

    // A rejection with feedback longer than a notification may carry.
    let feedback = format!("no: {}", "é".repeat(10_000));
    assert!(
        a.answer("per_second", &Reply::correct(feedback.clone()))
            .await
            .unwrap()
    );
    let got = next(&mut b_replies).await;
    assert_eq!(got.request_id, "per_second");
    assert_eq!(got.reply, Reply::correct(feedback));

    // Unknown requests are not answered.
    assert!(!b.answer("per_unknown", &Reply::Once).await.unwrap());

    // Withdrawn in one process, gone everywhere, and no longer answerable.
    a.withdraw("per_first").await.unwrap();
    assert_eq!(b.pending().await.unwrap(), vec![second.clone()]);
    assert_eq!(a.pending().await.unwrap(), vec![second.clone()]);
    assert!(!b.answer("per_first", &Reply::Once).await.unwrap());
    b.withdraw("per_second").await.unwrap();
    assert!(a.pending().await.unwrap().is_empty());

    // The next reply A sees is for a new ask: nothing stale was queued.
    a.publish(&request("per_third")).await.unwrap();
    assert!(b.answer("per_third", &Reply::Once).await.unwrap());
    let mut seen = next(&mut a_replies).await;
    if seen.request_id == "per_second" {
        seen = next(&mut a_replies).await;
    }
    assert_eq!(seen.request_id, "per_third");
}

#[tokio::test]
async fn relays_in_different_schemas_do_not_see_each_other() {
    let (Some(one), Some(two)) = (postgres("relay_one"), postgres("relay_two")) else {
        return;
    };
    let a = PostgresRelay::connect(one).await.unwrap();
    let b = PostgresRelay::connect(two).await.unwrap();
    a.publish(&request("per_mine")).await.unwrap();
    assert!(b.pending().await.unwrap().is_empty());
    assert!(!b.answer("per_mine", &Reply::Once).await.unwrap());
    assert_eq!(a.pending().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_schema_name_that_is_not_an_identifier_is_refused() {
    // Refused before any connection is made: no server needed.
    let options = agentgate_store::PostgresOptions::new("postgres://nobody@127.0.0.1:1/none");
    let error = PostgresRelay::connect(options.schema("bad\"; DROP SCHEMA public; --"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, agentgate_store::PostgresError::InvalidSchema(_)),
        "{error:?}"
    );
}
