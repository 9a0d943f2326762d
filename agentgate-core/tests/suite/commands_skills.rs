//! Custom commands and skills as a library: the catalog from a loaded
//! configuration, skill discovery and what a hostile skill folder can (not)
//! widen, the skills section per agent, and `Engine::prepare_command`
//! running a command's shell lines through the gate with the session
//! agent's rules as a ceiling, and `Engine::run_shell` recording a user's
//! shell command as a `bash` call under the same gate.

use std::collections::HashMap;

use agentgate_core::commands::CommandSource;
use agentgate_core::permission::{Action, evaluate};
use agentgate_core::skills::skills_section;
use agentgate_core::testing::Script;
use agentgate_core::{AgentSpec, Command, Commands, ConfigLoader, Engine, Session, Skills};

use super::common::{Bash, model, rules};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn loader(project: &std::path::Path, home: &std::path::Path) -> ConfigLoader {
    let vars: HashMap<&str, &str> = HashMap::new();
    ConfigLoader::new(project)
        .worktree(project)
        .home(home)
        .global_dir(home.join("global"))
        .env(move |name| vars.get(name).map(|v| v.to_string()))
}

#[test]
fn the_catalog_reads_the_command_map_then_the_markdown_files() {
    let root = agentgate_testing::scratch_dir("cmd-catalog");
    let (project, home) = (root.join("p"), root.join("h"));
    write(
        &project.join("opencode.json"),
        r#"{"command": {"review": {"template": "json review", "agent": "plan"},
             "broken": {"description": "no template"},
             "ship": {"template": "Ship $1", "subtask": true, "model": "openai/gpt-5"}}}"#,
    );
    write(
        &project.join(".opencode/command/review.md"),
        "---\ndescription: From the file\n---\n\n  file review $ARGUMENTS  \n",
    );
    write(&project.join(".opencode/commands/team/lint.md"), "Lint it.");
    write(&home.join("global/commands/global.md"), "Global one.");
    let config = loader(&project, &home).load().unwrap();
    let (commands, warnings) = Commands::from_config(&config);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].path, "command.broken");
    let names: Vec<&str> = commands.sorted().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["global", "review", "ship", "team/lint"]);
    let review = commands.get("review").unwrap();
    assert_eq!(review.template, "file review $ARGUMENTS");
    assert_eq!(review.description.as_deref(), Some("From the file"));
    assert!(matches!(review.source, CommandSource::File(_)));
    let ship = commands.get("ship").unwrap();
    assert_eq!(ship.subtask, Some(true));
    assert_eq!(ship.model.as_deref(), Some("openai/gpt-5"));
}

#[test]
fn skills_are_found_where_opencode_looks_and_hostile_ones_widen_nothing() {
    let root = agentgate_testing::scratch_dir("skill-discovery");
    let (project, home) = (root.join("p"), root.join("h"));
    let skill =
        |name: &str| format!("---\nname: {name}\ndescription: The {name} skill\n---\nDo {name}.\n");
    write(&home.join(".claude/skills/mine/SKILL.md"), &skill("mine"));
    write(
        &project.join(".claude/skills/proj/SKILL.md"),
        &skill("proj"),
    );
    write(
        &project.join(".opencode/skill/nested/deep/SKILL.md"),
        &skill("deep"),
    );
    write(
        &project.join(".opencode/skills/dots/SKILL.md"),
        &skill("../../"),
    );
    write(
        &project.join(".opencode/skills/star/SKILL.md"),
        &skill("all*"),
    );
    write(
        &project.join(".opencode/skills/nameless/SKILL.md"),
        "no front matter\n",
    );
    // A folder outside every skills folder, linked in.
    let outside = root.join("secrets");
    write(&outside.join("SKILL.md"), &skill("linked"));
    write(&outside.join("id_rsa"), "PRIVATE");
    std::os::unix::fs::symlink(&outside, project.join(".opencode/skills/linked")).unwrap();

    let loader = loader(&project, &home);
    let config = loader.load().unwrap();
    let (skills, warnings) = Skills::discover(&loader, &config);
    assert_eq!(skills.names(), ["../../", "deep", "linked", "mine", "proj"]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings.iter().any(|w| w.message.contains("wildcard")));
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("`name` is missing"))
    );

    // The name is only a name: the folder is the one holding the file.
    let dots = skills.get("../../").unwrap();
    assert_eq!(dots.directory, project.join(".opencode/skills/dots"));
    let linked = skills.get("linked").unwrap();
    assert!(!linked.contained);
    let readable = skills.readable_dirs();
    assert!(readable.contains(&home.join(".claude/skills/mine").display().to_string()));
    assert!(
        !readable
            .iter()
            .any(|d| d.contains("linked") || d.contains("secrets"))
    );

    // Set OPENCODE_DISABLE_EXTERNAL_SKILLS: only the config folders count.
    let off = loader
        .clone()
        .env(|name| (name == "OPENCODE_DISABLE_EXTERNAL_SKILLS").then(|| "1".to_string()));
    let (skills, _) = Skills::discover(&off, &off.load().unwrap());
    assert_eq!(skills.names(), ["../../", "deep", "linked"]);
}

#[tokio::test]
async fn agents_read_skill_folders_without_asking_but_not_linked_ones() {
    let root = agentgate_testing::scratch_dir("skill-rules");
    let (project, home) = (root.join("p"), root.join("h"));
    std::fs::create_dir_all(&project).unwrap();
    write(
        &home.join(".claude/skills/mine/SKILL.md"),
        "---\nname: mine\ndescription: Mine\n---\nBody\n",
    );
    let outside = root.join("secrets");
    write(
        &outside.join("SKILL.md"),
        "---\nname: linked\ndescription: L\n---\nB\n",
    );
    std::fs::create_dir_all(project.join(".opencode/skills")).unwrap();
    std::os::unix::fs::symlink(&outside, project.join(".opencode/skills/linked")).unwrap();
    let (engine, _) = super::common::configured(
        &project,
        loader(&project, &home),
        model([Script::reply("ok")]),
        agentgate_core::ToolRegistry::new(),
        agentgate_core::PermissionPreset::default(),
        None,
    )
    .await;
    let build = engine.agent("build").unwrap();
    let external = |path: &std::path::Path| {
        evaluate(
            "external_directory",
            &format!("{}/x.md", path.display()),
            &[&build.permission],
        )
        .action
    };
    assert_eq!(external(&home.join(".claude/skills/mine")), Action::Allow);
    assert_eq!(external(&outside), Action::Ask);
    assert_eq!(
        external(&project.join(".opencode/skills/linked")),
        Action::Ask
    );
}

#[test]
fn the_section_lists_what_the_agent_may_load_and_is_absent_when_skill_is_off() {
    let root = agentgate_testing::scratch_dir("skill-section");
    write(
        &root.join("a/SKILL.md"),
        "---\nname: alpha\ndescription: <A> & co\n---\nA\n",
    );
    write(
        &root.join("b/SKILL.md"),
        "---\nname: beta\ndescription: B\n---\nB\n",
    );
    let mut skills = Skills::new();
    skills.load_folder(&root, &mut Vec::new());
    let all = skills_section(&skills, &rules("[]")).unwrap();
    assert!(all.contains("<name>alpha</name>") && all.contains("<name>beta</name>"));
    assert!(all.contains("&lt;A&gt; &amp; co"), "{all}");
    let no_beta = rules(r#"[{"permission":"skill","pattern":"beta","action":"deny"}]"#);
    let some = skills_section(&skills, &no_beta).unwrap();
    assert!(some.contains("alpha") && !some.contains("<name>beta</name>"));
    let off = rules(r#"[{"permission":"skill","pattern":"*","action":"deny"}]"#);
    assert_eq!(skills_section(&skills, &off), None);
}

/// An engine with agents `build` (bash allowed) and `careful` (bash denied)
/// and the fake bash tool, and a session of `session_agent`.
async fn engine_with(session_agent: &str) -> (Engine, Session, Bash) {
    let bash = Bash::default();
    let build = AgentSpec::new("build").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"}]"#,
    ));
    let careful = AgentSpec::new("careful").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"},
            {"permission":"bash","pattern":"*","action":"deny"}]"#,
    ));
    let engine = Engine::builder(model([Script::reply("ok")]))
        .agent(build)
        .agent(careful)
        .tool(bash.clone())
        .build();
    let session = engine
        .create_session(Session::new(session_agent, std::env::temp_dir()))
        .await
        .unwrap();
    (engine, session, bash)
}

#[tokio::test]
async fn a_command_runs_its_shell_lines_through_the_gate_and_names_no_laxer_agent() {
    let (engine, session, bash) = engine_with("build").await;
    let mut command = Command::new("status", "Say $1: !`git status` done");
    command.description = Some("status".into());
    let prepared = engine
        .prepare_command(&session.id, &command, "hi there", Default::default())
        .await
        .unwrap();
    assert_eq!(*bash.ran.lock().unwrap(), ["git status"]);
    assert_eq!(prepared.parts.len(), 1);
    let agentgate_core::Part::Text { text, .. } = &prepared.parts[0] else {
        panic!("{:?}", prepared.parts[0]);
    };
    assert_eq!(text, "Say hi there: ran git status done");

    // A session of `careful` runs a command naming `build`: the session
    // agent's deny still holds, and nothing runs.
    let (engine, session, bash) = engine_with("careful").await;
    command.agent = Some("build".into());
    let error = engine
        .prepare_command(&session.id, &command, "", Default::default())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("git status"), "{error}");
    assert!(!error.rejected(), "a rule denied it");
    assert!(bash.ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_users_shell_command_is_recorded_as_a_bash_call_under_the_agents_rules() {
    let (engine, session, bash) = engine_with("build").await;
    let options = agentgate_core::PromptOptions::default();
    let run = engine
        .run_shell(&session.id, "ls", options.clone(), Default::default())
        .await
        .unwrap();
    assert_eq!(*bash.ran.lock().unwrap(), ["ls"]);
    let call = run.messages[0].tool_parts().next().unwrap().clone();
    assert!(
        matches!(&call.state, agentgate_core::ToolState::Completed { output, .. } if output == "ran ls"),
        "{call:?}"
    );
    let history = engine.messages(&session.id).await.unwrap();
    let roles: Vec<_> = history.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [agentgate_core::Role::User, agentgate_core::Role::Assistant]
    );

    // `careful` denies bash: the command is recorded as failed, never run.
    let denied = engine
        .run_shell(
            &session.id,
            "rm -rf x",
            options.agent("careful"),
            Default::default(),
        )
        .await
        .unwrap();
    let call = denied.messages[0].tool_parts().next().unwrap().clone();
    assert!(
        matches!(&call.state, agentgate_core::ToolState::Error { error, .. } if error.contains("deny")),
        "{call:?}"
    );
    assert_eq!(*bash.ran.lock().unwrap(), ["ls"]);
}

#[tokio::test]
async fn a_users_shell_command_that_asks_is_rejected_without_an_approver() {
    let bash = Bash::default();
    let asker = AgentSpec::new("asker").with_permission(rules(
        r#"[{"permission":"*","pattern":"*","action":"allow"},
            {"permission":"bash","pattern":"*","action":"ask"}]"#,
    ));
    let model = model([]);
    let engine = Engine::builder(model.clone())
        .agent(asker)
        .tool(bash.clone())
        .build();
    let session = engine
        .create_session(Session::new("asker", std::env::temp_dir()))
        .await
        .unwrap();
    let run = engine
        .run_shell(&session.id, "ls", Default::default(), Default::default())
        .await
        .unwrap();
    assert_eq!(run.stop, agentgate_core::StopReason::Rejected);
    let call = run.messages[0].tool_parts().next().unwrap().clone();
    assert!(
        matches!(call.state, agentgate_core::ToolState::Error { .. }),
        "{call:?}"
    );
    assert!(bash.ran.lock().unwrap().is_empty());
    assert!(model.requests().is_empty(), "the model is never called");
}
