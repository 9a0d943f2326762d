//! The one-call coding agent: configuration, agents, tools and model
//! assembled for a directory, streaming a prompt.

use std::collections::HashMap;
use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    CodingAgent, CodingAgentError, ConfigLoader, DeltaField, Event, FinishReason, ModelInfo,
    StreamExt, TurnEvent,
};
use serde_json::json;

use super::common::Echo;

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
    let agent = CodingAgent::builder(&project)
        .config(
            ConfigLoader::new(&project)
                .home(&home)
                .env(move |name| vars.get(name).map(|v| v.to_string())),
        )
        .model(model.clone())
        .tool(Echo::default())
        .build()
        .await
        .unwrap();
    assert_eq!(agent.session().agent, "build");

    let mut stream = Box::pin(agent.stream("Tabs or spaces?"));
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

#[tokio::test]
async fn without_a_model_the_error_says_what_to_configure() {
    let root = agentgate_testing::scratch_dir("agentgate-core-no-model");
    let error = CodingAgent::builder(&root)
        .config(ConfigLoader::new(&root).home(&root).env(|_| None))
        .build()
        .await
        .unwrap_err();
    assert!(matches!(error, CodingAgentError::NoModel), "{error}");
    assert!(error.to_string().contains("provider/model"));
    let _ = std::fs::remove_dir_all(&root);
}
