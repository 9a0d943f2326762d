//! The step loop under ScriptedModel and tokio's paused clock.

use std::time::Duration;

use super::common::*;
use agentgate_core::testing::Script;
use agentgate_core::{
    Event, FinishReason, LoopSettings, Part, StopReason, ToolChoice, ToolState,
    transcript::ABORTED_ERROR,
};
use agentgate_permission::{PermissionError, PermissionGate, Reply};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn multi_step_session_runs_tool_calls_in_parallel() {
    let model = model([
        Script::new()
            .text("Reading both.")
            .tool_call("c1", "echo", json!({"text": "one"}))
            .tool_call("c2", "echo", json!({"text": "two"}))
            .finish(FinishReason::ToolCalls),
        Script::calls([("c3", "echo", json!({"text": "three"}))]),
        Script::reply("All done."),
    ]);
    let echo = Echo {
        delay: Duration::from_secs(5),
        ..Default::default()
    };
    let (engine, session) = setup(model.clone(), |b| b.tool(echo.clone())).await;
    let mut events = engine.subscribe();

    let start = Instant::now();
    let result = engine.prompt(&session.id, "go").await.unwrap();

    // Two calls of 5 s each ran concurrently in step 1, one more in step 2.
    assert_eq!(start.elapsed(), Duration::from_secs(10));
    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    assert_eq!(result.steps, 3);
    assert_eq!(result.text(), "All done.");
    assert_eq!(*echo.calls.lock().unwrap(), ["one", "two", "three"]);

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].tools.len(), 1);
    assert_eq!(requests[0].tools[0].name, "echo");
    assert_eq!(
        requests[1].messages.len(),
        3,
        "user, assistant with two calls, tool results"
    );
    assert_eq!(
        results(&requests[1]),
        [
            ("c1".into(), "one".into(), false),
            ("c2".into(), "two".into(), false)
        ]
    );
    assert_eq!(results(&requests[2]).len(), 3);

    let history = engine.messages(&session.id).await.unwrap();
    assert_eq!(history.len(), 4, "user + three assistant messages");
    assert_every_call_has_result(&history);
    let first = &history[1];
    assert!(matches!(first.parts[0], Part::StepStart { .. }));
    assert!(matches!(
        first.parts.last(),
        Some(Part::StepFinish {
            reason: FinishReason::ToolCalls,
            ..
        })
    ));
    assert_eq!(
        first
            .tool_parts()
            .filter(|t| matches!(t.state, ToolState::Completed { .. }))
            .count(),
        2
    );

    // The events mirror the session: busy, deltas, three step finishes, idle.
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        serde_json::to_string(&event).unwrap();
        seen.push(event);
    }
    let steps = seen
        .iter()
        .filter(|e| matches!(e, Event::StepFinished { .. }))
        .count();
    assert_eq!(steps, 3);
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::PartDelta { delta, .. } if delta == "All done."))
    );
    assert!(matches!(
        seen.first(),
        Some(Event::SessionStatus {
            status: agentgate_core::SessionStatus::Busy,
            ..
        })
    ));
    assert!(matches!(
        seen.last(),
        Some(Event::SessionStatus {
            status: agentgate_core::SessionStatus::Idle,
            ..
        })
    ));
}

#[tokio::test(start_paused = true)]
async fn retry_waits_exactly_what_retry_after_says() {
    let model = model([Script::rate_limited("7"), Script::reply("hello")]);
    let (engine, session) = setup(model.clone(), |b| b).await;
    let mut events = engine.subscribe();

    let start = Instant::now();
    let result = engine.prompt(&session.id, "hi").await.unwrap();

    assert_eq!(start.elapsed(), Duration::from_secs(7));
    assert_eq!(result.text(), "hello");
    assert_eq!(model.requests().len(), 2);
    let mut scheduled = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::RetryScheduled {
            attempt,
            delay_ms,
            message,
            ..
        } = event
        {
            scheduled.push((attempt, delay_ms, message));
        }
    }
    assert_eq!(scheduled, [(1, 7000, "Rate limit reached".to_string())]);
}

#[tokio::test(start_paused = true)]
async fn attempt_limit_gives_up() {
    let model = model([
        Script::rate_limited("1"),
        Script::rate_limited("1"),
        Script::rate_limited("1"),
        Script::reply("never"),
    ]);
    let mut config = LoopSettings::default();
    config.retry = agentgate_core::RetryPolicy {
        max_retries: Some(2),
        ..agentgate_core::RetryPolicy::default()
    };
    let (engine, session) = setup(model.clone(), |b| b.config(config)).await;
    let result = engine.prompt(&session.id, "hi").await.unwrap();
    assert!(matches!(result.stop, StopReason::Error { .. }));
    assert_eq!(model.requests().len(), 3);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test(start_paused = true)]
async fn stream_cut_mid_tool_call_is_retried_without_running_the_partial_call() {
    let model = model([
        Script::new()
            .partial_tool_call("cut1", "echo", r#"{"text": "hal"#)
            .cut(),
        Script::calls([("c2", "echo", json!({"text": "whole"}))]),
        Script::reply("ok"),
    ]);
    let echo = Echo::default();
    let (engine, session) = setup(model.clone(), |b| b.tool(echo.clone())).await;

    let start = Instant::now();
    let result = engine.prompt(&session.id, "go").await.unwrap();

    // A cut stream has no headers: the capped schedule's first step, 2 s.
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    assert_eq!(*echo.calls.lock().unwrap(), ["whole"]);
    let history = engine.messages(&session.id).await.unwrap();
    assert!(
        history
            .iter()
            .flat_map(|m| m.tool_parts())
            .all(|t| t.call_id != "cut1"),
        "the partial call was discarded with its attempt"
    );
    assert_every_call_has_result(&history);
}

#[tokio::test(start_paused = true)]
async fn failure_after_output_was_handed_out_is_not_retried() {
    let model = model([
        Script::new().text("Half an ans").cut(),
        Script::reply("never used"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b).await;
    let result = engine.prompt(&session.id, "go").await.unwrap();
    let StopReason::Error { error } = &result.stop else {
        panic!("expected an error, got {:?}", result.stop);
    };
    assert!(
        error.message.contains("stream interrupted"),
        "{}",
        error.message
    );
    assert_eq!(model.requests().len(), 1);
    assert_eq!(result.text(), "Half an ans");
}

#[tokio::test(start_paused = true)]
async fn corrected_permission_continues_and_rejected_stops() {
    let model = model([
        Script::calls([("c1", "bash", json!({"command": "ls"}))]),
        Script::calls([("c2", "bash", json!({"command": "rm -rf /"}))]),
        Script::reply("unreachable"),
    ]);
    let bash = Bash::default();
    let (engine, session) = setup(model.clone(), |b| b.tool(bash.clone())).await;
    let seen = approver(engine.permissions(), |request| {
        if request.patterns == ["ls"] {
            Reply::correct("use dir instead")
        } else {
            Reply::reject()
        }
    });

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, StopReason::Rejected);
    assert_eq!(result.steps, 2);
    assert!(bash.ran.lock().unwrap().is_empty());
    assert_eq!(model.remaining(), 1, "the loop stopped after the rejection");
    let requests = model.requests();
    let corrected = PermissionError::Corrected {
        feedback: "use dir instead".into(),
    }
    .to_string();
    assert_eq!(results(&requests[1]), [("c1".into(), corrected, true)]);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].tool.as_ref().unwrap().call_id, "c1");
    assert_eq!(seen[0].session_id, session.id);

    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let last = history.last().unwrap().tool_parts().next().unwrap();
    assert!(
        matches!(&last.state, ToolState::Error { error, .. } if *error == PermissionError::Rejected.to_string())
    );
}

#[tokio::test(start_paused = true)]
async fn denied_permission_goes_back_to_the_model() {
    let model = model([
        Script::calls([("c1", "bash", json!({"command": "git push"}))]),
        Script::reply("fine"),
    ]);
    let (engine, mut session) = setup(model.clone(), |b| b.tool(Bash::default())).await;
    session.permission = rules(r#"[{"permission":"bash","pattern":"git push*","action":"deny"}]"#);
    engine.store().put_session(&session).await.unwrap();

    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    let (_, output, is_error) = &results(&model.requests()[1])[0];
    assert!(is_error);
    assert!(
        output.starts_with("The user has specified a rule which prevents you"),
        "{output}"
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_during_a_tool_closes_the_call_and_the_session_can_go_on() {
    let model = model([
        Script::calls([
            ("c1", "slow", json!({})),
            ("c2", "echo", json!({"text": "quick"})),
        ]),
        Script::reply("back again"),
    ]);
    let slow = Slow::default();
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(slow.clone()).tool(Echo::default())
    })
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
    // The tool ignored its token: it was abandoned after the 250 ms grace.
    assert_eq!(start.elapsed(), Duration::from_millis(1250));
    assert_eq!(*slow.started.lock().unwrap(), 1);
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let calls: Vec<_> = history[1].tool_parts().collect();
    match &calls[0].state {
        ToolState::Error {
            error, metadata, ..
        } => {
            assert_eq!(error, ABORTED_ERROR);
            assert_eq!(metadata["interrupted"], json!(true));
            assert_eq!(metadata["output"], json!("partial output"), "metadata kept");
        }
        other => panic!("expected an aborted call, got {other:?}"),
    }
    assert!(matches!(calls[1].state, ToolState::Completed { .. }));

    // Prompt again right away: the interrupted call's partial output goes back (§11.3).
    let again = engine.prompt(&session.id, "continue").await.unwrap();
    assert_eq!(again.text(), "back again");
    let request = model.requests().pop().unwrap();
    assert_eq!(
        results(&request),
        [
            ("c1".into(), "partial output".into(), false),
            ("c2".into(), "quick".into(), false)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_during_streaming_closes_every_open_call() {
    let model = model([
        Script::new()
            .text("Working")
            .tool_call("c1", "echo", json!({"text": "never"}))
            .partial_tool_call("c2", "echo", r#"{"te"#)
            .hang(),
        Script::reply("resumed"),
    ]);
    let echo = Echo::default();
    let (engine, session) = setup(model.clone(), |b| b.tool(echo.clone())).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        trigger.cancel();
    });

    let result = engine
        .prompt_with(&session.id, vec![Part::text("go")], cancel)
        .await
        .unwrap();

    assert_eq!(result.stop, StopReason::Cancelled);
    assert!(echo.calls.lock().unwrap().is_empty(), "no call ran");
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let assistant = &history[1];
    assert_eq!(assistant.text(), "Working");
    assert_eq!(assistant.error.as_ref().unwrap().name, "aborted");
    assert_eq!(assistant.tool_parts().count(), 2);
    assert!(assistant.tool_parts().all(|t| t.state.is_interrupted()));

    let again = engine.prompt(&session.id, "again").await.unwrap();
    assert_eq!(again.text(), "resumed");
    let request = model.requests().pop().unwrap();
    assert_eq!(
        results(&request),
        [
            ("c1".into(), ABORTED_ERROR.into(), true),
            ("c2".into(), ABORTED_ERROR.into(), true)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn doom_loop_asks_on_the_third_identical_call_across_steps() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "x", "n": 1}))]),
        Script::new()
            .text("Let me try again.")
            .tool_call("c2", "echo", json!({"text": "x", "n": 1}))
            .finish(FinishReason::ToolCalls),
        // Same input with the keys in another order: still identical.
        Script::calls([("c3", "echo", json!({"n": 1, "text": "x"}))]),
        Script::reply("stopping"),
    ]);
    let echo = Echo::default();
    let (engine, mut session) = setup(model.clone(), |b| b.tool(echo.clone())).await;
    // Session rules do not count for the doom-loop ask: only the agent's.
    session.permission = rules(r#"[{"permission":"doom_loop","pattern":"*","action":"allow"}]"#);
    engine.store().put_session(&session).await.unwrap();
    let seen = approver(engine.permissions(), |_| Reply::Once);

    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(
        result.stop,
        StopReason::Done {
            finish: FinishReason::Stop
        }
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "asked once, on the third call");
    let request = &seen[0];
    assert_eq!(request.permission, "doom_loop");
    assert_eq!(request.patterns, ["echo"]);
    assert_eq!(request.always, ["echo"]);
    assert_eq!(
        request.metadata,
        json!({"tool": "echo", "input": {"n": 1, "text": "x"}})
    );
    assert_eq!(request.tool.as_ref().unwrap().call_id, "c3");
    assert_eq!(
        echo.calls.lock().unwrap().len(),
        3,
        "approved once: the call ran"
    );
}

#[tokio::test(start_paused = true)]
async fn rejected_doom_loop_stops_the_turn() {
    let model = model([
        Script::calls([
            ("c1", "echo", json!({"text": "x"})),
            ("c2", "echo", json!({"text": "x"})),
            ("c3", "echo", json!({"text": "x"})),
        ]),
        Script::reply("unreachable"),
    ]);
    let echo = Echo::default();
    let (engine, session) = setup(model.clone(), |b| b.tool(echo.clone())).await;
    approver(engine.permissions(), |_| Reply::reject());
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(result.stop, StopReason::Rejected);
    assert_eq!(echo.calls.lock().unwrap().len(), 2);
    assert_every_call_has_result(&engine.messages(&session.id).await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn step_limit_withholds_tools_and_asks_for_a_wrap_up() {
    let model = model([
        Script::calls([("c1", "echo", json!({"text": "a"}))]),
        Script::calls([("c2", "echo", json!({"text": "b"}))]),
        Script::reply("unreachable"),
    ]);
    let echo = Echo::default();
    let mut config = LoopSettings::default();
    config.max_steps = Some(2);
    let (engine, session) = setup(model.clone(), |b| b.tool(echo.clone()).config(config)).await;
    let result = engine.prompt(&session.id, "go").await.unwrap();

    assert_eq!(result.stop, StopReason::StepLimit);
    assert_eq!(
        *echo.calls.lock().unwrap(),
        ["a"],
        "the call on the last step was refused"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tool_choice, ToolChoice::Auto);
    assert_eq!(requests[1].tool_choice, ToolChoice::None);
    assert_eq!(
        &**requests[1].messages.last().unwrap(),
        &agentgate_core::ModelMessage::user(agentgate_core::testing::semantics::MAX_STEPS_PROMPT)
    );
    assert_every_call_has_result(&engine.messages(&session.id).await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn invalid_arguments_go_back_to_the_model() {
    let model = model([
        Script::calls([("c1", "echo", json!({"txt": "typo"}))]),
        Script::reply("fixed"),
    ]);
    let (engine, session) = setup(model.clone(), |b| b.tool(Echo::default())).await;
    let result = engine.prompt(&session.id, "go").await.unwrap();
    assert_eq!(result.text(), "fixed");
    assert_eq!(
        results(&model.requests()[1]),
        [(
            "c1".into(),
            "The echo tool was called with invalid arguments: missing field `text`.\nPlease rewrite the input so it satisfies the expected schema.".into(),
            true
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn a_busy_session_refuses_a_second_prompt() {
    let model = model([Script::new()
        .delay(Duration::from_secs(5))
        .text("slow")
        .finish(FinishReason::Stop)]);
    let (engine, session) = setup(model, |b| b).await;
    let first = {
        let engine = engine.clone();
        let id = session.id.clone();
        tokio::spawn(async move { engine.prompt(&id, "one").await })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = engine.prompt(&session.id, "two").await;
    assert!(matches!(second, Err(agentgate_core::PromptError::Busy(_))));
    assert_eq!(first.await.unwrap().unwrap().text(), "slow");
}

/// A tool waiting for approval when the prompt is cancelled was
/// interrupted, not rejected by the user (§6.2, §11.3): the model must not
/// be told the user refused.
#[tokio::test(start_paused = true)]
async fn cancellation_while_a_tool_awaits_approval_is_an_interruption() {
    let model = model([
        Script::calls([("c1", "bash", json!({"command": "rm -rf build"}))]),
        Script::reply("ok"),
    ]);
    let bash = Bash::default();
    // A gate without an approver: the ask waits (a host would reply).
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(bash.clone()).permissions(PermissionGate::new())
    })
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });

    let result = engine
        .prompt_with(&session.id, vec![Part::text("clean")], cancel)
        .await
        .unwrap();

    assert_eq!(result.stop, StopReason::Cancelled);
    assert!(bash.ran.lock().unwrap().is_empty(), "no side effect");
    assert!(engine.permissions().pending().is_empty(), "ask withdrawn");
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let call = history[1].tool_parts().next().unwrap();
    match &call.state {
        ToolState::Error {
            error, metadata, ..
        } => {
            assert_eq!(error, ABORTED_ERROR);
            assert_eq!(metadata["interrupted"], json!(true));
        }
        other => panic!("expected an aborted call, got {other:?}"),
    }
    engine.prompt(&session.id, "never mind").await.unwrap();
    let request = model.requests().pop().unwrap();
    let (_, output, is_error) = &results(&request)[0];
    assert!(is_error);
    assert_eq!(output, ABORTED_ERROR, "not the user-rejection text");
}

/// A tool that stops as soon as it sees its token keeps the interrupted
/// flag and its partial output, like one that ignores its token (§11.3).
#[tokio::test(start_paused = true)]
async fn cooperative_tool_cancelled_keeps_partial_output() {
    let model = model([
        Script::calls([("c1", "slow", json!({}))]),
        Script::reply("back"),
    ]);
    let slow = Slow {
        cooperative: true,
        ..Default::default()
    };
    let (engine, session) = setup(model.clone(), |b| b.tool(slow.clone())).await;
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
    assert_eq!(start.elapsed(), Duration::from_secs(1), "no grace needed");
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    match &history[1].tool_parts().next().unwrap().state {
        ToolState::Error {
            error, metadata, ..
        } => {
            assert_eq!(error, ABORTED_ERROR);
            assert_eq!(metadata["interrupted"], json!(true));
            assert_eq!(metadata["output"], json!("partial output"));
        }
        other => panic!("expected an aborted call, got {other:?}"),
    }
    engine.prompt(&session.id, "continue").await.unwrap();
    let request = model.requests().pop().unwrap();
    assert_eq!(
        results(&request),
        [("c1".into(), "partial output".into(), false)]
    );
}

/// A host without an approver follows the engine's own event stream: the
/// gate's requests arrive there, and replying lets the tool run.
#[tokio::test(start_paused = true)]
async fn host_answers_permission_requests_from_the_engine_event_stream() {
    let model = model([
        Script::calls([("c1", "bash", json!({"command": "make"}))]),
        Script::reply("built"),
    ]);
    let bash = Bash::default();
    // The host answers from the event stream: a gate without an approver.
    let (engine, session) = setup(model.clone(), |b| {
        b.tool(bash.clone()).permissions(PermissionGate::new())
    })
    .await;
    let mut events = engine.subscribe();
    let permissions = engine.permissions().clone();
    let host = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Ok(event) = events.recv().await {
            match event {
                Event::PermissionAsked { request } => {
                    seen.push(format!("asked {}", request.patterns.join(" ")));
                    permissions.reply(&request.id, Reply::Once).unwrap();
                }
                Event::PermissionReplied { reply, .. } => {
                    seen.push(format!("replied {reply:?}"));
                    return seen;
                }
                _ => {}
            }
        }
        seen
    });

    let result = engine.prompt(&session.id, "build it").await.unwrap();

    assert_eq!(result.text(), "built");
    assert_eq!(*bash.ran.lock().unwrap(), ["make"]);
    assert_eq!(host.await.unwrap(), ["asked make", "replied Once"]);
}

/// A tool's long output reaches the model cut to the limits, with a pointer
/// to a spill file that holds all of it (§7.1).
#[tokio::test(start_paused = true)]
async fn long_tool_output_is_truncated_with_the_full_text_kept() {
    let full: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    let model = model([
        Script::calls([("c1", "echo", json!({"text": full.clone()}))]),
        Script::reply("seen"),
    ]);
    let spill = agentgate_testing::scratch_dir("agentgate-core-truncation");
    let mut config = LoopSettings::default();
    config.truncator = agentgate_core::truncation::Truncator {
        spill_dir: spill.clone(),
        ..Default::default()
    };
    let (engine, session) = setup(model.clone(), |b| b.config(config).tool(Echo::default())).await;

    engine.prompt(&session.id, "print it").await.unwrap();

    let request = model.requests().pop().unwrap();
    let (_, output, is_error) = &results(&request)[0];
    assert!(!is_error);
    assert!(output.starts_with("line 1\nline 2\n"), "head kept");
    assert!(output.contains("line 2000\n"), "2000 lines kept");
    assert!(!output.contains("line 2001\n"), "the rest cut");
    assert!(
        output.contains("...1000 lines"),
        "{}",
        &output[output.len() - 300..]
    );
    let saved = std::fs::read_dir(&spill)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        output.contains(&saved.display().to_string()),
        "points to the file"
    );
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        full,
        "nothing lost"
    );
    std::fs::remove_dir_all(&spill).unwrap();
}
