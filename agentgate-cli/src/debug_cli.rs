//! `agent debug config` (each top-level setting with the file it came
//! from, the last one setting it) and `agent debug prompt AGENT` (the
//! system prompt the agent would be sent).

use std::path::Path;

use agentgate::Workspace;
use agentgate_core::{AgentEnvironment, Agents, SystemPrompts, config_text::parse_config_text};

use crate::model_choice::choose_model;
use crate::workspace::APP;

/// The directory's configuration, loaded as `agent run` and the library
/// load it.
fn load(directory: &Path) -> Result<Workspace, String> {
    Workspace::load(directory).map_err(|e| e.to_string())
}

/// `agent debug config`: each setting with its file, or (`json`) the
/// resolved configuration as one object.
pub fn config(directory: &Path, json: bool) -> Result<String, String> {
    let workspace = load(directory)?;
    let config = workspace.config();
    if json {
        return serde_json::to_string_pretty(&config.value)
            .map(|text| text + "\n")
            .map_err(|e| e.to_string());
    }
    let layers: Vec<(String, serde_json::Map<String, serde_json::Value>)> = config
        .files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).ok()?;
            Some((file.clone(), parse_config_text(&text, file).ok()?))
        })
        .collect();
    let mut out = String::from("files, lowest precedence first:\n");
    for file in &config.files {
        out.push_str(&format!("  {file}\n"));
    }
    out.push_str("settings:\n");
    for (key, value) in &config.value {
        let origin = layers
            .iter()
            .rev()
            .find(|(_, layer)| layer.contains_key(key))
            .map(|(file, _)| file.as_str())
            .unwrap_or("(inline or environment)");
        out.push_str(&format!("  {key} = {value}\n    from {origin}\n"));
    }
    for warning in &config.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    Ok(out)
}

/// `agent debug prompt AGENT`: the system parts, separated by a rule line.
pub fn prompt(directory: &Path, agent: &str, model: Option<&str>) -> Result<String, String> {
    let workspace = load(directory)?;
    let (loader, config) = (workspace.loader(), workspace.config());
    let worktree = loader.resolved_worktree();
    let environment = AgentEnvironment::detect(APP, worktree.to_string_lossy());
    let permission = config.permission.clone().unwrap_or_default();
    let agents = Agents::from_config(
        &environment,
        &permission,
        &config.agents,
        config.default_agent.clone(),
    );
    let found = agents
        .get(agent)
        .ok_or_else(|| format!("unknown agent {agent:?}: see `agent agents`"))?;
    let choice = choose_model(model, &workspace, |v| std::env::var(v).ok())?;
    let mut prompts = SystemPrompts::default()
        .with_instructions(config.instructions.clone())
        .with_skills(workspace.skills().clone());
    if let Some(global) = loader.resolved_global_dir() {
        prompts = prompts.with_global_dir(global);
    }
    let own: Vec<String> = found.prompt.iter().cloned().collect();
    let parts = prompts.assemble(
        &own,
        Some(&found.permission),
        choice.model.info(),
        directory,
        &worktree,
    );
    Ok(format!("model: {}\n", choice.name) + &parts.join("\n\n-----\n\n") + "\n")
}
