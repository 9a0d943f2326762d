//! The plan agent's reminder reaches the model on the latest user message
//! of every request of a plan turn, never the stored transcript; a build
//! turn after a plan turn is told that planning is over.

use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentEnvironment, Agents, ContentPart, Engine, ModelRequest, ModelRole, Part, Session,
};
use agentgate_permission::PermissionConfig;

/// The texts of the request's last user message.
fn last_user_texts(request: &ModelRequest) -> Vec<String> {
    let user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == ModelRole::User)
        .expect("a user message");
    user.content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plan_turns_carry_the_reminder_and_build_after_plan_is_told_it_may_act() {
    let root = agentgate_testing::scratch_dir("agentgate-core-reminders");
    let env = AgentEnvironment::new(
        root.join("data").to_string_lossy(),
        root.join("tmp").to_string_lossy(),
        root.to_string_lossy(),
    );
    let agents = Agents::builtin(&env, &PermissionConfig::default());
    let model = Arc::new(ScriptedModel::new([
        Script::reply("1. read the code 2. change it"),
        Script::reply("done"),
        Script::reply("fresh"),
    ]));
    let engine = Engine::builder(model.clone())
        .agents(agents)
        .worktree(root.clone())
        .build();

    let session = engine
        .create_session(Session::new("plan", &root))
        .await
        .unwrap();
    engine.prompt(&session.id, "plan the change").await.unwrap();
    let plan = last_user_texts(&model.requests()[0]);
    assert_eq!(plan[0], "plan the change");
    assert!(plan[1].contains("Plan mode is on"), "{plan:?}");

    // The transcript keeps what the user wrote, without the reminder.
    let stored = engine.messages(&session.id).await.unwrap();
    let user_texts: Vec<&str> = stored[0]
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(user_texts, ["plan the change"]);

    // The host switches the session to the build agent (as `agent chat`'s
    // mode switch does).
    let mut switched = engine.store().session(&session.id).await.unwrap();
    switched.agent = "build".to_string();
    engine.store().put_session(&switched).await.unwrap();
    engine.prompt(&session.id, "go ahead").await.unwrap();
    let build = last_user_texts(&model.requests()[1]);
    assert_eq!(build[0], "go ahead");
    assert!(build[1].contains("you are now in build mode"), "{build:?}");
    // The earlier plan request's user message is history now: no reminder.
    let all: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|p| match p {
            ContentPart::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !all.iter().any(|t| t.contains("Plan mode is on")),
        "{all:?}"
    );

    let fresh = engine
        .create_session(Session::new("build", &root))
        .await
        .unwrap();
    engine.prompt(&fresh.id, "hello").await.unwrap();
    assert_eq!(last_user_texts(&model.requests()[2]), ["hello"]);
}
