//! End-to-end tests of `agent agents`, `agent debug agent` and markdown
//! agents (`.opencode/agent/*.md`) in the `permission` commands.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const REVIEW: &str = "---
description: Reviews code: style, bugs and tests
mode: subagent
temperature: 0.1
tools:
  write: false
permission:
  bash:
    \"*\": ask
    \"git diff*\": allow
    \"git *\": deny
---

You review code. You never edit files.
";

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agent-agents-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, relative: &str, text: &str) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project directory with `.opencode/agent/review.md`.
fn project(name: &str) -> PathBuf {
    let dir = scratch(name);
    write(&dir, ".opencode/agent/review.md", REVIEW);
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .current_dir(dir)
        .env("HOME", "/home/tester")
        .env(
            "XDG_DATA_HOME",
            std::env::temp_dir().join(format!("agent-agents-cli-data-{}", std::process::id())),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "the CLI panicked: {stderr}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

fn json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn permission_check_uses_a_markdown_agent() {
    let dir = project("check");
    let out = run(
        &dir,
        &[
            "permission",
            "check",
            "--agent",
            "review",
            "edit",
            "src/main.rs",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("edit \"src/main.rs\" → deny"), "{text}");
    assert!(
        text.contains("layer user:.opencode/agent/review.md:agent.review"),
        "{text}"
    );
    // The order of the markdown permission map decides: the later
    // `git *: deny` beats the earlier `git diff*: allow`.
    let explain = json(&run(
        &dir,
        &[
            "permission",
            "check",
            "--agent",
            "review",
            "--json",
            "bash",
            "git diff HEAD",
        ],
    ));
    assert_eq!(explain["action"], "deny");
    let explain = json(&run(
        &dir,
        &[
            "permission",
            "check",
            "--agent",
            "review",
            "--json",
            "bash",
            "ls",
        ],
    ));
    assert_eq!(explain["action"], "ask");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn agents_lists_default_first_then_by_name() {
    let dir = project("list");
    write(&dir, ".opencode/agents/team/lead.md", "Lead the team.");
    write(
        &dir,
        ".opencode/mode/focus.md",
        "---\nmode: subagent\n---\nFocus.",
    );
    let out = run(&dir, &["agents"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "build",
            "compaction",
            "explore",
            "focus",
            "general",
            "plan",
            "review",
            "summary",
            "team/lead",
            "title"
        ]
    );
    assert!(text.lines().next().unwrap().starts_with("NAME"), "{text}");
    let review = text.lines().find(|l| l.starts_with("review")).unwrap();
    assert!(
        review.contains("subagent") && review.contains("custom"),
        "{review}"
    );
    assert!(
        review.ends_with("Reviews code: style, bugs and tests"),
        "{review}"
    );
    let title = text.lines().find(|l| l.starts_with("title")).unwrap();
    assert!(
        title.contains("native") && title.contains("hidden"),
        "{title}"
    );

    let list = json(&run(&dir, &["agents", "--json"]));
    let list = list.as_array().unwrap();
    assert_eq!(list[0]["name"], "build");
    let focus = list.iter().find(|a| a["name"] == "focus").unwrap();
    assert_eq!(focus["mode"], "primary", "mode files are forced primary");
    assert_eq!(focus["native"], false);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn default_agent_from_the_config_comes_first() {
    let dir = project("default");
    write(&dir, "opencode.json", r#"{"default_agent": "plan"}"#);
    let list = json(&run(&dir, &["agents", "--json"]));
    assert_eq!(list[0]["name"], "plan");
    assert_eq!(list[1]["name"], "build");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn debug_agent_prints_the_agent_and_its_tools() {
    let dir = project("debug");
    // Trusted: the markdown agent's `tools` as opencode reads them.
    assert!(run(&dir, &["trust"]).status.success());
    let agent = json(&run(&dir, &["debug", "agent", "review"]));
    assert_eq!(agent["name"], "review");
    assert_eq!(agent["mode"], "subagent");
    assert_eq!(agent["native"], false);
    assert_eq!(agent["temperature"], 0.1);
    assert_eq!(agent["prompt"], "You review code. You never edit files.");
    let tools = agent["tools"].as_object().unwrap();
    let ids: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "bash",
            "edit",
            "glob",
            "grep",
            "list",
            "read",
            "task",
            "todowrite",
            "webfetch",
            "websearch",
            "write",
            "apply_patch",
            "skill",
            "question",
            "lsp",
            "invalid"
        ]
    );
    for off in ["edit", "write", "apply_patch"] {
        assert_eq!(tools[off], false, "{off}");
    }
    // bash's last rule is `git *` deny, not `*` deny: still visible.
    assert_eq!(tools["bash"], true);
    assert_eq!(tools["read"], true);
    // The rules as opencode orders them: edit deny from `tools`, then bash.
    let rules = agent["permission"].as_array().unwrap();
    let tail: Vec<String> = rules[rules.len() - 5..]
        .iter()
        .map(|r| format!("{} {} {}", r["permission"], r["pattern"], r["action"]).replace('"', ""))
        .collect();
    assert_eq!(tail[0], "edit * deny");
    assert_eq!(tail[3], "bash git * deny");
    assert!(tail[4].starts_with("external_directory /"), "{tail:?}");

    // A built-in agent: general hides todowrite, question is denied by default.
    let general = json(&run(&dir, &["debug", "agent", "general"]));
    assert_eq!(general["tools"]["todowrite"], false);
    assert_eq!(general["tools"]["question"], false);
    assert_eq!(general["tools"]["task"], true);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_agent_exits_2_with_the_known_names() {
    let dir = project("unknown");
    for args in [
        vec!["debug", "agent", "reviewer"],
        vec!["permission", "check", "--agent", "reviewer", "edit", "a.rs"],
    ] {
        let out = run(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("unknown agent \"reviewer\": expected one of build, ")
                && err.contains("review"),
            "{err}"
        );
        assert!(stdout(&out).is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_markdown_file_is_a_warning_and_the_rest_load() {
    let dir = project("broken");
    write(
        &dir,
        ".opencode/agent/broken.md",
        "---\ndescription: fine\npermission:\n  edit: deny\n bash: [oops\n---\nBody.",
    );
    write(
        &dir,
        ".opencode/agent/steps.md",
        "---\nsteps: many\n---\nBody.",
    );
    let out = run(&dir, &["agents", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.lines().any(|line| line.starts_with("agent: warning: ")
            && line.contains(".opencode/agent/broken.md")
            && line.contains("invalid YAML front-matter")),
        "{err}"
    );
    assert!(
        err.lines().any(|line| line.starts_with("agent: warning: ")
            && line.contains(".opencode/agent/steps.md")
            && line.contains("front-matter.steps")),
        "{err}"
    );
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"review"));
    assert!(!names.contains(&"broken") && !names.contains(&"steps"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn markdown_merges_over_json_and_next_to_config() {
    let dir = project("merge");
    // JSON first, markdown after it: markdown wins per field.
    write(
        &dir,
        "opencode.json",
        r#"{"agent": {"review": {"description": "from json", "steps": 4}}}"#,
    );
    let agent = json(&run(&dir, &["debug", "agent", "review"]));
    assert_eq!(agent["description"], "Reviews code: style, bugs and tests");
    assert_eq!(agent["steps"], 4);

    // --config elsewhere: the .opencode next to it is scanned after ours.
    write(&dir, "other/opencode.json", "{}");
    write(
        &dir,
        "other/.opencode/agent/review.md",
        "---\ndescription: other\n---\nOther prompt.",
    );
    let config = dir.join("other/opencode.json");
    let agent = json(&run(
        &dir,
        &[
            "debug",
            "agent",
            "review",
            "--config",
            config.to_str().unwrap(),
        ],
    ));
    assert_eq!(agent["description"], "other");
    assert_eq!(agent["prompt"], "Other prompt.");
    assert_eq!(agent["mode"], "subagent", "kept from the first directory");
    let _ = std::fs::remove_dir_all(&dir);
}
