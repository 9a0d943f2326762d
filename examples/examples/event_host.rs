//! A host that follows a turn's event stream and answers permission asks
//! from another task, the way a web UI would: the gate has no approver, so
//! asks wait until `PermissionGate::reply` is called.
//!
//! Run: `cargo run -p agentgate-examples --example event_host`

use std::sync::Arc;

use agentgate::permission::{Action, PermissionGate, PermissionRequest, Reply, Rule, Ruleset};
use agentgate::testing::{Script, ScriptedModel};
use agentgate::{CodingAgent, DeltaField, Event, Part, StreamExt, ToolState, TurnEvent};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = Arc::new(ScriptedModel::new([
        Script::calls([(
            "c1",
            "bash",
            json!({"command": "echo hello from the host", "description": "greet"}),
        )]),
        Script::reply("The command said hello."),
    ]));
    let permissions = PermissionGate::new(); // no approver: asks wait for a reply
    let agent = CodingAgent::builder(env!("CARGO_MANIFEST_DIR"))
        .model(model)
        .tools(agentgate::tools::builtin()?)
        .permissions(permissions.clone())
        .session_permission(Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]))
        .build()
        .await?;

    // The "UI": receives asks over a channel, answers through the gate.
    let (to_ui, mut asks) = tokio::sync::mpsc::unbounded_channel::<PermissionRequest>();
    let ui = tokio::spawn(async move {
        let mut answered = 0;
        while let Some(request) = asks.recv().await {
            println!(
                "ui: allow {} {:?}? yes, once",
                request.permission, request.patterns
            );
            if permissions.reply(&request.id, Reply::Once).is_ok() {
                answered += 1;
            }
        }
        answered
    });

    let mut stream = Box::pin(agent.stream("Say hello with a command."));
    let mut answer = String::new();
    let mut tool_output = String::new();
    while let Some(item) = stream.next().await {
        match item {
            TurnEvent::Event(Event::PermissionAsked { request }) => to_ui.send(request)?,
            TurnEvent::Event(Event::PartDelta {
                field: DeltaField::Text,
                delta,
                ..
            }) => answer.push_str(&delta),
            TurnEvent::Event(Event::PartUpdated {
                part: Part::Tool(tool),
                ..
            }) => {
                if let ToolState::Completed { output, .. } = &tool.state {
                    tool_output = output.clone();
                }
            }
            TurnEvent::Finished(result) => assert!(result?.is_done()),
            _ => {}
        }
    }
    drop(to_ui);
    assert_eq!(ui.await?, 1);
    println!("tool: {}\nanswer: {answer}", tool_output.trim());
    assert!(tool_output.contains("hello from the host"));
    assert_eq!(answer, "The command said hello.");
    Ok(())
}
