//! `agent debug agent NAME` against `opencode debug agent NAME` (opencode
//! 1.18.33, from the npm registry) on configuration trees built here: the
//! global config, the project's `opencode.json`/`opencode.jsonc` and
//! `.opencode/opencode.json`, markdown agents in every folder form,
//! `mode`, `{env:}`, `{file:}`, JSONC, deprecated keys, `disable` and
//! `default_agent`. Every agent's permission rules (in order), description,
//! mode, hidden flag, model, prompt, temperature, top_p, steps and the
//! visibility of the tools both have must agree, as must which agents exist — or the difference must be one of
//! [`EXPLAINED`], each listed in docs/deviations.md.
//!
//! Runs when `OPENCODE_BIN` names the opencode executable (`.ci/run`
//! installs `opencode-ai` with npm and sets it); says so and passes
//! otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Differences that are known and kept, each with its reason in
/// docs/deviations.md: (agent, field).
const EXPLAINED: &[(&str, &str)] = &[
    // opencode 1.18.33 rewrote the explore agent's description and prompt
    // after the commit the reference describes; this SDK keeps its own
    // wording of the same role (read-only search, report back).
    ("explore", "description"),
    ("explore", "prompt"),
];

struct Tree {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    agents: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const TREES: &[Tree] = &[
    Tree {
        name: "plain",
        files: &[("opencode.json", r#"{"autoupdate": false}"#)],
        agents: &["build", "plan", "general", "explore"],
        env: &[],
    },
    Tree {
        name: "layers",
        files: &[
            (
                "~/.config/opencode/opencode.json",
                r#"{"permission": {"bash": {"rm *": "deny"}, "webfetch": "ask"}}"#,
            ),
            (
                "opencode.json",
                r#"{"permission": {"bash": {"git *": "allow"}, "edit": "ask"},
                    "agent": {"plan": {"permission": {"bash": {"cargo test*": "allow"}}}}}"#,
            ),
            (
                ".opencode/opencode.json",
                r#"{"permission": {"read": {"*.secret": "deny"}}}"#,
            ),
        ],
        agents: &["build", "plan", "general", "explore"],
        env: &[],
    },
    Tree {
        name: "markdown",
        files: &[
            (
                "opencode.jsonc",
                "// comments and a trailing comma\n{\"default_agent\": \"review\",}",
            ),
            (
                ".opencode/agent/review.md",
                "---\ndescription: Reviews code\nmode: primary\ntemperature: 0.2\npermission:\n  edit: deny\n  bash:\n    \"git diff*\": allow\n---\nYou review.\n",
            ),
            (
                ".opencode/agents/sub/deep.md",
                "---\ndescription: Deep one\nmode: subagent\n---\nDeep.\n",
            ),
            (
                ".opencode/mode/quick.md",
                "---\ndescription: Quick mode\n---\nQuick.\n",
            ),
            (
                "~/.config/opencode/agent/global.md",
                "---\ndescription: From the global folder\nhidden: true\n---\nGlobal.\n",
            ),
        ],
        agents: &["review", "sub/deep", "deep", "quick", "global", "build"],
        env: &[],
    },
    Tree {
        name: "substitutions",
        files: &[
            (
                "opencode.json",
                r#"{"agent": {"helper": {"description": "{env:HELPER_DESC}", "prompt": "{file:./prompt.txt}",
                    "mode": "subagent", "top_p": 0.9, "tools": {"bash": false, "write": false}}}}"#,
            ),
            ("prompt.txt", "Be helpful.\n"),
        ],
        agents: &["helper", "build"],
        env: &[("HELPER_DESC", "From the environment")],
    },
    Tree {
        name: "deprecated",
        files: &[(
            "opencode.json",
            r#"{"agent": {"plan": {"disable": true},
                "general": {"model": "anthropic/claude-sonnet-4-5", "maxSteps": 3}},
                "mode": {"legacy": {"description": "Old style", "permission": {"webfetch": "deny"}}},
                "tools": {"webfetch": false}}"#,
        )],
        agents: &["plan", "general", "legacy", "build"],
        env: &[],
    },
];

fn opencode() -> Option<PathBuf> {
    match std::env::var_os("OPENCODE_BIN") {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "OPENCODE_BIN={} does not exist",
                path.display()
            );
            Some(path)
        }
        _ => {
            println!(
                "SKIPPED: OPENCODE_BIN is not set; .ci/run installs opencode-ai with npm and sets it"
            );
            None
        }
    }
}

/// Runs `program` with `args` in `project` with an isolated home (and
/// opencode's network features off); the JSON it printed, or `None` when it
/// printed none (an agent that does not exist).
fn debug_json(
    program: &Path,
    args: &[&str],
    home: &Path,
    project: &Path,
    env: &[(&str, &str)],
) -> Option<Value> {
    let out = Command::new(program)
        .args(args)
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("PWD", project)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).ok()
}

/// Deprecated agent keys opencode keeps in its resolved configuration
/// beside what it translated them to (`tools` → `permission`, `maxSteps`
/// → `steps`); this SDK drops them once translated (docs/deviations.md).
const DEPRECATED_KEPT: &[&str] = &["tools", "maxSteps"];

/// Whether our resolved value says what opencode's does: opencode masks
/// values it takes for secrets (`"***"`), and adds empty objects
/// (`"options": {}`) to entries; every key we have must be there alike.
fn same_config(theirs: &Value, ours: &Value) -> bool {
    match (theirs, ours) {
        (Value::String(masked), _) if masked == "***" => true,
        (Value::Object(theirs), Value::Object(ours)) => {
            ours.iter()
                .all(|(key, value)| theirs.get(key).is_some_and(|t| same_config(t, value)))
                && theirs.iter().all(|(key, value)| {
                    ours.contains_key(key)
                        || value.as_object().is_some_and(|o| o.is_empty())
                        || DEPRECATED_KEPT.contains(&key.as_str())
                })
        }
        (Value::Array(theirs), Value::Array(ours)) => {
            theirs.len() == ours.len() && theirs.iter().zip(ours).all(|(t, o)| same_config(t, o))
        }
        (theirs, ours) => theirs == ours,
    }
}

/// The rules, with each program's own data and temporary folders named
/// alike (`opencode` and `agent-sdk` are the application names).
fn rules(agent: &Value, home: &Path) -> Vec<(String, String, String)> {
    let home = home.display().to_string();
    agent["permission"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|rule| {
                    let pattern = rule["pattern"]
                        .as_str()
                        .unwrap_or_default()
                        .replace(&format!("{home}/.local/share/opencode/"), "DATA/")
                        .replace(&format!("{home}/.local/share/agent-sdk/"), "DATA/")
                        .replace(".local/share/opencode/", "DATA/")
                        .replace(".local/share/agent-sdk/", "DATA/")
                        .replace("/tmp/opencode/", "TMP/")
                        .replace("/tmp/agent-sdk/", "TMP/");
                    (
                        rule["permission"].as_str().unwrap_or_default().to_string(),
                        pattern,
                        rule["action"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A field as comparable text: opencode's model is
/// `{providerID, modelID}`, this SDK's `{provider_id, model_id}`; absent
/// and `false`/`null` are alike.
fn field(agent: &Value, key: &str) -> Value {
    let value = agent.get(key).cloned().unwrap_or(Value::Null);
    if key == "model"
        && let Value::Object(model) = &value
    {
        let part = |a: &str, b: &str| {
            model
                .get(a)
                .or_else(|| model.get(b))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        return Value::String(format!(
            "{}/{}",
            part("providerID", "provider_id"),
            part("modelID", "model_id")
        ));
    }
    match value {
        Value::Bool(false) => Value::Null,
        other => other,
    }
}

#[test]
fn debug_agent_matches_opencode_on_every_tree() {
    let Some(opencode) = opencode() else {
        return;
    };
    let agent = PathBuf::from(env!("CARGO_BIN_EXE_agent"));
    let root = std::env::temp_dir().join(format!("agentgate-oc-diff-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut compared = 0;
    let mut unexplained: Vec<String> = Vec::new();
    let mut explained = 0;
    for tree in TREES {
        let home = root.join(tree.name).join("home");
        let project = root.join(tree.name).join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        // A real repository: both take the worktree from git.
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap();
        assert!(git.success());
        for (path, text) in tree.files {
            let full = match path.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => project.join(path),
            };
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        // opencode trusts every project: the trees are compared trusted
        // (what an untrusted one sets aside is in docs/deviations.md).
        let _ = Command::new(&agent)
            .arg("trust")
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("PWD", &project)
            .envs(tree.env.iter().copied())
            .output()
            .unwrap();
        // The resolved configuration: every top-level key this SDK has,
        // as opencode resolves it (opencode adds its own defaults, such as
        // `plugin` and `username`, which are not compared).
        if let (Some(theirs), Some(ours)) = (
            debug_json(&opencode, &["debug", "config"], &home, &project, tree.env),
            debug_json(
                &agent,
                &["debug", "config", "--json"],
                &home,
                &project,
                tree.env,
            ),
        ) {
            compared += 1;
            for (key, value) in ours.as_object().into_iter().flatten() {
                let theirs = theirs.get(key).unwrap_or(&Value::Null);
                if !same_config(theirs, value) {
                    unexplained.push(format!(
                        "[{}] config.{key}:\n  opencode {theirs}\n  agent    {value}",
                        tree.name
                    ));
                }
            }
        } else {
            unexplained.push(format!(
                "[{}] debug config: no JSON from one of them",
                tree.name
            ));
        }
        for name in tree.agents {
            let theirs = debug_json(
                &opencode,
                &["debug", "agent", name],
                &home,
                &project,
                tree.env,
            );
            let ours = debug_json(&agent, &["debug", "agent", name], &home, &project, tree.env);
            compared += 1;
            let (theirs, ours) = match (theirs, ours) {
                (None, None) => continue,
                (Some(theirs), Some(ours)) => (theirs, ours),
                (theirs, ours) => {
                    unexplained.push(format!(
                        "[{}] {name}: opencode has it: {}, agent has it: {}",
                        tree.name,
                        theirs.is_some(),
                        ours.is_some()
                    ));
                    continue;
                }
            };
            let mut differs = |key: &str, a: String, b: String| {
                if a == b {
                    return;
                }
                if EXPLAINED.contains(&(*name, key)) {
                    explained += 1;
                } else {
                    unexplained.push(format!(
                        "[{}] {name}.{key}:\n  opencode {a}\n  agent    {b}",
                        tree.name
                    ));
                }
            };
            differs(
                "permission",
                format!("{:#?}", rules(&theirs, &home)),
                format!("{:#?}", rules(&ours, &home)),
            );
            // opencode's JSON names it `topP`, this SDK's `top_p`.
            for (key, their_key) in [
                ("description", "description"),
                ("mode", "mode"),
                ("hidden", "hidden"),
                ("model", "model"),
                ("prompt", "prompt"),
                ("temperature", "temperature"),
                ("top_p", "topP"),
                ("steps", "steps"),
            ] {
                differs(
                    key,
                    field(&theirs, their_key).to_string(),
                    field(&ours, key).to_string(),
                );
            }
            // Which tools the rules leave visible, for the tools both have.
            if let (Some(their_tools), Some(our_tools)) =
                (theirs["tools"].as_object(), ours["tools"].as_object())
            {
                for (id, enabled) in our_tools {
                    if let Some(theirs) = their_tools.get(id) {
                        differs(
                            &format!("tools.{id}"),
                            theirs.to_string(),
                            enabled.to_string(),
                        );
                    }
                }
            }
        }
    }
    println!(
        "opencode differential: {compared} agents and configurations compared over {} trees, {explained} explained differences, {} unexplained",
        TREES.len(),
        unexplained.len()
    );
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}
