//! End-to-end tests of the `agent` binary: every `permission` command on
//! real inputs, malformed ones included, and the conformance vectors fed
//! through `agent permission eval`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const HOME: &str = "/home/tester";

fn agent() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent"));
    cmd.env("HOME", HOME);
    // The record of trusted projects (`agent trust`) of these tests.
    cmd.env(
        "XDG_DATA_HOME",
        std::env::temp_dir().join(format!("agentgate-cli-data-{}", std::process::id())),
    );
    cmd
}

/// Trusts the project in `dir` (its configuration as written, as opencode
/// reads it: these tests check opencode's semantics).
fn trust(dir: &Path) {
    let out = agent().arg("trust").current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh, empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentgate-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = agent()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
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

fn eval(lines: &[Value]) -> (Vec<Value>, i32) {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = run_in(&std::env::temp_dir(), &["permission", "eval"], &input);
    let answers = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (answers, out.status.code().unwrap_or(-1))
}

fn rule(permission: &str, pattern: &str, action: &str) -> Value {
    json!({"permission": permission, "pattern": pattern, "action": action})
}

#[test]
fn eval_answers_every_op() {
    let git = vec![rule("bash", "*", "ask"), rule("bash", "git *", "allow")];
    let (answers, code) = eval(&[
        json!({"op": "match", "input": "ls -la", "pattern": "ls *"}),
        json!({"op": "match", "input": "lsof", "pattern": "ls *"}),
        json!({"op": "evaluate", "permission": "bash", "pattern": "git status", "rulesets": [git]}),
        json!({"op": "evaluate", "permission": "edit", "pattern": "a.rs", "rulesets": [git]}),
        json!({"op": "compiled_evaluate", "permission": "bash", "pattern": "git status", "rulesets": [git]}),
        json!({"op": "from_config", "config": {"read": {"~/.ssh/*": "deny"}, "bash": "ask", "*": "allow"}, "home": "/h"}),
        json!({"op": "merge", "rulesets": [[rule("a", "*", "allow")], [rule("a", "*", "allow")]]}),
        json!({"op": "disabled", "tools": ["write", "bash", "edit", "read"], "ruleset": [rule("*", "*", "allow"), rule("edit", "*", "deny"), rule("bash", "*", "deny"), rule("bash", "ls *", "allow")]}),
        json!({"op": "arity", "tokens": ["npm", "run", "dev", "--", "-p"]}),
        json!({"op": "subagent_permission", "parent": [rule("bash", "*", "deny"), rule("edit", "*", "allow")], "subagent": [rule("task", "*", "allow")]}),
        json!({"op": "explain", "permission": "bash", "pattern": "git push", "layers": [
            {"name": "defaults", "rules": [rule("*", "*", "allow")]},
            {"name": "user", "source": "opencode.json", "rules": git}
        ]}),
        json!({"op": "lint", "layers": [{"name": "user", "rules": [rule("bash", "rm *", "deny"), rule("bash", "*", "allow")]}], "id": "x"}),
    ]);
    assert_eq!(code, 0, "{answers:?}");
    assert_eq!(answers.len(), 12);
    assert_eq!(answers[0], json!({"result": true}));
    assert_eq!(answers[1], json!({"result": false}));
    assert_eq!(
        answers[2],
        json!({"result": rule("bash", "git *", "allow")})
    );
    assert_eq!(answers[3], json!({"result": rule("edit", "*", "ask")}));
    assert_eq!(answers[4], answers[2]);
    // Key order is kept: read, bash, then "*".
    assert_eq!(
        answers[5],
        json!({"result": [rule("read", "/h/.ssh/*", "deny"), rule("bash", "*", "ask"), rule("*", "*", "allow")]})
    );
    assert_eq!(
        answers[6],
        json!({"result": [rule("a", "*", "allow"), rule("a", "*", "allow")]})
    );
    assert_eq!(answers[7], json!({"result": ["edit", "write"]}));
    assert_eq!(answers[8], json!({"result": ["npm", "run", "dev"]}));
    assert_eq!(
        answers[9],
        json!({"result": [rule("bash", "*", "deny"), rule("todowrite", "*", "deny")]})
    );
    let explained = &answers[10]["result"];
    assert_eq!(explained["action"], "allow");
    assert_eq!(explained["decided_by"]["layer"], "user");
    assert_eq!(explained["decided_by"]["source"], "opencode.json");
    assert_eq!(explained["decided_by"]["index"], 1);
    assert_eq!(explained["overridden"].as_array().unwrap().len(), 2);
    assert_eq!(answers[11]["id"], "x");
    assert_eq!(answers[11]["result"][0]["kind"], "specific_before_generic");
}

#[test]
fn eval_bad_lines_get_numbered_errors_and_the_rest_runs() {
    let input = [
        r#"{"op":"match","input":"a","pattern":"*"}"#,
        r#"{"op":"match","input":"a""#,
        "",
        "[1, 2]",
        r#"{"op":"fly"}"#,
        r#"{"input":"a"}"#,
        r#"{"op":"evaluate","permission":"bash","pattern":"x"}"#,
        r#"{"op":"evaluate","permission":"bash","pattern":"x","rulesets":[[{"permission":"bash","pattern":"*","action":"maybe"}]]}"#,
        r#"{"op":"from_config","config":{"bash":{"rm *":true}},"id":9}"#,
        r#"{"op":"arity","tokens":"git status"}"#,
        r#"{"op":"match","input":"b","pattern":"b"}"#,
    ]
    .join("\n");
    let out = run_in(&std::env::temp_dir(), &["permission", "eval"], &input);
    assert_eq!(out.status.code(), Some(1));
    let answers: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every line is answered in order, the blank line 3 too.
    assert_eq!(answers.len(), 11, "{answers:?}");
    assert_eq!(answers[0], json!({"result": true}));
    let error = |i: usize| answers[i]["error"].as_str().unwrap().to_string();
    let expect = |i: usize, ok: bool| assert!(ok, "{}", error(i));
    expect(1, error(1).starts_with("line 2: invalid JSON"));
    expect(2, error(2).starts_with("line 3: empty line"));
    expect(3, error(3).starts_with("line 4: expected a JSON object"));
    expect(4, error(4).starts_with("line 5: unknown op \"fly\""));
    expect(5, error(5).starts_with("line 6: missing field \"op\""));
    expect(
        6,
        error(6).contains("line 7: evaluate: missing field \"rulesets\""),
    );
    expect(
        7,
        error(7).starts_with("line 8: evaluate: field \"rulesets\"") && error(7).contains("maybe"),
    );
    expect(
        8,
        error(8).contains("config.bash[\"rm *\"]")
            && error(8).contains("\"allow\", \"deny\" or \"ask\""),
    );
    assert_eq!(answers[8]["id"], 9);
    expect(
        9,
        error(9).contains("line 10: arity: field \"tokens\" must be a list of strings"),
    );
    assert_eq!(answers[10], json!({"result": true}));
}

#[test]
fn eval_invalid_utf8_line_is_answered() {
    let mut child = agent()
        .args(["permission", "eval"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"\xff\xfe\n{\"op\":\"match\",\"input\":\"\",\"pattern\":\"\"}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("line 1: not valid UTF-8"), "{text}");
    assert_eq!(lines[1], r#"{"result":true}"#);
    assert_eq!(out.status.code(), Some(1));
}

const CONFIG: &str = r#"{
  // The user's rules, JSONC style.
  "$schema": "https://opencode.ai/config.json",
  "permission": {
    "bash": {
      "*": "ask",
      "git *": "allow",
      "git push *": "deny", /* never push */
    },
    "read": {"~/.ssh/*": "deny"},
  },
}
"#;

#[test]
fn check_json_explains_with_layers() {
    let dir = scratch("check");
    std::fs::write(dir.join("opencode.jsonc"), CONFIG).unwrap();
    trust(&dir);
    let out = run_in(
        &dir,
        &[
            "permission",
            "check",
            "--json",
            "bash",
            "git push origin main",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["action"], "deny");
    assert_eq!(v["decided_by"]["layer"], "user:opencode.jsonc");
    assert_eq!(v["decided_by"]["index"], 2);
    assert_eq!(v["decided_by"]["rule"], rule("bash", "git push *", "deny"));
    let layers: Vec<&str> = v["overridden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["layer"].as_str().unwrap())
        .collect();
    assert_eq!(
        layers,
        ["agent:build", "user:opencode.jsonc", "user:opencode.jsonc"]
    );

    // `~` is expanded with $HOME.
    let out = run_in(
        &dir,
        &[
            "permission",
            "check",
            "read",
            &format!("{HOME}/.ssh/id_rsa"),
        ],
        "",
    );
    let text = stdout(&out);
    assert!(text.starts_with("read "), "{text}");
    assert!(text.contains("→ deny"), "{text}");

    // The plan agent forbids edits; the text form names the layer.
    let out = run_in(
        &dir,
        &[
            "permission",
            "check",
            "--agent",
            "plan",
            "edit",
            "src/main.rs",
        ],
        "",
    );
    assert!(stdout(&out).contains("→ deny"), "{}", stdout(&out));
    assert!(stdout(&out).contains("agent:plan"), "{}", stdout(&out));

    // Nothing matches in an empty directory with an unknown permission?
    // build's "*" allow still decides: the default agent is build.
    let empty = scratch("check-empty");
    let out = run_in(&empty, &["permission", "check", "--json", "bash", "ls"], "");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["action"], "allow");
    assert_eq!(v["decided_by"]["layer"], "agent:build");

    let out = run_in(
        &empty,
        &["permission", "check", "--agent", "bulid", "bash", "ls"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown agent \"bulid\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rules_prints_the_config_ruleset() {
    let dir = scratch("rules");
    let file = dir.join("custom.json");
    std::fs::write(&file, CONFIG).unwrap();
    let out = run_in(
        &std::env::temp_dir(),
        &["permission", "rules", "--config", file.to_str().unwrap()],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v,
        json!([
            rule("bash", "*", "ask"),
            rule("bash", "git *", "allow"),
            rule("bash", "git push *", "deny"),
            rule("read", &format!("{HOME}/.ssh/*"), "deny"),
        ])
    );
    // Without a config file: an empty ruleset.
    let out = run_in(&scratch("rules-empty"), &["permission", "rules"], "");
    assert!(out.status.success());
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&out)).unwrap(),
        json!([])
    );
}

#[test]
fn malformed_configs_name_file_path_and_form() {
    let dir = scratch("malformed");
    let cases: &[(&str, &[&str])] = &[
        (
            r#"{"permission": {"bash": {"rm *": "nope"}}}"#,
            &[
                "bad.json",
                "permission.bash[\"rm *\"]",
                "\"allow\", \"deny\" or \"ask\"",
                "\"nope\"",
            ],
        ),
        (
            r#"{"permission": {"edit": 3}}"#,
            &["bad.json", "permission.edit", "number 3"],
        ),
        (
            r#"{"permission": ["allow"]}"#,
            &["bad.json", "at permission:", "an array"],
        ),
        (
            r#"{"tools": {"bash": "yes"}}"#,
            &["bad.json", "tools.bash", "true or false"],
        ),
        (
            "{\n  \"permission\": {\n    \"bash\": \"allow\"\n  \n",
            &["bad.json", "not valid JSON", "line 5"],
        ),
        ("[]", &["bad.json", "top level", "an array"]),
        ("{ /* open", &["bad.json", "unterminated /* comment"]),
        (
            r#"{"agent": {"plan": {"permission": {"edit": {"*": 1}}}}}"#,
            &["bad.json", "agent.plan.permission.edit[\"*\"]"],
        ),
    ];
    let file = dir.join("bad.json");
    for (text, needles) in cases {
        std::fs::write(&file, text).unwrap();
        for command in [
            &[
                "permission",
                "check",
                "--config",
                file.to_str().unwrap(),
                "bash",
                "ls",
            ][..],
            &[
                "permission",
                "lint",
                "--config",
                file.to_str().unwrap(),
                "--agent",
                "build",
            ][..],
        ] {
            let out = run_in(&dir, command, "");
            assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
            let err = stderr(&out);
            for needle in *needles {
                assert!(err.contains(needle), "{text}: {err:?} lacks {needle:?}");
            }
        }
    }
    let out = run_in(
        &dir,
        &["permission", "rules", "--config", "missing.json"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.json: cannot read the config file"));
}

#[test]
fn lint_exit_status_follows_findings() {
    let dir = scratch("lint");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"permission": {"bash": {"rm *": "deny", "*": "allow"}, "wirte": "deny"}}"#,
    )
    .unwrap();
    let out = run_in(
        &dir,
        &["permission", "lint", "--config", bad.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("specific-before-generic"), "{text}");
    assert!(
        text.contains("unknown-permission") && text.contains("wirte"),
        "{text}"
    );
    assert!(text.contains("2 findings in 3 rules"), "{text}");

    let out = run_in(
        &dir,
        &[
            "permission",
            "lint",
            "--json",
            "--config",
            bad.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let findings: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(findings.as_array().unwrap().len(), 2);
    assert_eq!(findings[0]["rule"]["layer"], "user:bad.json");

    // --known accepts an extra permission name.
    let mcp = dir.join("mcp.json");
    std::fs::write(
        &mcp,
        r#"{"permission": {"mcp_github": "ask", "bash": {"*": "ask", "git *": "allow"}}}"#,
    )
    .unwrap();
    let out = run_in(
        &dir,
        &["permission", "lint", "--config", mcp.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let out = run_in(
        &dir,
        &[
            "permission",
            "lint",
            "--config",
            mcp.to_str().unwrap(),
            "--known",
            "mcp_github",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("no findings in 3 rules"),
        "{}",
        stdout(&out)
    );

    // No config at all: nothing to lint, success.
    let out = run_in(&scratch("lint-empty"), &["permission", "lint"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("no rules to lint"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn lint_in_an_empty_git_repository_succeeds_with_no_findings() {
    let dir = scratch("lint-git");
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(git.success());
    for args in [
        &["permission", "lint"][..],
        &["permission", "lint", "--json"][..],
        &["permission", "lint", "--agent", "build"][..],
        &["permission", "lint", "--agent", "explore", "--json"][..],
    ] {
        let out = run_in(&dir, args, "");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stdout(&out));
        let text = stdout(&out);
        if args.contains(&"--json") {
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!([]));
        } else {
            assert!(
                text.contains("no rules to lint") || text.contains("no findings in 0 rules"),
                "{args:?}: {text}"
            );
        }
    }
}

#[test]
fn lint_knows_mcp_servers_and_custom_tools() {
    let dir = scratch("lint-mcp");
    std::fs::write(
        dir.join("opencode.json"),
        r#"{"mcp": {"github": {"type": "remote", "url": "http://127.0.0.1:1/mcp"}, "my server": {"type": "local", "command": ["true"]}},
            "permission": {"github_*": "ask", "github_delete_repo": "deny", "my_server_get": "allow", "deploy": "ask", "gitlab_*": "ask"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join(".opencode/tool")).unwrap();
    std::fs::write(dir.join(".opencode/tool/deploy.ts"), "export default {}").unwrap();
    trust(&dir);
    let out = run_in(&dir, &["permission", "lint", "--json"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let findings: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let findings = findings.as_array().unwrap();
    // Only the server the config does not name is unknown.
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["kind"], "unknown_permission");
    assert_eq!(findings[0]["rule"]["rule"]["permission"], "gitlab_*");
    assert_eq!(findings[0]["rule"]["source"], "opencode.json");
}

#[test]
fn lint_reports_the_user_rules_of_markdown_agents_only() {
    let dir = scratch("lint-markdown");
    std::fs::create_dir_all(dir.join(".opencode/agent")).unwrap();
    std::fs::write(
        dir.join(".opencode/agent/review.md"),
        "---\ndescription: r\npermission:\n  bash:\n    \"rm *\": deny\n    \"*\": allow\n---\nReview.\n",
    )
    .unwrap();
    trust(&dir);
    let out = run_in(&dir, &["permission", "lint"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("specific-before-generic: bash \"rm *\" deny (layer user:.opencode/agent/review.md:agent.review from .opencode/agent/review.md"),
        "{text}"
    );
    assert!(!text.contains("built-in, rule"), "{text}");
    assert!(text.contains("1 finding in 2 rules"), "{text}");
}

#[test]
fn lint_runs_without_a_usable_default_agent() {
    let dir = scratch("lint-no-default");
    std::fs::write(
        dir.join("opencode.json"),
        r#"{"default_agent": "nope", "agent": {"build": {"disable": true}}, "permission": {"bash": "ask", "bsh": "deny"}}"#,
    )
    .unwrap();
    let out = run_in(&dir, &["permission", "lint"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("unknown-permission: bsh"), "{text}");
    assert!(text.contains("1 finding in 2 rules"), "{text}");
}

#[test]
fn lint_warns_about_bash_allow_all_with_denies() {
    let dir = scratch("lint-allow-all");
    std::fs::write(
        dir.join("opencode.json"),
        r#"{"permission": {"bash": {"*": "allow", "rm *": "deny", "git push *": "deny"}}}"#,
    )
    .unwrap();
    trust(&dir);
    let out = run_in(&dir, &["permission", "lint"], "");
    // Warnings are findings: the exit status stays 1, as for every finding.
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("warning: bash-allow-all-with-deny: bash \"*\" allow (layer user:opencode.json from opencode.json, rule #0)"),
        "{text}"
    );
    assert!(text.contains("docs/security.md"), "{text}");
    assert!(text.contains("1 finding in 3 rules (1 warning)"), "{text}");
    // The allow list the security notes advise is clean.
    std::fs::write(
        dir.join("opencode.json"),
        r#"{"permission": {"bash": {"*": "ask", "git *": "allow", "git push *": "deny"}}}"#,
    )
    .unwrap();
    // A new allow: the project is asked about again.
    trust(&dir);
    let out = run_in(&dir, &["permission", "lint"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("no findings in 3 rules"));
}

/// Both default files in one folder: `opencode.jsonc` is read after
/// `opencode.json` (opencode 1.18.33), its keys merged over the other's.
#[test]
fn default_files_are_deep_merged_jsonc_last() {
    let dir = scratch("both");
    std::fs::write(
        dir.join("opencode.jsonc"),
        r#"{"permission": {"bash": {"*": "deny"}, "edit": "ask"}} // jsonc"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("opencode.json"),
        r#"{"permission": {"webfetch": "allow", "bash": {"git *": "allow"}}}"#,
    )
    .unwrap();
    trust(&dir);
    let out = run_in(&dir, &["permission", "rules"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v,
        json!([
            rule("webfetch", "*", "allow"),
            rule("bash", "git *", "allow"),
            rule("bash", "*", "deny"),
            rule("edit", "*", "ask"),
        ])
    );
    let out = run_in(&dir, &["permission", "check", "--json", "bash", "ls"], "");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["decided_by"]["layer"],
        "user:opencode.json+opencode.jsonc"
    );
}

/// Whether a wildcard case is one where the SDK deliberately differs from
/// opencode: `?` matches one Unicode scalar value here, one UTF-16 code
/// unit there, so inputs with astral characters (emoji) answer differently
/// (documented in agentgate_permission::wildcard and docs/).
fn astral_question_mark(case: &Value) -> bool {
    let input = case["input"].as_str().unwrap_or_default();
    let pattern = case["pattern"].as_str().unwrap_or_default();
    pattern.contains('?') && input.chars().any(|c| u32::from(c) > 0xFFFF)
}

fn vectors_path() -> PathBuf {
    match std::env::var_os("OPENCODE_VECTORS") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../agentgate-permission/tests/data/opencode-vectors.json"),
    }
}

fn with_home(value: &Value, home: &str) -> Value {
    match value {
        // `{HOME}` is the placeholder; `${HOME}` is literal text in a pattern.
        Value::String(s) => Value::String(
            s.replace("${HOME}", "\u{0}")
                .replace("{HOME}", home)
                .replace('\u{0}', "${HOME}"),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| with_home(v, home)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), with_home(v, home)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn conformance_vectors_through_eval() {
    let text = std::fs::read_to_string(vectors_path()).unwrap();
    let vectors: Value = serde_json::from_str(&text).unwrap();
    let home = "/home/vector-user";
    let mut requests = Vec::new();
    let mut expected = Vec::new();
    let mut deviations = 0;
    for case in vectors["cases"].as_array().unwrap() {
        let (request, expect) = match case["kind"].as_str().unwrap() {
            "wildcard" => {
                if astral_question_mark(case) {
                    deviations += 1;
                    continue;
                }
                (
                    json!({"op": "match", "input": case["input"], "pattern": case["pattern"]}),
                    case["expect"].clone(),
                )
            }
            "evaluate" => (
                json!({"op": "evaluate", "permission": case["permission"], "pattern": case["pattern"], "rulesets": case["rulesets"]}),
                case["expect"].clone(),
            ),
            "from_config" => (
                json!({"op": "from_config", "config": case["config"], "home": home}),
                with_home(&case["expect"], home),
            ),
            "merge" => (
                json!({"op": "merge", "rulesets": case["rulesets"]}),
                case["expect"].clone(),
            ),
            "disabled" => {
                let mut names: Vec<String> = case["expect"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                names.sort();
                names.dedup();
                (
                    json!({"op": "disabled", "tools": case["tools"], "ruleset": case["ruleset"]}),
                    json!(names),
                )
            }
            "arity" => (
                json!({"op": "arity", "tokens": case["tokens"]}),
                case["expect_prefix"].clone(),
            ),
            "subagent_permission" => (
                json!({"op": "subagent_permission", "parent": case["parent_session_permission"], "subagent": case["subagent_permission"]}),
                case["expect"].clone(),
            ),
            _ => continue,
        };
        let mut request = request;
        request["id"] = json!(requests.len());
        requests.push(request);
        expected.push((case.clone(), expect));
    }
    assert!(requests.len() > 150, "only {} cases", requests.len());
    let (answers, code) = eval(&requests);
    assert_eq!(answers.len(), requests.len());
    let mut failed = Vec::new();
    for (i, (answer, (case, expect))) in answers.iter().zip(&expected).enumerate() {
        assert_eq!(answer["id"], json!(i));
        let got = match case["kind"].as_str() {
            Some("evaluate") => answer["result"]["action"].clone(),
            _ => answer["result"].clone(),
        };
        if &got != expect {
            failed.push(format!("{case}\n  expected {expect}\n  got      {answer}"));
        }
    }
    println!(
        "conformance[agent permission eval]: {} passed, {} failed, {deviations} deviations",
        answers.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(code, 0);
}
