//! What reaches the model: the system prompt (§15) and the agent's own
//! model settings (temperature, variant, options).

use std::sync::Arc;

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentConfig, AgentEnvironment, Agents, Engine, ModelInfo, Session, SystemPrompts,
    prompt_parts::{PromptFamily, family_prompt},
};
use agentgate_permission::PermissionConfig;
use indexmap::IndexMap;
use serde_json::json;

#[tokio::test]
async fn the_build_agent_sends_its_prompt_environment_instructions_and_settings() {
    let root = agentgate_testing::scratch_dir("agentgate-core-system");
    let project = root.join("project");
    let global = root.join("config");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        project.join("AGENTS.md"),
        "Run `make check` before answering.",
    )
    .unwrap();
    std::fs::write(
        global.join("AGENTS.md"),
        "The user prefers British spelling.",
    )
    .unwrap();

    let env = AgentEnvironment::new(
        root.join("data").to_string_lossy(),
        root.join("tmp").to_string_lossy(),
        project.to_string_lossy(),
    );
    let mut config = IndexMap::new();
    let build = json!({"temperature": 0.3, "reasoningEffort": "high", "variant": "medium"});
    config.insert(
        "build".to_string(),
        AgentConfig::from_value(&build, "agent.build").unwrap(),
    );
    let agents = Agents::from_config(&env, &PermissionConfig::default(), &config, None);
    let model = Arc::new(
        ScriptedModel::new([Script::reply("ok")]).with_info(ModelInfo::new("openai", "gpt-4.1")),
    );
    let engine = Engine::builder(model.clone())
        .agents(agents)
        .worktree(project.clone())
        .system_prompts(
            SystemPrompts::default()
                .with_global_dir(&global)
                .with_home(&root),
        )
        .build();
    let session = engine
        .create_session(Session::new("build", project.join("src")))
        .await
        .unwrap();
    engine.run(&session.id, "hi").await.unwrap();

    let request = &model.requests()[0];
    assert_eq!(request.system.len(), 2, "the stable head, then the rest");
    assert_eq!(request.system[0], family_prompt(PromptFamily::Gpt));
    let rest = &request.system[1];
    assert!(
        rest.contains(&format!(
            "Working directory: {}",
            project.join("src").display()
        )),
        "{rest}"
    );
    assert!(rest.contains("openai/gpt-4.1"), "{rest}");
    assert!(rest.contains("Is directory a git repo: no"), "{rest}");
    let global_at = rest
        .find("The user prefers British spelling.")
        .expect("global file");
    let project_at = rest
        .find("Run `make check` before answering.")
        .expect("project file");
    assert!(global_at < project_at, "global instructions come first");
    assert!(rest.contains(&format!(
        "Instructions from: {}",
        project.join("AGENTS.md").display()
    )));
    assert_eq!(request.temperature, Some(0.3));
    assert_eq!(
        serde_json::Value::Object(request.options.clone()),
        json!({"openai": {"reasoning": {"effort": "high"}}}),
        "the explicit option wins over the variant"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn explore_has_its_own_prompt_and_disabled_assembly_sends_only_the_agent_sections() {
    let env = AgentEnvironment::new("/d", "/t", "/w");
    let agents = Agents::builtin(&env, &PermissionConfig::default());
    let explore = agents.get("explore").unwrap();
    assert!(explore.prompt.as_deref().unwrap().contains("read-only"));
    let model = Arc::new(ScriptedModel::new([Script::reply("ok")]));
    let engine = Engine::builder(model.clone())
        .agent(agentgate_core::AgentSpec::new("build").with_system("Only this."))
        .system_prompts(SystemPrompts::disabled())
        .build();
    let session = engine
        .create_session(Session::new("build", std::env::temp_dir()))
        .await
        .unwrap();
    engine.run(&session.id, "hi").await.unwrap();
    assert_eq!(model.requests()[0].system, ["Only this."]);
}

/// Host sections (MCP servers' instructions, §15) go into the second system
/// part, after the environment block, so the stable head stays cacheable.
#[test]
fn host_sections_follow_the_environment_in_the_second_part() {
    let dir = std::env::temp_dir();
    let prompts = agentgate_core::SystemPrompts::default()
        .with_instructions(Vec::new())
        .with_section("<mcp_instructions>\n  <server name=\"docs\">\n    Search first.\n  </server>\n</mcp_instructions>");
    let parts = prompts.assemble(&[], None, &ModelInfo::new("openai", "gpt-4.1"), &dir, &dir);
    assert_eq!(parts.len(), 2);
    assert!(!parts[0].contains("mcp_instructions"));
    let env_at = parts[1].find("<env>").unwrap_or(0);
    let mcp_at = parts[1].find("<mcp_instructions>").unwrap();
    assert!(mcp_at > env_at, "{}", parts[1]);
}
