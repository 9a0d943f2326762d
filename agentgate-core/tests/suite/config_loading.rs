//! Configuration precedence with a temporary HOME: global and project
//! files, `{env:}` and `{file:}`, the `mode` map, markdown agents,
//! `OPENCODE_CONFIG_CONTENT`, `OPENCODE_PERMISSION`, a misspelled key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agentgate_core::{AgentMode, ConfigLoader};
use agentgate_permission::{Action, decide, from_config_with_home};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct Setup {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn setup() -> Setup {
    let root = agentgate_testing::scratch_dir("agentgate-core-config");
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    write(
        &home.join(".config/opencode/opencode.json"),
        r#"{"model": "anthropic/claude-sonnet-4-5", "small_model": "openai/gpt-4.1-mini",
            "permission": {"bash": {"*": "ask", "git status": "allow"}},
            "agent": {"build": {"temperature": 0.1, "description": "global"}},
            "instructions": ["~/rules.md"]}"#,
    );
    write(
        &home.join(".config/opencode/agent/reviewer.md"),
        "---\ndescription: Reviews\nmode: subagent\n---\nReview carefully.",
    );
    write(&project.join("key.txt"), "sk-from-file\n");
    write(
        &project.join("opencode.jsonc"),
        r#"{
          // the project's own settings
          "model": "openai/{env:MODEL_NAME}",
          "provider": {"openai": {"options": {"baseURL": "http://localhost:9/v1", "apiKey": "{file:key.txt}"},
                                  "models": {"gpt-4.1": {"limit": {"context": 1000, "output": 100}}}}},
          "mode": {"focus": {"prompt": "Focus.", "temperature": 0.2}},
          "agent": {"build": {"temperature": 0.4}},
          "permision": {"edit": "deny"},
          "instructions": ["docs/*.md"],
        }"#,
    );
    write(
        &project.join(".opencode/agent/reviewer.md"),
        "---\ndescription: Project reviewer\n---\nReview this project.",
    );
    Setup {
        root,
        home,
        project,
    }
}

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| vars.get(name).cloned()
}

#[test]
fn layers_apply_in_opencode_order() {
    let s = setup();
    let config = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[
            ("MODEL_NAME", "gpt-4.1"),
            ("OPENCODE_PERMISSION", r#"{"bash": {"rm *": "deny"}}"#),
            ("OPENCODE_CONFIG_CONTENT", r#"{"default_agent": "focus"}"#),
        ]))
        .load()
        .unwrap();

    // Project files win over the global one; {env:} and {file:} applied.
    assert_eq!(config.model.as_deref(), Some("openai/gpt-4.1"));
    assert_eq!(config.small_model.as_deref(), Some("openai/gpt-4.1-mini"));
    let openai = &config.providers["openai"];
    assert_eq!(openai.base_url.as_deref(), Some("http://localhost:9/v1"));
    assert_eq!(openai.api_key.as_deref(), Some("sk-from-file"));
    assert_eq!(openai.models["gpt-4.1"].context_limit, Some(1000));
    // Agent maps merge per field; the legacy mode map is a primary agent.
    let build = &config.agents["build"];
    assert_eq!(build.temperature, Some(0.4));
    assert_eq!(build.description.as_deref(), Some("global"));
    assert_eq!(config.agents["focus"].mode, Some(AgentMode::Primary));
    assert_eq!(config.agents["focus"].prompt.as_deref(), Some("Focus."));
    // Markdown agents: the project's .opencode wins over the global folder.
    let reviewer = &config.agents["reviewer"];
    assert_eq!(reviewer.description.as_deref(), Some("Project reviewer"));
    assert_eq!(reviewer.mode, Some(AgentMode::Subagent));
    // OPENCODE_CONFIG_CONTENT comes last.
    assert_eq!(config.default_agent.as_deref(), Some("focus"));
    // OPENCODE_PERMISSION merges over the files' permission.
    let rules = from_config_with_home(config.permission.as_ref().unwrap(), "/h");
    assert_eq!(decide("bash", "rm -rf x", &[&rules]), Action::Deny);
    assert_eq!(decide("bash", "git status", &[&rules]), Action::Allow);
    assert_eq!(decide("bash", "make", &[&rules]), Action::Ask);
    // Instructions of every layer.
    assert_eq!(config.instructions, ["~/rules.md", "docs/*.md"]);
    // The misspelled key is a warning with a hint, naming the file.
    let warning = config
        .warnings
        .iter()
        .find(|w| w.path == "permision")
        .expect("a warning for the typo");
    assert!(
        warning.message.contains("did you mean \"permission\""),
        "{warning}"
    );
    assert!(warning.file.ends_with("opencode.jsonc"), "{warning}");
    assert_eq!(config.files.len(), 3, "{:?}", config.files);
}

#[test]
fn errors_name_the_file_and_the_key_path() {
    let s = setup();
    write(
        &s.project.join("opencode.json"),
        r#"{"agent": {"build": {"steps": "ten"}}}"#,
    );
    let error = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[("MODEL_NAME", "x")]))
        .load()
        .unwrap_err();
    assert!(error.file.ends_with("opencode.json"), "{error}");
    assert_eq!(error.path, "agent.build.steps");
    std::fs::remove_file(s.project.join("opencode.json")).unwrap();
    let error = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[("OPENCODE_PERMISSION", r#"{"bash": "maybe"}"#)]))
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("OPENCODE_PERMISSION"), "{error}");
}
