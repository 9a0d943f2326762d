//! The task tool: sub-agent sessions under ScriptedModel and the paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use super::common::*;
use agentgate_core::permission::{PermissionConfig, task_child_permission};
use agentgate_core::testing::semantics::{NO_DESCRIPTION, completed_output};
use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentEnvironment, Agents, DeltaField, Engine, Event, FinishReason, LoopSettings, Part, Session,
    StopReason, TaskSettings, ToolState, transcript::ABORTED_ERROR,
};
use agentgate_permission::Reply;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The built-in agents with this user permission config (JSON).
fn agents(user: &str) -> Agents {
    let env = AgentEnvironment::new("/data/app", "/tmp/app", "/work/proj");
    let user: PermissionConfig = serde_json::from_str(user).unwrap();
    Agents::builtin(&env, &user)
}

/// An engine with the built-in agents, the task tool, `bash` and `slow`,
/// and a root session of `agent`.
async fn engine(
    model: Arc<ScriptedModel>,
    agents: Agents,
    config: LoopSettings,
    agent: &str,
) -> (Engine, Session) {
    let engine = Engine::builder(model)
        .agents(agents)
        .task_tool(TaskSettings::default())
        .tool(Bash::default())
        .tool(Slow {
            cooperative: true,
            ..Default::default()
        })
        .config(config)
        .build();
    let session = engine
        .create_session(Session::new(agent, std::env::temp_dir()))
        .await
        .unwrap();
    (engine, session)
}

fn task(id: &str, agent: &str, prompt: &str) -> Script {
    Script::calls([(
        id,
        "task",
        json!({"description": "look around", "prompt": prompt, "subagent_type": agent}),
    )])
}

async fn children(engine: &Engine, parent: &str) -> Vec<Session> {
    engine
        .store()
        .sessions()
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.parent_id.as_deref() == Some(parent))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn parent_delegates_to_explore_and_gets_its_last_text_back() {
    let model = model([
        task("t1", "explore", "find the config"),
        // The child: a bash call (asks: the user config says so), then two
        // text parts; only the last one is the result.
        Script::calls([("b1", "bash", json!({"command": "ls"}))]),
        Script::new()
            .text("Let me summarise.")
            .text("config is in /etc/app")
            .finish(FinishReason::Stop),
        Script::reply("The config is in /etc/app."),
    ]);
    let agents = agents(r#"{"bash": "ask"}"#);
    let explore = agents.get("explore").unwrap().clone();
    let (engine, session) = engine(model.clone(), agents, LoopSettings::default(), "build").await;
    let seen = approver(engine.permissions(), |_| Reply::Once);
    let mut events = engine.subscribe();

    let result = engine
        .prompt(&session.id, "where is the config?")
        .await
        .unwrap();

    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    assert_eq!(result.text(), "The config is in /etc/app.");

    // The child session: parent, title, derived permission, agent.
    let kids = children(&engine, &session.id).await;
    assert_eq!(kids.len(), 1);
    let child = &kids[0];
    assert_eq!(child.agent, "explore");
    assert_eq!(child.title, "look around (@explore subagent)");
    assert_eq!(
        child.permission,
        task_child_permission(&session.permission, &explore.permission, &[] as &[&str])
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    // The parent sees the task tool, describing the sub-agents build may call.
    let task_spec = requests[0].tools.iter().find(|t| t.name == "task").unwrap();
    assert!(task_spec.description.contains("\n- explore: Fast agent"));
    assert!(
        task_spec
            .description
            .contains("\n- general: General-purpose")
    );
    assert!(!task_spec.description.contains("- build:"));
    assert!(!task_spec.description.contains(NO_DESCRIPTION));
    // The child got only the prompt, and no task tool (explore may not delegate).
    assert_eq!(
        requests[1]
            .messages
            .iter()
            .map(|m| (**m).clone())
            .collect::<Vec<_>>(),
        [agentgate_core::ModelMessage::user("find the config")]
    );
    let child_tools: Vec<_> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(child_tools, ["bash"]);
    // The parent's next request holds the exact result format.
    assert_eq!(
        results(&requests[3]),
        [(
            "t1".into(),
            completed_output(&child.id, "config is in /etc/app"),
            false
        )]
    );
    assert_eq!(
        completed_output("ses_1", "x"),
        "<task id=\"ses_1\" state=\"completed\">\n<task_result>\nx\n</task_result>\n</task>"
    );

    // The tool part's metadata links both sessions.
    let history = engine.messages(&session.id).await.unwrap();
    let call = history[1].tool_parts().next().unwrap();
    match &call.state {
        ToolState::Completed { metadata, .. } => assert_eq!(
            metadata,
            &json!({"parentSessionId": session.id, "sessionId": child.id, "model": "scripted/scripted"})
        ),
        other => panic!("expected a completed call, got {other:?}"),
    }
    assert_every_call_has_result(&history);
    assert_every_call_has_result(&engine.messages(&child.id).await.unwrap());

    // The child's bash ask went through the same gate, with its session id.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "build allows task: only bash asked");
    assert_eq!(seen[0].permission, "bash");
    assert_eq!(seen[0].session_id, child.id);

    // The host saw the child's events, tagged with the child's session id.
    let mut child_deltas = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::PartDelta {
            session_id,
            delta,
            field: DeltaField::Text,
            ..
        } = event
            && session_id == child.id
        {
            child_deltas.push(delta);
        }
    }
    assert_eq!(child_deltas, ["Let me summarise.", "config is in /etc/app"]);
}

#[tokio::test(start_paused = true)]
async fn nested_task_is_refused_by_default() {
    let model = model([
        task("t1", "general", "delegate further"),
        task("t2", "explore", "deeper"),
        Script::reply("could not nest"),
        Script::reply("ok"),
    ]);
    // Any `task` rule in the sub-agent's own rules lifts the default task deny.
    let (engine, session) = engine(
        model.clone(),
        agents(r#"{"task": "allow"}"#),
        LoopSettings::default(),
        "build",
    )
    .await;
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(result.text(), "ok");
    let requests = model.requests();
    assert_eq!(
        results(&requests[2]),
        [(
            "t2".into(),
            "Subagent depth limit reached (1). Increase \"subagent_depth\" to allow nested subagents."
                .into(),
            true
        )]
    );
    let kids = children(&engine, &session.id).await;
    assert_eq!(kids.len(), 1);
    assert!(children(&engine, &kids[0].id).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn nested_task_runs_with_subagent_depth_two() {
    let model = model([
        task("t1", "general", "delegate further"),
        task("t2", "explore", "deeper"),
        Script::reply("deep answer"),
        Script::reply("child relays the deep answer"),
        Script::reply("ok"),
    ]);
    let mut config = LoopSettings::default();
    config.subagent_depth = 2;
    let (engine, session) = engine(
        model.clone(),
        agents(r#"{"task": "allow"}"#),
        config,
        "build",
    )
    .await;
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(result.text(), "ok");
    let kids = children(&engine, &session.id).await;
    let grandkids = children(&engine, &kids[0].id).await;
    assert_eq!(grandkids.len(), 1);
    assert_eq!(grandkids[0].agent, "explore");
    let requests = model.requests();
    assert_eq!(
        results(&requests[3]),
        [(
            "t2".into(),
            completed_output(&grandkids[0].id, "deep answer"),
            false
        )]
    );
    assert_eq!(
        results(&requests[4]),
        [(
            "t1".into(),
            completed_output(&kids[0].id, "child relays the deep answer"),
            false
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn plan_denying_general_goes_back_to_the_model() {
    let model = model([
        task("t1", "general", "edit things"),
        Script::reply("I will do it myself."),
    ]);
    let (engine, session) =
        engine(model.clone(), agents("{}"), LoopSettings::default(), "plan").await;
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    let requests = model.requests();
    let description = &requests[0]
        .tools
        .iter()
        .find(|t| t.name == "task")
        .unwrap()
        .description;
    assert!(description.contains("- explore:"));
    assert!(
        !description.contains("- general:"),
        "plan may not call general"
    );
    let (_, output, is_error) = &results(&requests[1])[0];
    assert!(is_error);
    assert!(
        output.starts_with("The user has specified a rule which prevents you"),
        "{output}"
    );
    assert!(
        children(&engine, &session.id).await.is_empty(),
        "no child session"
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_agent_type_is_an_error_for_the_model() {
    let model = model([task("t1", "wizard", "magic"), Script::reply("ok")]);
    let (engine, session) = engine(
        model.clone(),
        agents("{}"),
        LoopSettings::default(),
        "build",
    )
    .await;
    engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(
        results(&model.requests()[1]),
        [(
            "t1".into(),
            "Unknown agent type: wizard is not a valid agent type".into(),
            true
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn task_id_resumes_the_child_and_refuses_a_stranger() {
    let model = model([
        task("t1", "explore", "first question"),
        Script::reply("first answer"),
        Script::reply("noted"),
    ]);
    let (engine, session) = engine(
        model.clone(),
        agents("{}"),
        LoopSettings::default(),
        "build",
    )
    .await;
    engine.prompt(&session.id, "go").await.unwrap();
    let child = children(&engine, &session.id).await.remove(0);

    // Resume: the child sees its own history, the same session answers.
    let resume = |id: &str, task_id: &str, prompt: &str| {
        Script::calls([(
            id,
            "task",
            json!({"description": "again", "prompt": prompt, "subagent_type": "explore", "task_id": task_id}),
        )])
    };
    model.push(resume("t2", &child.id, "second question"));
    model.push(Script::reply("second answer"));
    model.push(Script::reply("noted again"));
    engine.prompt(&session.id, "more").await.unwrap();

    let requests = model.requests();
    let child_request = &requests[4];
    assert_eq!(
        child_request
            .messages
            .iter()
            .map(|m| (**m).clone())
            .collect::<Vec<_>>(),
        [
            agentgate_core::ModelMessage::user("first question"),
            agentgate_core::ModelMessage {
                role: agentgate_core::ModelRole::Assistant,
                content: vec![agentgate_core::ContentPart::Text {
                    text: "first answer".into(),
                    provider_metadata: None
                }]
            },
            agentgate_core::ModelMessage::user("second question"),
        ]
    );
    assert_eq!(
        results(&requests[5]).last().unwrap(),
        &(
            "t2".into(),
            completed_output(&child.id, "second answer"),
            false
        )
    );
    assert_eq!(
        children(&engine, &session.id).await.len(),
        1,
        "no new child"
    );
    // The same child session, its rules and ceilings unchanged (only its
    // `time.updated` moved with the new messages).
    let mut stored = engine.store().session(&child.id).await.unwrap();
    assert!(stored.time.updated >= child.time.updated);
    stored.time = child.time;
    assert_eq!(stored, child, "resumed child keeps its permission");

    // A task_id that is not a child of the caller (here: the caller itself).
    model.push(resume("t3", &session.id, "hijack"));
    model.push(Script::reply("fine"));
    engine.prompt(&session.id, "again").await.unwrap();
    let (_, output, is_error) = results(&model.requests()[7]).pop().unwrap();
    assert!(is_error);
    assert_eq!(
        output,
        format!(
            "task_id {} is not a task started from this session; omit task_id to start a new task",
            session.id
        )
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_parent_cancels_the_child_and_closes_both_transcripts() {
    let model = model([
        task("t1", "general", "work slowly"),
        Script::calls([("s1", "slow", json!({}))]),
    ]);
    let (engine, session) = engine(
        model.clone(),
        agents("{}"),
        LoopSettings::default(),
        "build",
    )
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });

    let start = Instant::now();
    let result = engine
        .prompt_with(&session.id, vec![Part::text("go")], cancel)
        .await
        .unwrap();

    assert_eq!(result.stop, StopReason::Cancelled);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "the child stopped at once"
    );
    assert_eq!(model.remaining(), 0);

    let child = children(&engine, &session.id).await.remove(0);
    let child_history = engine.messages(&child.id).await.unwrap();
    assert_every_call_has_result(&child_history);
    let slow = child_history[1].tool_parts().next().unwrap();
    assert!(slow.state.is_finished());
    assert!(matches!(&slow.state, ToolState::Error { .. }));

    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let call = history[1].tool_parts().next().unwrap();
    match &call.state {
        ToolState::Error {
            error, metadata, ..
        } => {
            assert_eq!(error, ABORTED_ERROR);
            assert_eq!(metadata["sessionId"], json!(child.id), "live metadata kept");
        }
        other => panic!("expected an aborted call, got {other:?}"),
    }

    // Both sessions are free again.
    model.push(Script::reply("back"));
    assert_eq!(engine.prompt(&child.id, "hi").await.unwrap().text(), "back");
}

/// §10.2 step 8 with §11.2: a doom loop inside a sub-agent that a rule
/// denies stops the child, and the parent goes on with the child's result
/// and the denial — it is not a user's rejection.
#[tokio::test(start_paused = true)]
async fn a_doom_loop_denied_in_a_child_is_reported_and_the_parent_goes_on() {
    let same = || Script::calls([("b", "bash", json!({"command": "ls"}))]);
    let model = model([
        task("t1", "explore", "list it"),
        // The child repeats one call: the third is a doom loop.
        Script::new()
            .text("Listing.")
            .tool_call("b1", "bash", json!({"command": "ls"}))
            .finish(FinishReason::ToolCalls),
        same(),
        same(),
        // The parent continues with the child's result.
        Script::reply("The child got stuck; here is what it found."),
    ]);
    let agents = agents(r#"{"doom_loop": "deny"}"#);
    let (engine, session) = engine(model.clone(), agents, LoopSettings::default(), "build").await;
    approver(engine.permissions(), |_| Reply::Once);

    let result = engine.prompt(&session.id, "list the files").await.unwrap();

    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    let child = &children(&engine, &session.id).await[0];
    let child_messages = engine.messages(&child.id).await.unwrap();
    let doom = child_messages
        .iter()
        .flat_map(|m| m.tool_parts())
        .last()
        .unwrap();
    match &doom.state {
        ToolState::Error { error, .. } => assert!(error.contains("doom_loop"), "{error}"),
        other => panic!("the third call is denied, got {other:?}"),
    }
    let requests = model.requests();
    let (_, output, is_error) = results(&requests[4])
        .into_iter()
        .find(|(id, _, _)| id == "t1")
        .unwrap();
    assert!(!is_error, "{output}");
    assert!(output.contains("state=\"completed\""), "{output}");
    assert!(output.contains("The subagent was stopped"), "{output}");
}

/// `prompt_stream` carries the sub-agent's events too, tagged with the
/// child session, before the parent's result.
#[tokio::test(start_paused = true)]
async fn prompt_stream_includes_the_child_session_events() {
    use agentgate_core::{StreamExt, TurnEvent};
    let model = model([
        task("t1", "explore", "look"),
        Script::reply("child says hi"),
        Script::reply("parent done"),
    ]);
    let (engine, session) = engine(
        model.clone(),
        agents(r#"{"task": "allow"}"#),
        LoopSettings::default(),
        "build",
    )
    .await;
    let items: Vec<TurnEvent> = engine
        .prompt_stream(
            &session.id,
            vec![Part::text("go")],
            CancellationToken::new(),
        )
        .collect()
        .await;
    let child = &children(&engine, &session.id).await[0];
    let child_text: String = items
        .iter()
        .filter_map(|item| match item {
            TurnEvent::Event(Event::PartDelta {
                session_id, delta, ..
            }) if session_id == &child.id => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(child_text, "child says hi");
    // The child is announced before its first event: that is how the
    // stream knows it without reading the store.
    let position = |wanted: &dyn Fn(&Event) -> bool| {
        items
            .iter()
            .position(|item| matches!(item, TurnEvent::Event(event) if wanted(event)))
    };
    let announced = position(&|event| {
        matches!(event, Event::ChildStarted { session_id, parent_id }
            if session_id == &child.id && parent_id == &session.id)
    })
    .expect("the child is announced");
    let first = position(&|event| {
        event.session_id() == child.id && !matches!(event, Event::ChildStarted { .. })
    })
    .expect("the child's events are streamed");
    assert!(
        announced < first,
        "announced at {announced}, first event at {first}"
    );
    match items.last() {
        Some(TurnEvent::Finished(Ok(turn))) => assert_eq!(turn.text(), "parent done"),
        other => panic!("the result comes last, got {other:?}"),
    }
}

/// The built-in agents with a user config that allows bash, and `build`
/// carrying `agent_bash` as its own (agent-level) bash rules.
fn agents_with_build_bash(agent_bash: serde_json::Value) -> Agents {
    let env = AgentEnvironment::new("/data/app", "/tmp/app", "/work/proj");
    let user: PermissionConfig = serde_json::from_str(r#"{"bash": "allow"}"#).unwrap();
    let mut config = indexmap::IndexMap::new();
    config.insert(
        "build".to_string(),
        agentgate_core::AgentConfig::from_value(
            &json!({"permission": {"bash": agent_bash}}),
            "agent.build",
        )
        .unwrap(),
    );
    Agents::from_config(&env, &user, &config, None)
}

/// A deny in the parent *agent's* rules (not only the
/// session's) binds its sub-agents, although the child agent's own rules
/// allow the command (opencode passes only session denies down).
#[tokio::test(start_paused = true)]
async fn a_parent_agents_deny_binds_its_sub_agent() {
    let model = model([
        task("t1", "general", "clean up"),
        // The child tries the command its parent may not run, then answers.
        Script::calls([("b1", "bash", json!({"command": "rm -rf build"}))]),
        Script::reply("could not remove it"),
        Script::reply("The sub-agent could not remove build."),
    ]);
    let agents = agents_with_build_bash(json!({"*": "allow", "rm *": "deny"}));
    let (engine, session) = engine(model.clone(), agents, LoopSettings::default(), "build").await;
    let asked = approver(engine.permissions(), |_| Reply::Once);
    let result = engine.prompt(&session.id, "clean up").await.unwrap();
    assert_eq!(result.text(), "The sub-agent could not remove build.");

    let kids = children(&engine, &session.id).await;
    assert_eq!(kids.len(), 1);
    assert_eq!(
        kids[0].ceilings.len(),
        1,
        "the child carries its parent's rules"
    );
    // No ask reached the approver: the parent's deny decided.
    assert!(asked.lock().unwrap().is_empty());
    // The child's bash call ended with the deny error the model is told.
    let child_messages = engine.messages(&kids[0].id).await.unwrap();
    let outcome = child_messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .find_map(|p| match p {
            Part::Tool(tool) if tool.tool == "bash" => Some(tool.state.clone()),
            _ => None,
        })
        .unwrap();
    match outcome {
        ToolState::Error { error, .. } => {
            assert!(error.contains("rule"), "a denial, got: {error}")
        }
        other => panic!("the child's rm ran or was not denied: {other:?}"),
    }
}

/// An `ask` in the parent agent's rules makes the child ask too, where the
/// child's own rules allow; rejected, the command does not run.
#[tokio::test(start_paused = true)]
async fn a_parent_agents_ask_makes_its_sub_agent_ask() {
    let model = model([
        task("t1", "general", "push it"),
        Script::calls([("b1", "bash", json!({"command": "git push"}))]),
        Script::reply("push was rejected"),
        Script::reply("The push was rejected."),
    ]);
    let agents = agents_with_build_bash(json!({"*": "allow", "git push*": "ask"}));
    let (engine, session) = engine(model.clone(), agents, LoopSettings::default(), "build").await;
    let asked = approver(engine.permissions(), |_| Reply::Reject { feedback: None });

    let _ = engine.prompt(&session.id, "push it").await;

    let kids = children(&engine, &session.id).await;
    assert_eq!(kids.len(), 1);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "the child's git push was asked: {asked:?}");
    assert_eq!(asked[0].session_id, kids[0].id);
    assert_eq!(asked[0].patterns, vec!["git push".to_string()]);
}
