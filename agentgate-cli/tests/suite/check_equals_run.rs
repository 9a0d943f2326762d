//! `agent permission check` answers what `agent run` does: for a project
//! whose rules sit in every layer of the configuration stack (the global
//! config, `OPENCODE_CONFIG`, the project's `opencode.json`, its
//! `.opencode/opencode.json`, `OPENCODE_PERMISSION`, an agent override),
//! the decision `check` prints equals the decision of the ruleset the agent
//! `run` assembles (`CodingAgent::builder(dir)` with the same loader) and
//! the gate it asks with the approvals remembered for the directory, for
//! every request and agent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use agentgate::{AgentEnvironment, CodingAgent, ConfigLoader};
use agentgate_permission::{
    Action, ApprovalStore, AskRequest, JsonFileStore, PermissionError, PermissionGate, RejectAll,
    Rule,
};
use serde_json::Value;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn check_answers_what_run_does_over_every_layer() {
    let root = std::env::temp_dir().join(format!(
        "agentgate-cli-check-equals-run-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let home = {
        std::fs::create_dir_all(&home).unwrap();
        home.canonicalize().unwrap()
    };
    let project = project.canonicalize().unwrap();
    // Each layer decides something the others do not, and later layers
    // override earlier ones where they overlap.
    write(
        &home.join(".config/opencode/opencode.json"),
        r#"{"permission": {"bash": {"rm *": "deny", "git *": "allow"}, "edit": "ask"}}"#,
    );
    let custom = root.join("custom.json");
    write(
        &custom,
        r#"{"permission": {"webfetch": "deny", "bash": {"git push *": "ask"}}}"#,
    );
    write(
        &project.join("opencode.json"),
        r#"{"permission": {"bash": {"cargo *": "allow"}},
            "agent": {"plan": {"permission": {"bash": {"cargo test*": "allow"}}}}}"#,
    );
    write(
        &project.join(".opencode/opencode.json"),
        r#"{"permission": {"bash": {"git push --force*": "deny"}, "read": {"*.env": "deny"}}}"#,
    );
    let permission_env = r#"{"websearch": "deny", "bash": {"curl *": "ask"}}"#;
    let vars: HashMap<String, String> = [
        ("HOME", home.display().to_string()),
        ("OPENCODE_CONFIG", custom.display().to_string()),
        ("OPENCODE_PERMISSION", permission_env.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();

    let requests: &[(&str, &str)] = &[
        ("bash", "rm -rf build"),
        ("bash", "git status"),
        ("bash", "git push origin main"),
        ("bash", "git push --force origin"),
        ("bash", "cargo build"),
        ("bash", "cargo test --all"),
        ("bash", "curl https://example.com"),
        ("bash", "ls"),
        // Command lines: judged as the bash tool judges them, request by
        // request (each command; `bash_opaque` for what the scan cannot
        // see through, judged only by rules naming it; the files the read
        // rules cover; directories outside the project).
        ("bash", "ls && rm -rf build"),
        ("bash", "git status; git push origin main"),
        ("bash", "cat secrets/.env"),
        ("bash", "rm 2>/dev/null -rf build"),
        ("bash", "$CMD x"),
        ("bash", "cargo test 2>&1 | tail -5"),
        ("bash", "cd /etc && ls"),
        ("bash", "cd /etc && rm -rf x"),
        ("edit", "src/main.rs"),
        ("read", "secrets/.env"),
        ("read", "src/main.rs"),
        ("webfetch", "https://example.com"),
        ("websearch", "rust"),
        ("task", "explore"),
        ("todowrite", "*"),
        (
            "external_directory",
            &format!("{}/.local/share/agent-sdk/tool-output/x", home.display()),
        ),
        ("external_directory", "/etc/*"),
        ("edit", ".opencode/plans/p.md"),
        (
            "edit",
            &format!("{}/.opencode/plans/p.md", project.display()),
        ),
    ];

    // What `agent run` would detect with this HOME (the test process has
    // its own).
    let mut environment = AgentEnvironment::new(
        format!("{}/.local/share/agent-sdk", home.display()),
        format!("{}/agent-sdk", std::env::temp_dir().display()),
        project.display().to_string(),
    );
    environment.home = Some(home.display().to_string());
    // "Always" approvals `agent chat` remembered for the project (in the
    // store under the data directory `agent run` uses with this HOME): one
    // for what the rules ask, one against a configured deny, which never
    // wins.
    let store = Arc::new(JsonFileStore::new(
        home.join(".local/share/agent-sdk/approvals"),
    ));
    store
        .append(
            &project.display().to_string(),
            &[
                Rule::new("bash", "git push *", Action::Allow),
                Rule::new("bash", "rm *", Action::Allow),
                Rule::new("edit", "src/*", Action::Allow),
            ],
        )
        .unwrap();
    let lookup = Arc::new(vars.clone());
    let agent = CodingAgent::builder(&project)
        .environment(environment)
        .config({
            let lookup = Arc::clone(&lookup);
            ConfigLoader::new(&project)
                .home(&home)
                .env(move |name| lookup.get(name).cloned())
        })
        .model(Arc::new(agentgate_core::demo::DemoModel::new()))
        // The gate is built below as `run` builds it; the agent's own
        // stays off the process's data directory.
        .permissions(PermissionGate::new())
        .without_mcp()
        .build()
        .await
        .expect("the agent builds");

    // From the project and from a folder inside it (the worktree is the
    // same: the plan agent's own plan files are judged alike).
    let inside = project.join("src/deep");
    std::fs::create_dir_all(&inside).unwrap();
    let mut compared = 0;
    for (cwd, name) in ["build", "plan", "general", "explore"]
        .into_iter()
        .flat_map(|name| [(&project, name), (&inside, name)])
    {
        let spec = agent
            .engine()
            .agent(name)
            .unwrap_or_else(|| panic!("agent {name}"));
        for (permission, pattern) in requests {
            // The gate `run` uses: the agent's ruleset, then the approvals
            // remembered for the directory `run` starts in; an ask the
            // rejecting approver answers is an ask.
            let gate = PermissionGate::builder()
                .store(store.clone(), cwd.display().to_string())
                .approver(Arc::new(RejectAll::new(std::io::sink())))
                .build()
                .unwrap();
            // A command line is asked as the bash tool asks it: each of its
            // requests in order; a deny among them decides.
            let asked: Vec<(String, Vec<String>)> = if *permission == "bash" {
                agentgate_tools::bash_requests(
                    pattern,
                    cwd,
                    cwd,
                    &project,
                    &spec.permission,
                    &gate.approved(),
                )
                .unwrap()
                .into_iter()
                .map(|r| (r.permission, r.patterns))
                .collect()
            } else {
                vec![(permission.to_string(), vec![pattern.to_string()])]
            };
            let mut run = "allow";
            for (asked_permission, patterns) in asked {
                let mut request = AskRequest::new("ses", asked_permission.as_str(), patterns);
                request.ruleset = if asked_permission == "bash_opaque" {
                    agentgate_permission::Ruleset(
                        spec.permission
                            .iter()
                            .filter(|rule| rule.permission == asked_permission)
                            .cloned()
                            .collect(),
                    )
                } else {
                    spec.permission.clone()
                };
                match gate.ask(request).await {
                    Ok(()) => {}
                    Err(PermissionError::Denied { .. }) => {
                        run = "deny";
                        break;
                    }
                    // Whatever the person answers, a later deny denies.
                    Err(_) => run = "ask",
                }
            }
            let out = Command::new(env!("CARGO_BIN_EXE_agent"))
                .args(["permission", "check", "--json", "--agent", name])
                .arg(permission)
                .arg(pattern)
                .current_dir(cwd)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_DATA_HOME")
                .env_remove("OPENCODE_CONFIG_CONTENT")
                .envs(&vars)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let check: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                check["action"].as_str(),
                Some(run),
                "agent {name} from {}, {permission} {pattern:?}: check says {}, run's gate {run}",
                cwd.display(),
                check["action"],
            );
            if cwd == &project && (*permission, *pattern) == ("bash", "git push origin main") {
                assert_eq!(run, "allow", "the remembered approval counts");
                assert_eq!(check["decided_by"]["layer"], "approved");
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 8 * requests.len());
    let _ = std::fs::remove_dir_all(&root);
}
