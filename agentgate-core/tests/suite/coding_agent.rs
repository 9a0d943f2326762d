//! A configuration mapped to an engine (`EngineBuilder::from_config`):
//! configuration, agents, tools and model assembled for a directory,
//! streaming a prompt.

use std::collections::HashMap;
use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    ConfigLoader, DeltaField, Event, FinishReason, ModelInfo, Part, PermissionPreset, StreamExt,
    ToolRegistry, TurnEvent,
};
use serde_json::json;

use super::common::{Echo, configured};

#[tokio::test]
async fn one_call_agent_streams_with_the_project_settings() {
    let root = agentgate_testing::scratch_dir("agentgate-core-one-call");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("AGENTS.md"), "Use tabs.").unwrap();
    std::fs::write(
        project.join("opencode.json"),
        r#"{"model": "openai/o3", "agent": {"build": {"temperature": 0.2, "reasoningEffort": "high"}}}"#,
    )
    .unwrap();
    let model = Arc::new(
        ScriptedModel::new([
            Script::calls([("c1", "echo", json!({"text": "x"}))]),
            Script::new()
                .text_chunks(&["Tabs ", "it ", "is."])
                .finish(FinishReason::Stop),
        ])
        .with_info(ModelInfo::new("openai", "o3")),
    );
    let vars: HashMap<&str, &str> = HashMap::new();
    let home = root.join("home");
    let (engine, session) = configured(
        &project,
        ConfigLoader::new(&project)
            .home(&home)
            .env(move |name| vars.get(name).map(|v| v.to_string())),
        model.clone(),
        ToolRegistry::new().with(Echo::default()),
        PermissionPreset::default(),
        None,
    )
    .await;
    assert_eq!(session.agent, "build");

    let mut stream = Box::pin(engine.prompt_stream(
        &session.id,
        vec![Part::text("Tabs or spaces?")],
        agentgate_core::CancellationToken::new(),
    ));
    let mut text = String::new();
    let mut finished = None;
    while let Some(item) = stream.next().await {
        assert!(finished.is_none(), "nothing after the result");
        match item {
            TurnEvent::Event(Event::PartDelta {
                field: DeltaField::Text,
                delta,
                ..
            }) => text.push_str(&delta),
            TurnEvent::Finished(result) => finished = Some(result.unwrap()),
            _ => {}
        }
    }
    assert_eq!(text, "Tabs it is.");
    assert_eq!(finished.unwrap().text(), "Tabs it is.");
    let request = &model.requests()[0];
    assert_eq!(request.system.len(), 2);
    assert!(request.system[1].contains(&format!("Working directory: {}", project.display())));
    assert!(request.system[1].contains("Use tabs."));
    assert_eq!(request.temperature, Some(0.2));
    assert_eq!(request.options["openai"]["reasoning"]["effort"], "high");
    let _ = std::fs::remove_dir_all(&root);
}
