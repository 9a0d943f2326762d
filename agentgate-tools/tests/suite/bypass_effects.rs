//! For each class of the bypass corpus, the tools run for real against a
//! temporary project, under the corpus's host config
//! and an approver that rejects everything, and the forbidden effect does
//! not happen (files unchanged, nothing outside written, no secret in the
//! tool result).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{
    Approver, PermissionConfig, PermissionGate, RejectAll, Reply, Ruleset, from_config_with_home,
};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ListTool, ReadTool, WebFetchTool, WriteTool,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "s3cr3t-value-4711";
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bypass-corpus.json");

/// A project with a victim file `x`, a `victim` file, a `.env` holding the
/// secret, and an outside folder `out/` holding `s` (the secret too).
struct World {
    root: PathBuf,
    project: PathBuf,
    out: PathBuf,
}

impl World {
    fn new(name: &str) -> World {
        let root = agentgate_testing::scratch_dir(&format!("agentgate-tools-bypass-{name}"));
        std::fs::create_dir_all(root.join("proj/sub")).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        let project = root.join("proj");
        let out = root.join("out");
        std::fs::write(project.join("x"), "victim x\n").unwrap();
        std::fs::write(project.join("victim"), "victim\n").unwrap();
        std::fs::write(project.join(".env"), format!("TOKEN={SECRET}\n")).unwrap();
        std::fs::write(project.join("sub/prod.env"), format!("TOKEN={SECRET}\n")).unwrap();
        std::fs::write(project.join("README.md"), "readme\n").unwrap();
        std::fs::write(out.join("s"), format!("{SECRET}\n")).unwrap();
        World { root, project, out }
    }

    fn context(&self, config: &Value, approver: Arc<dyn Approver>) -> ToolContext {
        let config = PermissionConfig::from_value(config, "permission").unwrap();
        let rules: Ruleset = from_config_with_home(&config, "/home/u");
        let permissions = PermissionGate::new();
        permissions.set_approver(approver);
        ToolContext::new("ses_1", "msg_1", "call_1", permissions)
            .with_directories(self.project.clone(), self.project.clone())
            .with_ruleset(Arc::new(rules))
    }

    /// Everything under the root, with contents, to compare before/after.
    fn snapshot(&self) -> Vec<(PathBuf, Option<String>)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, Option<String>)>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    out.push((path.clone(), None));
                    walk(&path, out);
                } else if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&path).unwrap();
                    out.push((path, Some(format!("-> {}", target.display()))));
                } else {
                    out.push((path.clone(), std::fs::read_to_string(&path).ok()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The host config, with the outside folder denied for reading
/// through rules as well.
fn host() -> Value {
    json!({
        "bash": {"*": "allow", "rm *": "deny"},
        "read": {"*": "allow", "*.env": "deny"},
        "edit": {"*": "allow", "*.env": "deny"},
        "external_directory": "ask",
        "grep": "allow",
        "glob": "allow",
        "list": "allow",
        "webfetch": {"*": "allow", "http://localhost*": "deny"}
    })
}

fn corpus() -> Value {
    serde_json::from_str(&std::fs::read_to_string(CORPUS).unwrap()).unwrap()
}

/// Runs `tool` with `input`; the result text (output or error).
async fn run(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> Result<String, String> {
    tool.execute(input, ctx)
        .await
        .map(|out| out.output)
        .map_err(|error| error.to_string())
}

/// The outside folder's path in a command, in place of `/out`.
fn localise(command: &str, world: &World) -> String {
    command.replace("/out", &world.out.display().to_string())
}

/// Classes 1-4: every bash case of the corpus that is not allowed runs
/// through the real bash tool with a rejecting approver, in a project
/// where `x` and `victim` exist: nothing changes anywhere.
#[tokio::test]
async fn bash_cases_have_no_effect_when_rejected() {
    let corpus = corpus();
    let mut ran = 0;
    for case in corpus["cases"].as_array().unwrap() {
        let (Some("bash"), Some(command), Some(decision)) = (
            case["tool"].as_str(),
            case["args"]["command"].as_str(),
            case["decision"].as_str(),
        ) else {
            continue;
        };
        if decision == "allow" {
            continue;
        }
        let world = World::new("bash");
        let mut config = host();
        if let Some(extra) = case.get("permission").and_then(Value::as_object) {
            for (key, value) in extra {
                config[key] = value.clone();
            }
        }
        let ctx = world.context(&config, Arc::new(RejectAll::new(std::io::sink())));
        let before = world.snapshot();
        let command = localise(command, &world);
        let result = run(
            &BashTool::new(),
            json!({"command": command, "timeout": 5000}),
            &ctx,
        )
        .await;
        assert!(result.is_err(), "{command:?} ran: {result:?}");
        let text = result.unwrap_err();
        assert!(!text.contains(SECRET), "{command:?} leaked: {text}");
        assert_eq!(world.snapshot(), before, "{command:?} changed files");
        ran += 1;
    }
    assert!(ran >= 80, "only {ran} bash cases ran");
}

/// The harness sees effects: the same tool with an approving answer and
/// no deny rule does delete the victim.
#[tokio::test]
async fn control_effects_are_observable() {
    let world = World::new("control");
    let ctx = world.context(
        &json!({"bash": "allow"}),
        Arc::new(RecordingApprover::replying(Reply::Once)),
    );
    run(
        &BashTool::new(),
        json!({"command": "env -i /bin/rm -f x"}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(!world.project.join("x").exists());
}

/// Class 4 in the file tools: `/..` folding, links inside the project
/// that lead outside or to `.env`.
#[tokio::test]
async fn file_tools_check_where_paths_lead() {
    let world = World::new("files");
    std::os::unix::fs::symlink(world.out.join("s"), world.project.join("lnk")).unwrap();
    std::os::unix::fs::symlink(world.project.join(".env"), world.project.join("envlink")).unwrap();
    std::os::unix::fs::symlink(&world.out, world.project.join("outdir")).unwrap();
    let ctx = world.context(&host(), Arc::new(RejectAll::new(std::io::sink())));
    let before = world.snapshot();
    let rooted = format!("/..{}", world.out.join("s").display());
    for input in [
        json!({"filePath": rooted}),
        json!({"filePath": "lnk"}),
        json!({"filePath": "envlink"}),
        json!({"filePath": "outdir/s"}),
    ] {
        let result = run(&ReadTool::default(), input.clone(), &ctx).await;
        let text = result.expect_err(&format!("read {input} succeeded"));
        assert!(!text.contains(SECRET), "read {input} leaked");
    }
    for input in [
        json!({"filePath": "lnk", "content": "pwned"}),
        json!({"filePath": "outdir/new", "content": "pwned"}),
        json!({"filePath": "envlink", "content": "pwned"}),
    ] {
        assert!(
            run(&WriteTool, input.clone(), &ctx).await.is_err(),
            "{input}"
        );
    }
    let edit = json!({"filePath": "envlink", "oldString": "TOKEN", "newString": "X"});
    assert!(run(&EditTool, edit, &ctx).await.is_err());
    assert!(
        run(&ListTool::default(), json!({"path": "outdir"}), &ctx)
            .await
            .is_err()
    );
    assert!(
        run(
            &GrepTool::default(),
            json!({"pattern": "s3", "path": "outdir"}),
            &ctx
        )
        .await
        .is_err()
    );
    assert!(
        run(
            &GlobTool::default(),
            json!({"pattern": "*", "path": "outdir"}),
            &ctx
        )
        .await
        .is_err()
    );
    assert_eq!(world.snapshot(), before);
}

/// Class 5: grep and glob show nothing of files the read rules deny; edit
/// answers a denied file the same way whether or not oldString is in it.
#[tokio::test]
async fn searches_and_edits_do_not_reveal_denied_files() {
    let world = World::new("search");
    let ctx = world.context(&host(), Arc::new(RejectAll::new(std::io::sink())));
    let before = world.snapshot();
    let grep = run(
        &GrepTool::default(),
        json!({"pattern": "TOKEN|s3cr3t"}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(!grep.contains(SECRET), "{grep}");
    assert!(!grep.contains(".env"), "{grep}");
    assert!(grep.contains("were not searched"), "{grep}");
    // The answer does not depend on what the denied files hold.
    let matching = run(&GrepTool::default(), json!({"pattern": "s3cr3t"}), &ctx)
        .await
        .unwrap();
    let missing = run(
        &GrepTool::default(),
        json!({"pattern": "zz-absent-zz"}),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(matching, missing);
    let glob = run(&GlobTool::default(), json!({"pattern": "*.env"}), &ctx)
        .await
        .unwrap();
    assert!(
        !glob.contains(".env\n") && !glob.ends_with(".env"),
        "{glob}"
    );
    let present =
        json!({"filePath": ".env", "oldString": format!("TOKEN={SECRET}"), "newString": "X"});
    let absent = json!({"filePath": ".env", "oldString": "not in the file", "newString": "X"});
    let a = run(&EditTool, present, &ctx).await.unwrap_err();
    let b = run(&EditTool, absent, &ctx).await.unwrap_err();
    assert_eq!(a, b, "the answer must not depend on the file's content");
    assert!(!a.contains("not found"), "{a}");
    assert_eq!(world.snapshot(), before);
}

/// Class 7: "always" on a command with glob characters approves nothing
/// wider than the command, so a later denied command stays denied.
#[tokio::test]
async fn always_approvals_do_not_widen() {
    let world = World::new("always");
    let config = json!({"bash": {"*": "ask", "rm *": "deny"}});
    let ctx = world.context(
        &config,
        Arc::new(RecordingApprover::replying(Reply::Always)),
    );
    let _ = run(&BashTool::new(), json!({"command": "echo '*' '*'"}), &ctx).await;
    let approved = ctx.permissions().approved();
    for rule in &approved.0 {
        let prefix = rule.pattern.strip_suffix(" *").unwrap_or(&rule.pattern);
        assert!(!prefix.contains(['*', '?']), "approved {rule:?}");
    }
    ctx.permissions()
        .set_approver(Arc::new(RejectAll::new(std::io::sink())));
    let result = run(
        &BashTool::new(),
        json!({"command": "echo a b && rm -f x"}),
        &ctx,
    )
    .await;
    assert!(result.is_err());
    assert!(world.project.join("x").exists());
}

/// Class 8: a redirect to a denied URL is not followed, and other
/// spellings of a denied host are denied.
#[tokio::test]
async fn webfetch_redirects_and_host_spellings_are_checked() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(method("GET"))
        .and(path("/start"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("http://localhost:{port}/secret").as_str(),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/secret"))
        .respond_with(ResponseTemplate::new(200).set_body_string(SECRET))
        .expect(0)
        .mount(&server)
        .await;
    let world = World::new("web");
    let ctx = world.context(&host(), Arc::new(RejectAll::new(std::io::sink())));
    let tool = WebFetchTool::new().unwrap();
    let start = format!("http://127.0.0.1:{port}/start");
    let result = run(&tool, json!({"url": start}), &ctx).await;
    assert!(result.is_err(), "{result:?}");
    for url in [
        format!("http://LOCALHOST:{port}/secret"),
        format!("http://localhost.:{port}/secret"),
        format!("http://user@localhost:{port}/secret"),
    ] {
        let result = run(&tool, json!({"url": url}), &ctx).await;
        assert!(result.is_err(), "{url}: {result:?}");
    }
    let config = json!({"webfetch": {"*": "allow", "http://127.0.0.1*": "deny"}});
    let ctx = world.context(&config, Arc::new(RejectAll::new(std::io::sink())));
    for url in [
        format!("http://127.1:{port}/secret"),
        format!("http://2130706433:{port}/secret"),
        format!("http://0x7f.0.0.1:{port}/secret"),
    ] {
        let result = run(&tool, json!({"url": url}), &ctx).await;
        assert!(result.is_err(), "{url}: {result:?}");
    }
    server.verify().await;
}

/// Class 9: a link to /dev/zero is refused at once; a huge timeout is
/// capped.
#[tokio::test]
async fn resources_are_bounded() {
    let world = World::new("resources");
    std::os::unix::fs::symlink("/dev/zero", world.project.join("zero")).unwrap();
    let ctx = world.context(
        &json!({"*": "allow"}),
        Arc::new(RejectAll::new(std::io::sink())),
    );
    let started = std::time::Instant::now();
    let text = run(&ReadTool::default(), json!({"filePath": "zero"}), &ctx)
        .await
        .unwrap_err();
    assert!(text.contains("Not a regular file"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let tool = BashTool::new()
        .with_max_timeout(Duration::from_millis(300))
        .with_kill_grace(Duration::from_millis(100));
    let started = std::time::Instant::now();
    let out = run(
        &tool,
        json!({"command": "sleep 20", "timeout": 86_400_000}),
        &ctx,
    )
    .await
    .unwrap();
    assert!(out.contains("exceeding timeout 300 ms"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Classes 1-2: what cannot be seen through is asked as `bash_opaque`
/// even when a rule allows every permission (`"*": "allow"`, as the agent
/// defaults do); only a rule naming `bash_opaque` lets it run.
#[tokio::test]
async fn opaque_lines_are_asked_even_under_allow_everything() {
    let world = World::new("opaque");
    let line = "X=rm; $X -f x";
    let ctx = world.context(
        &json!({"*": "allow"}),
        Arc::new(RejectAll::new(std::io::sink())),
    );
    let result = run(&BashTool::new(), json!({"command": line}), &ctx).await;
    assert!(result.is_err(), "{result:?}");
    assert!(world.project.join("x").exists());
    let ctx = world.context(
        &json!({"*": "allow", "bash_opaque": "allow"}),
        Arc::new(RejectAll::new(std::io::sink())),
    );
    run(&BashTool::new(), json!({"command": line}), &ctx)
        .await
        .unwrap();
    assert!(!world.project.join("x").exists());
}

/// Checking where links lead must not make a project opened through a
/// symlinked folder (`/tmp` on macOS, a linked home) outside of itself.
#[test]
fn a_project_opened_through_a_link_is_inside_itself() {
    let world = World::new("linked-project");
    let linked = world.root.join("linked");
    std::os::unix::fs::symlink(&world.project, &linked).unwrap();
    let read = agentgate_tools::ReadArgs {
        file_path: "README.md".into(),
        offset: None,
        limit: None,
    };
    let requests = ReadTool::default().requests(&read, &linked, &linked);
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].patterns, ["README.md"]);
    let planned =
        agentgate_tools::bash_scan::plan_requests("cat README.md sub/../x", None, &linked, &linked)
            .unwrap();
    assert!(
        planned.iter().all(|r| r.permission == "bash"),
        "{planned:?}"
    );
    // A link inside it that leads out is still seen.
    std::os::unix::fs::symlink(&world.out, world.project.join("outdir")).unwrap();
    let read = agentgate_tools::ReadArgs {
        file_path: "outdir/s".into(),
        offset: None,
        limit: None,
    };
    let requests = ReadTool::default().requests(&read, &linked, &linked);
    assert_eq!(requests[0].permission, "external_directory", "{requests:?}");
}
