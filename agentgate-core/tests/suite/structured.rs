//! Structured output (`Engine::run_structured`): the answer validated
//! against the schema, sent back with what failed, a bounded number of
//! times.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::common::*;
use agentgate_core::testing::Script;
use agentgate_core::{ContentPart, OutputSchema, StructuredError};
use serde_json::json;

fn schema() -> OutputSchema {
    OutputSchema::new(json!({
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string"}}},
        "required": ["files"],
        "additionalProperties": false
    }))
    .unwrap()
}

/// The text of the last user message of request `index`.
fn last_user_text(model: &agentgate_core::testing::ScriptedModel, index: usize) -> String {
    let request = &model.requests()[index];
    let message = request.messages.last().unwrap();
    message
        .content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(start_paused = true)]
async fn a_valid_first_answer_is_returned_as_json() {
    let model = model([Script::reply("```json\n{\"files\": [\"src/lib.rs\"]}\n```")]);
    let (engine, session) = setup(model.clone(), |b| b).await;

    let answer = engine
        .run_structured(&session.id, "Which files?", &schema())
        .await
        .unwrap();

    assert_eq!(answer.value, json!({"files": ["src/lib.rs"]}));
    assert_eq!(answer.retries, 0);
    let prompt = last_user_text(&model, 0);
    assert!(prompt.starts_with("Which files?"), "{prompt}");
    assert!(
        prompt.contains("\"additionalProperties\": false"),
        "the schema is in the prompt: {prompt}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_that_breaks_the_schema_is_sent_back_with_what_failed() {
    let model = model([
        Script::reply("The files are src/lib.rs and src/main.rs."),
        Script::reply(r#"{"files": ["src/lib.rs", "src/main.rs"]}"#),
    ]);
    let (engine, session) = setup(model.clone(), |b| b).await;

    let answer = engine
        .run_structured(&session.id, "Which files?", &schema())
        .await
        .unwrap();

    assert_eq!(answer.retries, 1);
    assert_eq!(answer.value["files"][1], "src/main.rs");
    let correction = last_user_text(&model, 1);
    assert!(correction.contains("not valid JSON"), "{correction}");
    assert!(correction.contains("Answer again"), "{correction}");
}

#[tokio::test(start_paused = true)]
async fn an_answer_that_never_validates_ends_with_the_last_problem() {
    let model = model([
        Script::reply(r#"{"files": "src/lib.rs"}"#),
        Script::reply(r#"{"files": ["a"], "extra": 1}"#),
        Script::reply(r#"{"file": []}"#),
        Script::reply("never asked"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b).await;

    let error = engine
        .run_structured(&session.id, "Which files?", &schema())
        .await
        .unwrap_err();

    let StructuredError::Invalid {
        message,
        retries,
        answer,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(*retries, 2, "the default retry limit");
    assert_eq!(answer, r#"{"file": []}"#);
    assert!(
        message.contains("required property \"files\" is missing"),
        "{message}"
    );
    assert_eq!(model.remaining(), 1, "three tries, no more");
    assert!(last_user_text(&model, 1).contains("/files: expected an array, found a string"));
    assert!(last_user_text(&model, 2).contains("the property \"extra\" is not allowed"));

    // A limit of 0 sends nothing back.
    let model = super::common::model([Script::reply("no json")]);
    let (engine, session) = setup(model.clone(), |b| b).await;
    let error = engine
        .run_structured(&session.id, "go", &schema().retries(0))
        .await
        .unwrap_err();
    assert!(matches!(error, StructuredError::Invalid { retries: 0, .. }));
}
