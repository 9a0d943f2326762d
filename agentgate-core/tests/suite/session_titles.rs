//! Session titles from the hidden `title` agent, session times, the model
//! on each answer, and rename / fork / delete through the engine.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentSpec, Engine, LanguageModel, ModelError, ModelInfo, ModelRole, Role, Session,
    SessionStoreError, SessionTitles, StopReason,
};

fn scripted(provider: &str, id: &str, scripts: Vec<Script>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(scripts).with_info(ModelInfo::new(provider, id)))
}

async fn engine_with(
    main: Arc<ScriptedModel>,
    titles: SessionTitles,
    session: Session,
) -> (Engine, Session) {
    let engine = Engine::builder(main)
        .agent(AgentSpec::new("build"))
        .session_titles(titles)
        .build();
    let session = engine.create_session(session).await.unwrap();
    (engine, session)
}

#[tokio::test]
async fn the_title_agent_titles_a_new_session_after_its_first_message() {
    let main = scripted("test", "big", vec![Script::reply("4"), Script::reply("5")]);
    let small = scripted(
        "test",
        "small",
        vec![Script::reply(
            "<think>short</think>\n\n  Adding two numbers  \nignored",
        )],
    );
    let titles = SessionTitles::Model(small.clone() as Arc<dyn LanguageModel>);
    let (engine, session) = engine_with(main.clone(), titles, Session::new("build", "/w")).await;

    let turn = engine.run(&session.id, "what is 2+2?").await.unwrap();
    assert_eq!(turn.text(), "4");
    engine.wait_for_titles().await;
    let stored = engine.store().session(&session.id).await.unwrap();
    assert_eq!(stored.title, "Adding two numbers");

    // The title request: the title agent's prompt, no tools, the fixed
    // instruction then the first user message.
    let requests = small.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert!(request.tools.is_empty());
    assert!(
        request.system.concat().contains("title"),
        "{:?}",
        request.system
    );
    assert_eq!(request.temperature, Some(0.5));
    assert_eq!(request.messages.len(), 2);
    assert_eq!(request.messages[1].role, ModelRole::User);
    assert!(format!("{:?}", request.messages[1]).contains("what is 2+2?"));

    // A second message writes no second title.
    engine.run(&session.id, "and 2+3?").await.unwrap();
    engine.wait_for_titles().await;
    assert_eq!(small.requests().len(), 1);

    // The answers name the model that wrote them; times were kept.
    let messages = engine.messages(&session.id).await.unwrap();
    let answer = messages.iter().find(|m| m.role == Role::Assistant).unwrap();
    let model = answer.model.as_ref().unwrap();
    assert_eq!(
        (model.provider_id.as_str(), model.model_id.as_str()),
        ("test", "big")
    );
    assert!(
        messages
            .iter()
            .filter(|m| m.role == Role::User)
            .all(|m| m.model.is_none())
    );
    let stored = engine.store().session(&session.id).await.unwrap();
    assert!(stored.time.created > 0);
    assert!(stored.time.updated >= stored.time.created);
}

#[tokio::test]
async fn no_title_is_written_when_titles_are_off_or_the_session_has_one() {
    // Off (the builder's default): the only model call is the turn's.
    let main = scripted("test", "big", vec![Script::reply("4")]);
    let (engine, session) = engine_with(
        main.clone(),
        SessionTitles::Off,
        Session::new("build", "/w"),
    )
    .await;
    engine.run(&session.id, "what is 2+2?").await.unwrap();
    engine.wait_for_titles().await;
    assert_eq!(main.requests().len(), 1);
    assert_eq!(engine.store().session(&session.id).await.unwrap().title, "");

    // On, but the host gave the session a title (`agent run --title`).
    let small = scripted("test", "small", vec![Script::reply("Unwanted")]);
    let main = scripted("test", "big", vec![Script::reply("4")]);
    let (engine, session) = engine_with(
        main,
        SessionTitles::Model(small.clone()),
        Session::new("build", "/w").with_title("Mine"),
    )
    .await;
    engine.run(&session.id, "what is 2+2?").await.unwrap();
    engine.wait_for_titles().await;
    assert!(small.requests().is_empty());
    assert_eq!(
        engine.store().session(&session.id).await.unwrap().title,
        "Mine"
    );
}

#[tokio::test]
async fn a_failing_title_call_leaves_the_turn_successful_and_untitled() {
    let main = scripted("test", "big", vec![Script::reply("4")]);
    let small = scripted(
        "test",
        "small",
        vec![Script::fail(ModelError::other("title model is down"))],
    );
    let (engine, session) = engine_with(
        main,
        SessionTitles::Model(small.clone()),
        Session::new("build", "/w"),
    )
    .await;
    let turn = engine.prompt(&session.id, "what is 2+2?").await.unwrap();
    assert!(
        matches!(turn.stop, StopReason::Done { .. }),
        "{:?}",
        turn.stop
    );
    assert_eq!(turn.text(), "4");
    engine.wait_for_titles().await;
    assert_eq!(small.requests().len(), 1);
    assert_eq!(engine.store().session(&session.id).await.unwrap().title, "");
}

#[tokio::test]
async fn session_model_titles_use_the_prompts_model() {
    // The title call and the turn share the model: whichever comes first
    // gets the first script, so both scripts are the same answer.
    let main = scripted(
        "test",
        "big",
        vec![Script::reply("Greeting"), Script::reply("Greeting")],
    );
    let (engine, session) = engine_with(
        main.clone(),
        SessionTitles::SessionModel,
        Session::new("build", "/w"),
    )
    .await;
    engine.run(&session.id, "hello").await.unwrap();
    engine.wait_for_titles().await;
    assert_eq!(main.requests().len(), 2);
    assert_eq!(
        engine.store().session(&session.id).await.unwrap().title,
        "Greeting"
    );
}

#[tokio::test]
async fn sessions_are_renamed_forked_and_deleted_through_the_engine() {
    let main = scripted(
        "test",
        "big",
        vec![Script::reply("one"), Script::reply("two")],
    );
    let (engine, session) = engine_with(
        main,
        SessionTitles::Off,
        Session::new("build", "/w").with_title("Work"),
    )
    .await;
    engine.run(&session.id, "first").await.unwrap();
    engine.run(&session.id, "second").await.unwrap();
    let messages = engine.messages(&session.id).await.unwrap();
    assert_eq!(messages.len(), 4);

    let before = engine
        .store()
        .session(&session.id)
        .await
        .unwrap()
        .time
        .updated;
    let renamed = engine.rename_session(&session.id, "Better").await.unwrap();
    assert_eq!(renamed.title, "Better");
    assert!(renamed.time.updated >= before);
    assert_eq!(
        engine.store().session(&session.id).await.unwrap().title,
        "Better"
    );

    // Forked at the second user message: the first exchange only.
    let fork = engine
        .fork_session(&session.id, Some(&messages[2].id))
        .await
        .unwrap();
    assert_eq!(fork.title, "Better (fork #1)");
    let copied = engine.messages(&fork.id).await.unwrap();
    assert_eq!(copied.len(), 2);
    assert_eq!(copied[0].text(), "first");
    assert_eq!(copied[1].text(), "one");
    assert!(copied.iter().all(|m| messages.iter().all(|o| o.id != m.id)));
    let again = engine.fork_session(&fork.id, None).await.unwrap();
    assert_eq!(again.title, "Better (fork #2)");
    assert_eq!(engine.messages(&again.id).await.unwrap().len(), 2);
    assert!(matches!(
        engine.fork_session(&session.id, Some("msg_unknown")).await,
        Err(agentgate_core::PromptError::Store(
            SessionStoreError::MessageNotFound { .. }
        ))
    ));

    engine.delete_session(&session.id).await.unwrap();
    assert!(matches!(
        engine.store().session(&session.id).await,
        Err(SessionStoreError::NotFound(_))
    ));
    // The fork lives on.
    assert_eq!(engine.messages(&fork.id).await.unwrap().len(), 2);
}
