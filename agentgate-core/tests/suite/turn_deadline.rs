//! `LoopSettings::max_turn_time`: a turn that runs past its deadline is
//! stopped like a cancelled one (open calls closed) and ends with a
//! `timeout` error; a turn that finishes in time, or is cancelled by its
//! caller, is not touched. Under tokio's paused clock.

use std::time::Duration;

use agentgate_core::testing::Script;
use agentgate_core::{LoopSettings, Part, StopReason, ToolState};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::common::*;

fn with_deadline(seconds: u64) -> LoopSettings {
    let mut config = LoopSettings::default();
    config.max_turn_time = Some(Duration::from_secs(seconds));
    config
}

#[tokio::test(start_paused = true)]
async fn a_hanging_model_is_ended_at_the_deadline() {
    let model = model([Script::new()
        .text("Working.")
        .partial_tool_call("c1", "echo", r#"{"text":"#)
        .hang()]);
    let (engine, session) = setup(model, |b| b.config(with_deadline(90))).await;

    let start = Instant::now();
    let turn = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(start.elapsed(), Duration::from_secs(90));
    let StopReason::Error { error } = &turn.stop else {
        panic!("expected a timeout, got {:?}", turn.stop);
    };
    assert_eq!(error.name, "timeout");
    assert!(
        error.message.contains("time limit of 1 min 30 s"),
        "{}",
        error.message
    );
    assert!(error.message.contains("--max-time"), "{}", error.message);
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_counts_against_the_deadline() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "x"}))]),
        Script::reply("never reached"),
    ]);
    let echo = Echo {
        delay: Duration::from_secs(600),
        ..Default::default()
    };
    let (engine, session) = setup(model, |b| b.tool(echo).config(with_deadline(5))).await;
    let turn = engine.prompt(&session.id, "go").await.unwrap();
    assert!(matches!(&turn.stop, StopReason::Error { error } if error.name == "timeout"));
    let history = engine.messages(&session.id).await.unwrap();
    let states: Vec<bool> = history
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::Tool(tool) => Some(matches!(tool.state, ToolState::Error { .. })),
            _ => None,
        })
        .collect();
    assert_eq!(states, [true], "the running call is closed as interrupted");
}

#[tokio::test(start_paused = true)]
async fn a_turn_within_its_deadline_and_a_cancelled_one_are_untouched() {
    let (engine, session) = setup(model([Script::reply("done")]), |b| {
        b.config(with_deadline(5))
    })
    .await;
    let turn = engine.prompt(&session.id, "go").await.unwrap();
    assert!(matches!(turn.stop, StopReason::Done { .. }));

    let (engine, session) = setup(model([Script::new().hang()]), |b| {
        b.config(with_deadline(60))
    })
    .await;
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (engine, id, cancel) = (engine.clone(), session.id.clone(), cancel.clone());
        async move {
            engine
                .prompt_with(&id, vec![Part::text("go")], cancel)
                .await
        }
    });
    tokio::time::sleep(Duration::from_secs(10)).await;
    cancel.cancel();
    let turn = task.await.unwrap().unwrap();
    assert_eq!(turn.stop, StopReason::Cancelled);
}
