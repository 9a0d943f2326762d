//! Configuration precedence with a temporary HOME: global and project
//! files, `{env:}` and `{file:}`, the `mode` map, markdown agents,
//! `OPENCODE_CONFIG_CONTENT`, `OPENCODE_PERMISSION`, a misspelled key; and
//! where opencode 1.18.33 was run to settle the order: `.json` and `.jsonc`
//! in one folder, nested `.opencode` folders, empty files, `{env:}` inside
//! `{file:}`, the V2 `agents` map, every error listed.

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
    // Trusted: the project's layer as opencode reads it.
    let config = ConfigLoader::new(&s.project)
        .trust_project(true)
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
    assert!(error.first().file.ends_with("opencode.json"), "{error}");
    assert_eq!(error.first().path, "agent.build.steps");
    std::fs::remove_file(s.project.join("opencode.json")).unwrap();
    let error = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[("OPENCODE_PERMISSION", r#"{"bash": "maybe"}"#)]))
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("OPENCODE_PERMISSION"), "{error}");
}

/// A project (a git worktree) and a home, with nothing in them yet.
fn bare() -> Setup {
    let root = agentgate_testing::scratch_dir("agentgate-core-config-order");
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Setup {
        root,
        home,
        project,
    }
}

fn load_in(s: &Setup, dir: &Path) -> agentgate_core::Config {
    ConfigLoader::new(dir)
        .home(&s.home)
        .env(env(&[]))
        .load()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn in_one_folder_the_jsonc_wins_and_the_nearest_folder_wins() {
    let s = bare();
    write(
        &s.project.join("opencode.json"),
        r#"{"model": "a/json", "small_model": "a/root"}"#,
    );
    write(&s.project.join("opencode.jsonc"), r#"{"model": "a/jsonc"}"#);
    let config = load_in(&s, &s.project);
    assert_eq!(config.model.as_deref(), Some("a/jsonc"));
    assert!(
        config.files[0].ends_with("opencode.json"),
        "{:?}",
        config.files
    );
    assert!(
        config.files[1].ends_with("opencode.jsonc"),
        "{:?}",
        config.files
    );
    // A nearer folder's .json still beats a farther folder's .jsonc.
    write(
        &s.project.join("sub/opencode.json"),
        r#"{"model": "a/sub"}"#,
    );
    let config = load_in(&s, &s.project.join("sub"));
    assert_eq!(config.model.as_deref(), Some("a/sub"));
    assert_eq!(config.small_model.as_deref(), Some("a/root"));
    // The same inside a .opencode folder.
    write(
        &s.project.join(".opencode/opencode.json"),
        r#"{"default_agent": "json"}"#,
    );
    write(
        &s.project.join(".opencode/opencode.jsonc"),
        r#"{"default_agent": "jsonc"}"#,
    );
    let config = load_in(&s, &s.project);
    assert_eq!(config.default_agent.as_deref(), Some("jsonc"));
}

#[test]
fn an_empty_file_is_an_empty_layer() {
    let s = bare();
    // A public project ships exactly this: a 0-byte .opencode/opencode.json.
    write(&s.project.join(".opencode/opencode.json"), "");
    write(&s.project.join("opencode.json"), " \n\t\n");
    write(
        &s.project.join("opencode.jsonc"),
        "// nothing yet\n/* later */\n",
    );
    write(
        &s.home.join(".config/opencode/opencode.json"),
        r#"{"model": "a/global"}"#,
    );
    let config = load_in(&s, &s.project);
    assert_eq!(config.model.as_deref(), Some("a/global"));
    assert_eq!(config.files.len(), 4, "{:?}", config.files);
    assert!(config.permission.is_none());
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn env_is_substituted_before_file_so_it_may_name_the_file() {
    let s = bare();
    write(&s.home.join("p.txt"), "  from home\n");
    write(
        &s.project.join(".opencode/local.txt"),
        "next to the config\n",
    );
    write(
        &s.project.join(".opencode/opencode.json"),
        r#"{"agent": {
             "a": {"prompt": "{file:{env:MY_HOME}/p.txt}"},
             "b": {"prompt": "{file:local.txt}"},
             "c": {"prompt": "{file:~/p.txt}"}}}"#,
    );
    let home = s.home.display().to_string();
    let loader = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[("MY_HOME", &home)]));
    // Untrusted, the project's layer keeps only its own files' content.
    let untrusted = loader.clone().load().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(untrusted.agents["a"].prompt.as_deref(), Some(""));
    assert_eq!(
        untrusted.agents["b"].prompt.as_deref(),
        Some("next to the config")
    );
    assert_eq!(untrusted.agents["c"].prompt.as_deref(), Some(""));
    // Trusted, as opencode reads it.
    let config = loader
        .trust_project(true)
        .load()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.agents["a"].prompt.as_deref(), Some("from home"));
    // Relative to the config file's folder, not the working directory.
    assert_eq!(
        config.agents["b"].prompt.as_deref(),
        Some("next to the config")
    );
    assert_eq!(config.agents["c"].prompt.as_deref(), Some("from home"));
}

#[test]
fn the_farthest_opencode_folder_wins_and_the_home_one_after_it() {
    let s = bare();
    let deep = s.project.join("sub/deep");
    std::fs::create_dir_all(&deep).unwrap();
    write(
        &s.project.join(".opencode/opencode.json"),
        r#"{"model": "a/outer", "small_model": "a/outer"}"#,
    );
    write(
        &s.project.join("sub/.opencode/opencode.json"),
        r#"{"model": "a/inner"}"#,
    );
    write(
        &s.home.join(".opencode/opencode.json"),
        r#"{"small_model": "a/home"}"#,
    );
    write(
        &s.project.join(".opencode/agent/reviewer.md"),
        "---\ndescription: outer\n---\nOuter.",
    );
    write(
        &s.project.join("sub/.opencode/agent/reviewer.md"),
        "---\ndescription: inner\n---\nInner.",
    );
    let config = load_in(&s, &deep);
    assert_eq!(config.model.as_deref(), Some("a/outer"));
    assert_eq!(config.small_model.as_deref(), Some("a/home"));
    assert_eq!(
        config.agents["reviewer"].description.as_deref(),
        Some("outer")
    );
    let dirs: Vec<PathBuf> = config.config_dirs.clone();
    assert_eq!(
        dirs,
        [
            s.project.join("sub/.opencode"),
            s.project.join(".opencode"),
            s.home.join(".opencode"),
        ]
    );
}

#[test]
fn every_error_is_listed_under_its_own_key_path() {
    let s = bare();
    write(
        &s.project.join("opencode.json"),
        r#"{"model": 5, "small_model": true,
            "agent": {"build": {"temperature": "hot", "steps": "ten"}},
            "instructions": ["ok.md", 3],
            "tools": {"bash": "yes"},
            "permission": {"bash": "sometimes", "edit": "deny", "read": 7}}"#,
    );
    write(
        &s.project.join(".opencode/opencode.json"),
        r#"{"default_agent": []}"#,
    );
    let errors = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[]))
        .load()
        .unwrap_err();
    let found: Vec<(String, String)> = errors
        .iter()
        .map(|e| {
            let file = Path::new(&e.file);
            let tail = file.strip_prefix(&s.project).unwrap_or(file);
            (tail.display().to_string(), e.path.clone())
        })
        .collect();
    let expected = [
        ("opencode.json", "model"),
        ("opencode.json", "small_model"),
        ("opencode.json", "permission.bash"),
        ("opencode.json", "permission.read"),
        ("opencode.json", "tools.bash"),
        ("opencode.json", "agent.build.temperature"),
        ("opencode.json", "agent.build.steps"),
        ("opencode.json", "instructions[1]"),
        (".opencode/opencode.json", "default_agent"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(f, p)| (f.to_string(), p.to_string()))
        .collect();
    assert_eq!(found, expected, "{errors}");
    // Only the permission errors speak of permissions.
    for error in &errors {
        assert_eq!(
            error.to_string().contains("permission"),
            error.path.starts_with("permission"),
            "{error}"
        );
    }
    // The message lists each, with its file and key path.
    let shown = errors.to_string();
    assert!(shown.starts_with("9 configuration errors:"), "{shown}");
    assert_eq!(shown.lines().count(), 10, "{shown}");
    assert!(
        shown.contains("opencode.json: agent.build.temperature: expected"),
        "{shown}"
    );
}

#[test]
fn the_v2_agents_map_is_lowered_into_agent_as_opencode_does() {
    let s = bare();
    write(
        &s.home.join(".config/opencode/opencode.json"),
        r#"{"agent": {"helper": {"temperature": 0.2}}}"#,
    );
    write(
        &s.project.join("opencode.json"),
        r##"{"agent": {"build": {"temperature": 0.3}},
            "agents": {
              "build": {"description": "ignored: agent.build wins in the same file"},
              "helper": {"description": "d", "model": "a/b#high", "mode": "subagent",
                         "hidden": true, "color": "#ff0000", "steps": 3, "system": "SYS",
                         "temperature": 0.7, "request": {"headers": {"x": "y"}, "body": {"k": 1}}},
              "gone": {"disabled": true},
              "split": {"model": {"providerID": "p", "model": "m1", "variant": "v"}},
              "bad": {"color": "red", "description": "skipped"},
              "zero": {"steps": 0}}}"##,
    );
    let config = load_in(&s, &s.project);
    let build = &config.agents["build"];
    assert_eq!(build.temperature, Some(0.3));
    assert_eq!(build.description, None);
    let helper = &config.agents["helper"];
    assert_eq!(helper.description.as_deref(), Some("d"));
    assert_eq!(helper.prompt.as_deref(), Some("SYS"));
    assert_eq!(helper.model.as_deref(), Some("a/b"));
    assert_eq!(helper.variant.as_deref(), Some("high"));
    assert_eq!(helper.mode, Some(AgentMode::Subagent));
    assert_eq!(helper.hidden, Some(true));
    assert_eq!(helper.color.as_deref(), Some("#ff0000"));
    assert_eq!(helper.steps, Some(3));
    assert_eq!(helper.options["k"], 1);
    // V2 has no temperature: the global agent's value stays.
    assert_eq!(helper.temperature, Some(0.2));
    assert_eq!(config.agents["gone"].disable, Some(true));
    assert_eq!(config.agents["split"].model.as_deref(), Some("p/m1"));
    assert_eq!(config.agents["split"].variant.as_deref(), Some("v"));
    assert!(!config.agents.contains_key("bad"));
    assert!(!config.agents.contains_key("zero"));
    let warned: Vec<&str> = config.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        warned,
        [
            "agents.build",
            "agents.helper.request.headers",
            "agents.bad.color",
            "agents.zero.steps"
        ],
        "{:?}",
        config.warnings
    );
    // V2 rule lists are refused, not silently dropped.
    write(
        &s.project.join("opencode.json"),
        r#"{"agents": {"x": {"permissions": [{"permission": "bash", "pattern": "*", "action": "deny"}]}}}"#,
    );
    let errors = ConfigLoader::new(&s.project)
        .home(&s.home)
        .env(env(&[]))
        .load()
        .unwrap_err();
    assert_eq!(errors.first().path, "agents.x.permissions", "{errors}");
}

#[test]
fn a_markdown_agent_with_a_wrong_field_is_a_warning_about_that_field() {
    let s = bare();
    let dir = s.project.join(".opencode");
    write(
        &dir.join("agent/x.md"),
        "---\ndescription: x\ntemperature: hot\n---\nHi.",
    );
    let config = load_in(&s, &s.project);
    assert!(!config.agents.contains_key("x"));
    let warning = &config.warnings[0];
    assert!(warning.file.ends_with("x.md"), "{warning}");
    assert_eq!(warning.path, "front-matter.temperature", "{warning}");
    // Not an "invalid permission config": the field is not a permission.
    let (_, errors) = agentgate_core::agent_files::scan_markdown_agents(&dir);
    let shown = errors[0].to_string();
    assert!(
        shown.contains("front-matter.temperature: expected a number"),
        "{shown}"
    );
    assert!(!shown.contains("permission"), "{shown}");
}
