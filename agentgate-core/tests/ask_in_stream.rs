//! An ask rejected at once is in the turn's stream, every time. Its own
//! test binary: it runs many turns on a multi-thread runtime, whose worker
//! threads would race the suite's tracing-subscriber test for tracing's
//! callsite cache.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "suite/common.rs"]
mod common;

use agentgate_core::testing::Script;
use agentgate_core::{Event, Part, TurnEvent};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::*;

/// An ask that is rejected at once still reaches the turn's stream, before
/// the result: the stream takes the gate's events from the gate, so the
/// ask cannot arrive after the turn ended (as it could when it came only
/// through the engine's relaying task). Many turns on a multi-thread
/// runtime, where that task and the turn race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_rejected_at_once_is_in_the_stream_every_time() {
    for round in 0..40 {
        let model = model([Script::calls([(
            "c1",
            "bash",
            json!({"command": format!("rm -rf build{round}")}),
        )])]);
        let (engine, session) = setup(model, |b| b.tool(Bash::default())).await;
        let items: Vec<TurnEvent> = engine
            .prompt_stream(
                &session.id,
                vec![Part::text("clean")],
                CancellationToken::new(),
            )
            .collect()
            .await;
        let asked = items
            .iter()
            .position(|i| matches!(i, TurnEvent::Event(Event::PermissionAsked { .. })));
        let finished = items
            .iter()
            .position(|i| matches!(i, TurnEvent::Finished(_)));
        assert!(
            asked.is_some(),
            "round {round}: the ask is missing: {items:?}"
        );
        assert!(
            asked < finished,
            "round {round}: the ask came after the result"
        );
        let asks = items
            .iter()
            .filter(|i| matches!(i, TurnEvent::Event(Event::PermissionAsked { .. })))
            .count();
        assert_eq!(asks, 1, "round {round}: the ask appears once");
    }
}
