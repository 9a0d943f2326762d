//! An engine nobody attends: asks without an approver are rejected at once
//! with opencode's warning; a turn streams its events and ends with its
//! result; a turn without an answer is an `Err` in one call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgate_core::testing::Script;
use agentgate_core::{DeltaField, Event, Part, StopReason, TurnError, TurnEvent};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::*;

/// A `tracing` subscriber that keeps the message of every warning.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct MessageField<'a>(&'a mut String);

impl tracing::field::Visit for MessageField<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = String::new();
        event.record(&mut MessageField(&mut message));
        self.0.lock().unwrap().push(message);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test(start_paused = true)]
async fn an_ask_without_an_approver_is_rejected_at_once_with_the_warning() {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    // Other tests of this binary run on other threads without this
    // subscriber; make sure no callsite interest cached by them hides the
    // warning from this thread's subscriber.
    tracing::callsite::rebuild_interest_cache();
    let model = model([Script::calls([(
        "c1",
        "bash",
        json!({"command": "rm -rf build"}),
    )])]);
    let bash = Bash::default();
    // No `.permissions(...)`: the engine has no way to ask anyone.
    let (engine, session) = setup(model.clone(), |b| b.tool(bash.clone())).await;
    let started = tokio::time::Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(3600),
        engine.prompt(&session.id, "clean"),
    )
    .await
    .expect("the turn must not wait for an answer nobody can give")
    .unwrap();
    assert_eq!(started.elapsed(), Duration::ZERO, "no time passes");
    assert_eq!(result.stop, StopReason::Rejected);
    assert!(bash.ran.lock().unwrap().is_empty(), "no side effect");
    assert!(engine.permissions().pending().is_empty());
    let seen = warnings.0.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|w| w == "permission requested: bash (rm -rf build); auto-rejecting"),
        "the non-interactive warning was logged: {seen:?}"
    );
    // One call turns that into an error that says why.
    let error = result.into_result().unwrap_err();
    assert!(
        error.to_string().contains("permission was rejected"),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn run_is_ok_with_an_answer_and_err_without_one() {
    let model = model([
        Script::reply("fine"),
        Script::calls([("c1", "bash", json!({"command": "make"}))]),
    ]);
    let (engine, session) = setup(model, |b| b.tool(Bash::default())).await;
    assert_eq!(engine.run(&session.id, "hi").await.unwrap().text(), "fine");
    match engine.run(&session.id, "build it").await {
        Err(TurnError::Stopped(turn)) => assert_eq!(turn.stop, StopReason::Rejected),
        other => panic!("expected a stopped turn, got {other:?}"),
    }
    match engine.run("ses_missing", "hi").await {
        Err(TurnError::Prompt(_)) => {}
        other => panic!("expected a prompt error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn prompt_stream_yields_every_delta_in_order_then_the_result() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "one"}))]),
        Script::new()
            .text_chunks(&["The ", "answer ", "is ", "42."])
            .finish(agentgate_core::FinishReason::Stop),
    ]);
    let (engine, session) = setup(model, |b| b.tool(Echo::default())).await;
    let items: Vec<TurnEvent> = engine
        .prompt_stream(
            &session.id,
            vec![Part::text("ask")],
            CancellationToken::new(),
        )
        .collect()
        .await;
    let (last, events) = items.split_last().unwrap();
    let TurnEvent::Finished(Ok(turn)) = last else {
        panic!("the stream must end with the result, got {last:?}");
    };
    assert_eq!(turn.text(), "The answer is 42.");
    let mut text = String::new();
    let mut saw_tool_result = false;
    for item in events {
        let TurnEvent::Event(event) = item else {
            panic!("only the last item is the result");
        };
        assert_eq!(event.session_id(), session.id);
        match event {
            Event::PartDelta {
                field: DeltaField::Text,
                delta,
                ..
            } => {
                assert!(saw_tool_result, "the answer comes after the tool ran");
                text.push_str(delta);
            }
            Event::PartUpdated {
                part: Part::Tool(tool),
                ..
            } if tool.state.is_finished() => saw_tool_result = true,
            _ => {}
        }
    }
    assert_eq!(text, "The answer is 42.", "every delta, in order");
    assert!(
        matches!(
            events.last(),
            Some(TurnEvent::Event(Event::SessionStatus { .. }))
        ),
        "the idle status is the last event before the result"
    );
}

/// Two turns streamed at once on one engine: each stream carries its own
/// session's events and none of the other's.
#[tokio::test(start_paused = true)]
async fn concurrent_streams_on_one_engine_carry_only_their_own_session() {
    let model = model([
        Script::new()
            .text_chunks(&["first ", "answer"])
            .finish(agentgate_core::FinishReason::Stop),
        Script::new()
            .text_chunks(&["second ", "answer"])
            .finish(agentgate_core::FinishReason::Stop),
    ]);
    let (engine, first) = setup(model, |b| b).await;
    let second = engine
        .create_session(agentgate_core::Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    let (a, b) = tokio::join!(
        engine
            .prompt_stream(&first.id, vec![Part::text("ask")], CancellationToken::new())
            .collect::<Vec<TurnEvent>>(),
        engine
            .prompt_stream(
                &second.id,
                vec![Part::text("ask")],
                CancellationToken::new()
            )
            .collect::<Vec<TurnEvent>>()
    );
    for (items, id) in [(&a, &first.id), (&b, &second.id)] {
        let mut events = 0;
        for item in items {
            if let TurnEvent::Event(event) = item {
                assert_eq!(event.session_id(), id, "a stream carries only its session");
                events += 1;
            }
        }
        assert!(events > 0, "each stream carries its own events");
        assert!(matches!(items.last(), Some(TurnEvent::Finished(Ok(_)))));
    }
    let texts: Vec<String> = [&a, &b]
        .iter()
        .map(|items| match items.last() {
            Some(TurnEvent::Finished(Ok(turn))) => turn.text(),
            _ => String::new(),
        })
        .collect();
    assert!(
        texts.contains(&"first answer".to_string()) && texts.contains(&"second answer".to_string()),
        "{texts:?}"
    );
}
