//! Compaction under ScriptedModel and the paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use super::common::*;
use agentgate_core::CompactionSettings;
use agentgate_core::testing::semantics::{CONTINUE_PROMPT, SUMMARY_PROMPT, SUMMARY_QUESTION};
use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    ContentPart, FinishReason, LoopSettings, ModelError, ModelInfo, ModelLimits, ModelMessage,
    ModelRequest, ModelRole, Part, StopReason, ToolChoice, Usage,
};
use serde_json::json;

/// A scripted model with a 10 000-token context and 1 000 output tokens:
/// 9 000 usable.
fn limited(scripts: impl IntoIterator<Item = Script>) -> Arc<ScriptedModel> {
    let mut info = ModelInfo::new("scripted", "small");
    info.limits = ModelLimits {
        context: 10_000,
        input: 0,
        output: 1_000,
    };
    Arc::new(ScriptedModel::new(scripts).with_info(info))
}

fn full() -> Usage {
    Usage {
        input: 9_500,
        ..Default::default()
    }
}

fn texts(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn assistant(text: &str) -> ModelMessage {
    ModelMessage {
        role: ModelRole::Assistant,
        content: vec![ContentPart::Text {
            text: text.into(),
            provider_metadata: None,
        }],
    }
}

#[tokio::test(start_paused = true)]
async fn usage_over_the_limit_compacts_and_the_turn_continues() {
    let long = "x".repeat(5_000);
    let model = limited([
        // Turn 1: a long tool output, then an answer.
        Script::calls([("c1", "echo", json!({"text": long}))]),
        Script::reply("first answer"),
        // Turn 2.
        Script::reply("second answer"),
        // Turn 3: the first step fills the context.
        Script::new()
            .tool_call("c2", "echo", json!({"text": "short"}))
            .finish_with(FinishReason::ToolCalls, full()),
        // The summary call, then the turn goes on.
        Script::reply("## Goal\nSUMMARY TEXT"),
        Script::reply("done"),
        // Turn 4, after the compaction.
        Script::reply("still compacted"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b.tool(Echo::default())).await;

    engine.prompt(&session.id, "first question").await.unwrap();
    engine.prompt(&session.id, "second question").await.unwrap();
    let result = engine.prompt(&session.id, "third question").await.unwrap();

    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    assert_eq!(result.text(), "done");
    let requests = model.requests();
    assert_eq!(requests.len(), 6);

    // The summary call: the head only (turn 1), tool output cut, the prompt last.
    let summary = &requests[4];
    assert_eq!(summary.tool_choice, ToolChoice::None);
    assert_eq!(*summary.messages[0], ModelMessage::user("first question"));
    let (_, cut, _) = &results(summary)[0];
    assert!(
        cut.starts_with(&"x".repeat(2_000)) && cut.len() < 2_100,
        "{}",
        cut.len()
    );
    assert_eq!(*summary.messages[3], assistant("first answer"));
    assert_eq!(
        &**summary.messages.last().unwrap(),
        &ModelMessage::user(SUMMARY_PROMPT)
    );
    assert_eq!(summary.messages.len(), 5);

    // The next request: the summary, the kept tail (turns 2 and 3), the
    // continuation — not the old head.
    let next = &requests[5];
    assert_eq!(*next.messages[0], ModelMessage::user(SUMMARY_QUESTION));
    assert_eq!(*next.messages[1], assistant("## Goal\nSUMMARY TEXT"));
    assert_eq!(*next.messages[2], ModelMessage::user("second question"));
    assert_eq!(*next.messages[3], assistant("second answer"));
    assert_eq!(*next.messages[4], ModelMessage::user("third question"));
    assert_eq!(results(next), [("c2".into(), "short".into(), false)]);
    assert_eq!(
        &**next.messages.last().unwrap(),
        &ModelMessage::user(CONTINUE_PROMPT)
    );
    assert!(!texts(next).iter().any(|t| t == "first question"));
    assert!(!texts(next).iter().any(|t| t.starts_with("xxx")));

    // The transcript keeps everything, plus the request and the summary.
    let history = engine.messages(&session.id).await.unwrap();
    assert!(history.iter().any(|m| m.text() == "first question"));
    let summary_message = history.iter().find(|m| m.summary).unwrap();
    assert_eq!(summary_message.agent, "compaction");
    assert!(history.iter().any(|m| {
        m.parts
            .iter()
            .any(|p| matches!(p, Part::Compaction { kept, .. } if kept.len() == 4))
    }));
    assert_every_call_has_result(&history);

    // A later prompt still sends the compacted view.
    engine.prompt(&session.id, "fourth question").await.unwrap();
    let later = model.requests().pop().unwrap();
    assert_eq!(*later.messages[0], ModelMessage::user(SUMMARY_QUESTION));
    assert!(!texts(&later).iter().any(|t| t == "first question"));
    assert_eq!(
        &**later.messages.last().unwrap(),
        &ModelMessage::user("fourth question")
    );
}

#[tokio::test(start_paused = true)]
async fn provider_overflow_compacts_and_replays_the_user_message() {
    let model = limited([
        Script::reply("first answer"),
        Script::fail(ModelError::ContextOverflow {
            message: "prompt is too long".into(),
        }),
        Script::reply("SUMMARY"),
        Script::reply("answered after compaction"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b).await;
    engine.prompt(&session.id, "first question").await.unwrap();
    let result = engine.prompt(&session.id, "big question").await.unwrap();

    assert_eq!(result.text(), "answered after compaction");
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[2]
            .messages
            .iter()
            .map(|m| (**m).clone())
            .collect::<Vec<_>>(),
        [
            ModelMessage::user("first question"),
            assistant("first answer"),
            ModelMessage::user(SUMMARY_PROMPT)
        ]
    );
    assert_eq!(
        requests[3]
            .messages
            .iter()
            .map(|m| (**m).clone())
            .collect::<Vec<_>>(),
        [
            ModelMessage::user(SUMMARY_QUESTION),
            assistant("SUMMARY"),
            ModelMessage::user("big question")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn auto_off_ends_the_turn_with_context_overflow() {
    let model = limited([
        Script::fail(ModelError::ContextOverflow {
            message: "prompt is too long".into(),
        }),
        Script::reply("never"),
    ]);
    let mut config = LoopSettings::default();
    config.compaction = CompactionSettings {
        auto: false,
        ..Default::default()
    };
    let (engine, session) = setup(model.clone(), |b| b.config(config)).await;
    let result = engine.prompt(&session.id, "hi").await.unwrap();
    assert_eq!(result.stop, StopReason::ContextOverflow);
    assert_eq!(model.requests().len(), 1, "no summary call");
    assert!(
        !engine
            .messages(&session.id)
            .await
            .unwrap()
            .iter()
            .any(|m| m.summary)
    );
}

#[tokio::test(start_paused = true)]
async fn a_summary_call_that_overflows_stops_with_an_error() {
    let model = limited([
        Script::reply("first answer"),
        Script::new()
            .tool_call("c1", "echo", json!({"text": "a"}))
            .finish_with(FinishReason::ToolCalls, full()),
        Script::fail(ModelError::ContextOverflow {
            message: "prompt is too long".into(),
        }),
        Script::reply("never"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b.tool(Echo::default())).await;
    engine.prompt(&session.id, "first question").await.unwrap();
    let result = engine.prompt(&session.id, "go").await.unwrap();
    let StopReason::Error { error } = &result.stop else {
        panic!("expected an error, got {:?}", result.stop);
    };
    assert_eq!(error.name, "context_overflow");
    assert_eq!(model.remaining(), 1);
    // The failed summary is not used: history is sent as before.
    let history = engine.messages(&session.id).await.unwrap();
    let sent = agentgate_core::transcript::history_for_model(&history);
    assert_eq!(sent[0], ModelMessage::user("first question"));
    assert_every_call_has_result(&history);
}

/// §11.4: a final answer whose usage fills the context compacts in the
/// same turn, and the model continues from the summary.
#[tokio::test(start_paused = true)]
async fn a_final_answer_that_fills_the_context_compacts_in_the_same_turn() {
    let model = limited([
        Script::reply("first answer"),
        Script::new()
            .text("a long final answer")
            .finish_with(FinishReason::Stop, full()),
        Script::reply("## Goal\nSUMMARY"),
        Script::reply("continued after the summary"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b).await;
    engine.prompt(&session.id, "first question").await.unwrap();
    let result = engine.prompt(&session.id, "second question").await.unwrap();
    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    assert_eq!(result.text(), "continued after the summary");
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "answer, summary, continuation");
    assert_eq!(
        &**requests[3].messages.last().unwrap(),
        &ModelMessage::user(CONTINUE_PROMPT)
    );
    let history = engine.messages(&session.id).await.unwrap();
    assert!(history.iter().any(|m| m.summary), "compacted in this turn");
}

/// The output cap each step asks for, for a model declaring `output`.
async fn output_cap_sent(output: u64) -> Option<u32> {
    let mut info = ModelInfo::new("scripted", "capped");
    info.limits.output = output;
    let model = Arc::new(ScriptedModel::new([Script::reply("ok")]).with_info(info));
    let (engine, session) = setup(model.clone(), |b| b).await;
    engine.prompt(&session.id, "hi").await.unwrap();
    model.requests()[0].max_output_tokens
}

#[tokio::test(start_paused = true)]
async fn the_models_output_limit_is_sent_capped_at_32000() {
    assert_eq!(output_cap_sent(1_000).await, Some(1_000));
    assert_eq!(output_cap_sent(64_000).await, Some(32_000));
    assert_eq!(output_cap_sent(0).await, None, "not declared: not sent");
}
