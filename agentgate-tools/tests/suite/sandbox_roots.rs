//! The sandbox's roots cannot be moved by a command: the
//! writable set is fixed on a project's first call, the spill directory is
//! never writable and the agent writes it without following links, and
//! approvals given automatically never widen the sandbox — only a person's
//! explicit grant does.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::{
    Tool, ToolContext, ToolOutput,
    truncation::{TruncationLimits, Truncator},
};
use agentgate_permission::{AllowAll, Approver, PermissionGate, Reply};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{BashTool, Sandbox, SandboxMode, SandboxPolicy};
use serde_json::json;

/// Folders `workspace-write` always leaves writable.
fn in_temp(path: &Path) -> bool {
    let mut roots: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .collect();
    roots.push(std::env::temp_dir());
    roots
        .into_iter()
        .map(|r| r.canonicalize().unwrap_or(r))
        .any(|r| path.starts_with(r))
}

/// Set, in the copy of this binary that runs as `nobody`, to a directory
/// outside the temporary folders that nobody owns.
const OUTSIDE_ROOT: &str = "AGENT_SANDBOX_ROOTS_OUTSIDE";

/// A fresh directory outside every temporary folder: cargo's per-target
/// temporary directory, or `$HOME/.cache` when that is under `/tmp`.
fn outside_dir(name: &str) -> PathBuf {
    let target = std::env::var_os(OUTSIDE_ROOT)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    std::fs::create_dir_all(&target).unwrap();
    let mut root = target.canonicalize().unwrap();
    if in_temp(&root) {
        let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
        root = home.join(".cache").join("agent-sdk-sandbox-tests");
        std::fs::create_dir_all(&root).unwrap();
        root = root.canonicalize().unwrap();
    }
    agentgate_testing::scratch_dir_in(&root, &format!("roots-{name}"))
}

/// A fresh directory under the temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("roots-{name}"))
}

fn bash(policy: SandboxPolicy) -> BashTool {
    let sandbox = Sandbox::new(policy);
    assert!(
        !sandbox.status().is_degraded(),
        "the sandbox is not fully enforced here: {}",
        sandbox.status().summary()
    );
    BashTool::new()
        .with_kill_grace(Duration::from_millis(300))
        .with_sandbox(sandbox)
}

fn context(directory: &Path, worktree: &Path, approver: Arc<dyn Approver>) -> ToolContext {
    let permissions = PermissionGate::new();
    permissions.set_approver(approver);
    ToolContext::new("ses_roots", "msg_1", "call_1", permissions)
        .with_directories(directory.to_path_buf(), worktree.to_path_buf())
}

async fn run(tool: &BashTool, ctx: &ToolContext, command: &str) -> ToolOutput {
    tool.execute(json!({"command": command, "timeout": 20_000}), ctx)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_project_path_swapped_for_a_link_does_not_move_the_writable_set() {
    // The project directory is a folder of the worktree, so a command may
    // replace it; the fake home stands for any folder outside.
    let worktree = outside_dir("swap-worktree");
    let project = worktree.join("app");
    std::fs::create_dir_all(&project).unwrap();
    let home = outside_dir("swap-home");
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let ctx = context(&project, &worktree, Arc::new(AllowAll));

    run(&tool, &ctx, "echo first > inside.txt").await;
    assert!(
        project.join("inside.txt").exists(),
        "the project is writable"
    );
    run(
        &tool,
        &ctx,
        &format!(
            "cd {w} && mv app app.old && ln -s {h} app",
            w = worktree.display(),
            h = home.display()
        ),
    )
    .await;
    assert!(
        std::fs::symlink_metadata(&project)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the first command replaced the project with a link"
    );
    // The second call runs "in the project", which now leads to the home.
    let out = run(&tool, &ctx, "echo pwned > pwned.txt").await;
    assert!(
        !home.join("pwned.txt").exists(),
        "the link moved the writable set: {}",
        out.output
    );
    let _ = std::fs::remove_dir_all(&worktree);
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn a_project_under_the_temp_directory_stays_confined_to_itself() {
    let project = temp_dir("temp-project");
    let home = outside_dir("temp-home");
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let ctx = context(&project, &project, Arc::new(AllowAll));
    run(&tool, &ctx, "echo ok > a.txt").await;
    assert!(project.join("a.txt").exists());
    run(
        &tool,
        &ctx,
        &format!(
            "mv {p} {p}.old && ln -s {h} {p}",
            p = project.display(),
            h = home.display()
        ),
    )
    .await;
    run(&tool, &ctx, "echo pwned > pwned.txt").await;
    assert!(!home.join("pwned.txt").exists(), "the link moved the root");
    let _ = std::fs::remove_file(&project);
    let _ = std::fs::remove_dir_all(project.with_extension("old"));
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn the_spill_directory_swapped_for_a_link_is_neither_writable_nor_followed() {
    let project = outside_dir("spill-project");
    let home = outside_dir("spill-home");
    // A spill directory under the (writable) temporary directory, the
    // worst place a host could choose.
    let spill = temp_dir("spill").join("tool-output");
    let truncator = Truncator {
        limits: TruncationLimits {
            max_lines: 5,
            max_bytes: 50_000,
        },
        spill_dir: spill.clone(),
    };
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite)).with_truncator(truncator);
    let ctx = context(&project, &project, Arc::new(AllowAll));

    let out = run(&tool, &ctx, "seq 1 100").await;
    assert!(
        out.output.contains("Full output saved to:"),
        "{}",
        out.output
    );
    assert!(spill.is_dir());
    run(
        &tool,
        &ctx,
        &format!(
            "rm -rf {s} && ln -s {h} {s}",
            s = spill.display(),
            h = home.display()
        ),
    )
    .await;
    // A command writing through the link, and the agent spilling through
    // it: neither lands in the home.
    let out = run(
        &tool,
        &ctx,
        &format!("echo pwned > {}/pwned.txt; seq 1 100", spill.display()),
    )
    .await;
    assert!(!home.join("pwned.txt").exists(), "{}", out.output);
    assert!(
        out.output.contains("could not be saved"),
        "the spill refused the link: {}",
        out.output
    );
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "nothing was written in the home"
    );
    let _ = std::fs::remove_dir_all(&project);
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_file(&spill);
}

/// Answers `grant` to the requests that offer it, `once` to the rest: a
/// person choosing "grant this directory to the sandbox".
fn grants() -> RecordingApprover {
    RecordingApprover::answering(|request| {
        if request.offers_grant() {
            Reply::Grant
        } else {
            Reply::Once
        }
    })
}

#[tokio::test]
async fn auto_approval_of_an_outside_path_never_opens_it_a_grant_does() {
    let project = outside_dir("auto-project");
    let outside = outside_dir("auto-outside");
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let target = outside.join("f.txt");
    let command = format!("echo x > {}", target.display());

    // `agent run --auto` answers every ask with `once` (AllowAll).
    let auto = context(&project, &project, Arc::new(AllowAll));
    let out = run(&tool, &auto, &command).await;
    assert!(
        !target.exists(),
        "--auto widened the sandbox: {}",
        out.output
    );
    assert!(
        out.output.contains("blocked by the sandbox"),
        "{}",
        out.output
    );

    // A rule that allows the folder does not widen it either.
    let ruled = auto
        .clone()
        .with_ruleset(Arc::new(agentgate_permission::Ruleset::from(vec![
            agentgate_permission::Rule::new("*", "*", agentgate_permission::Action::Allow),
        ])));
    run(&tool, &ruled, &command).await;
    assert!(!target.exists(), "an allow rule widened the sandbox");

    // A person's explicit grant opens the folder for that call only.
    let person = context(&project, &project, Arc::new(grants()));
    run(&tool, &person, &command).await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
    std::fs::remove_file(&target).unwrap();
    run(&tool, &auto, &command).await;
    assert!(!target.exists(), "the grant outlived its call");
    let _ = std::fs::remove_dir_all(&project);
    let _ = std::fs::remove_dir_all(&outside);
}

#[tokio::test]
async fn file_tools_ask_protected_path_even_when_everything_is_allowed() {
    use agentgate_tools::{EditTool, WriteTool};
    let project = outside_dir("protected");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/config"), "[core]\n").unwrap();
    let allow_all = Arc::new(agentgate_permission::Ruleset::from(vec![
        agentgate_permission::Rule::new("*", "*", agentgate_permission::Action::Allow),
    ]));
    let rejecter = Arc::new(RecordingApprover::replying(Reply::reject()));
    let ctx = context(&project, &project, rejecter.clone()).with_ruleset(allow_all.clone());

    for (tool, args) in [
        (
            Box::new(WriteTool) as Box<dyn Tool>,
            json!({"filePath": "opencode.json", "content": "{\"mcp\":{}}"}),
        ),
        (
            Box::new(WriteTool),
            json!({"filePath": ".opencode/plugin/x.ts", "content": "x"}),
        ),
        (
            Box::new(EditTool),
            json!({"filePath": ".git/config", "oldString": "[core]", "newString": "[core]\n\tfsmonitor = evil"}),
        ),
    ] {
        assert!(tool.execute(args.clone(), &ctx).await.is_err(), "{args}");
    }
    let seen = rejecter.summaries();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen.iter().all(|s| s.starts_with("protected_path ")),
        "{seen:?}"
    );
    assert!(!project.join("opencode.json").exists());
    assert!(!project.join(".opencode").exists());
    assert_eq!(
        std::fs::read_to_string(project.join(".git/config")).unwrap(),
        "[core]\n"
    );

    // An ordinary file is not asked; a rule naming protected_path allows
    // the protected ones knowingly.
    let ctx_ok = ctx.clone();
    WriteTool
        .execute(json!({"filePath": "src.txt", "content": "x"}), &ctx_ok)
        .await
        .unwrap();
    assert_eq!(rejecter.summaries().len(), 3);
    let mut rules = allow_all.0.clone();
    rules.push(agentgate_permission::Rule::new(
        "protected_path",
        "*",
        agentgate_permission::Action::Allow,
    ));
    let knowing = ctx.with_ruleset(Arc::new(agentgate_permission::Ruleset(rules)));
    WriteTool
        .execute(
            json!({"filePath": "opencode.json", "content": "{}"}),
            &knowing,
        )
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(project.join("opencode.json")).unwrap(),
        "{}"
    );
    let _ = std::fs::remove_dir_all(&project);
}

/// What the next run trusts is read-only to commands: `.git` (its config
/// and hooks run on the user's next `git status`), `opencode.json` and
/// `.opencode` (an MCP command started on the next `agent run`). They stay
/// readable, and a command can neither replace nor rename them.
#[tokio::test]
async fn what_a_later_run_trusts_is_read_only_to_commands() {
    let project = outside_dir("protected");
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::write(project.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(project.join("opencode.json"), "{}\n").unwrap();
    std::fs::create_dir_all(project.join(".opencode/agent")).unwrap();
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    assert!(
        tool.sandbox()
            .status()
            .summary()
            .contains("protected paths"),
        "{}",
        tool.sandbox().status().summary()
    );
    let ctx = context(&project, &project, Arc::new(AllowAll));
    for attack in [
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
        "echo 'touch pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "echo '{\"mcp\":{\"x\":{\"type\":\"local\",\"command\":[\"touch\",\"pwned\"]}}}' > opencode.json",
        "echo x > .opencode/agent/evil.md",
        "mv .git .git.old && mkdir .git && echo evil > .git/config",
        "mv opencode.json o.json && echo '{}' > opencode.json",
        "rm -rf .opencode",
    ] {
        run(&tool, &ctx, attack).await;
    }
    assert_eq!(
        std::fs::read_to_string(project.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!project.join(".git/hooks/pre-commit").exists());
    assert!(!project.join(".git.old").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("opencode.json")).unwrap(),
        "{}\n"
    );
    assert!(!project.join("o.json").exists());
    assert!(project.join(".opencode/agent").is_dir());
    assert!(!project.join(".opencode/agent/evil.md").exists());
    // Still readable, and the rest of the project still writable.
    let out = run(&tool, &ctx, "cat .git/HEAD && echo ok > build.log").await;
    assert!(
        out.output.contains("ref: refs/heads/main"),
        "{}",
        out.output
    );
    assert!(project.join("build.log").exists());
    let _ = std::fs::remove_dir_all(&project);
}

/// A protected path the `writable` list names is opened knowingly: with
/// `"writable": [".git"]` commands can commit; the others stay read-only.
#[tokio::test]
async fn a_protected_path_named_writable_is_opened_knowingly() {
    let project = outside_dir("protected-opened");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join("opencode.json"), "{}\n").unwrap();
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_writable(".git"));
    let ctx = context(&project, &project, Arc::new(AllowAll));
    run(
        &tool,
        &ctx,
        "echo x > .git/index.lock; echo y > opencode.json",
    )
    .await;
    assert!(project.join(".git/index.lock").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("opencode.json")).unwrap(),
        "{}\n"
    );
    let _ = std::fs::remove_dir_all(&project);
}

/// A protected name absent when the command starts has nothing to mount
/// over, and a link is mounted where it leads: a command could create
/// `opencode.json`, `.opencode/`, `.git/` (with a hook) or replace a
/// linked `opencode.json`. Each such change is asked as `protected_path`
/// once the command (and everything it started) has ended; what is not
/// allowed is moved aside, nothing is deleted, and the link comes back.
#[tokio::test]
async fn a_protected_name_a_command_creates_is_asked_and_undone_unless_allowed() {
    let project = outside_dir("protected-created");
    std::fs::write(project.join("shared.json"), "{}\n").unwrap();
    let linked = project.join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink("../shared.json", linked.join("opencode.json")).unwrap();
    let tool = bash(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let rejecter = Arc::new(RecordingApprover::replying(Reply::reject()));
    // Everything allowed by the rules, as the built-in agents do: the
    // protected_path ask is judged by rules that name it, and none does.
    let allow_all = Arc::new(agentgate_permission::Ruleset::from(vec![
        agentgate_permission::Rule::new("*", "*", agentgate_permission::Action::Allow),
    ]));
    let ctx = context(&project, &project, rejecter.clone()).with_ruleset(allow_all.clone());
    let attack = "echo '{\"mcp\":{\"x\":{\"type\":\"local\",\"command\":[\"touch\",\"pwned\"]}}}' > opencode.json; \
                  mkdir -p .opencode/agent && echo evil > .opencode/agent/x.md; \
                  mkdir -p .git/hooks && echo 'touch pwned' > .git/hooks/pre-commit; \
                  (while kill -0 $$ 2>/dev/null; do :; done; echo late > opencode.jsonc; sleep 0.2; echo later > opencode.jsonc) & \
                  echo built > build.log";
    let refused = tool
        .execute(json!({"command": attack, "timeout": 20_000}), &ctx)
        .await;
    assert!(
        refused.is_err(),
        "a rejected protected_path ask fails the call"
    );
    let seen = rejecter.summaries();
    for name in ["opencode.json", ".opencode", ".git"] {
        let path = project.join(name).display().to_string();
        assert!(
            seen.iter()
                .any(|s| s.starts_with("protected_path ") && s.contains(&path)),
            "{name} not asked: {seen:?}"
        );
        assert!(!project.join(name).exists(), "{name} was kept");
        assert!(
            project.join(format!("{name}.rejected-1")).exists(),
            "{name} not moved aside"
        );
    }
    // The background writer races the shell's exit: what it wrote before
    // the call ended was asked and moved aside like the rest, and it ended
    // with the call (its PID namespace), so nothing comes after the check.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!project.join("opencode.jsonc").exists());
    assert!(
        project.join("build.log").exists(),
        "the rest of the project is writable"
    );

    // A replaced link comes back; the file written in its place is aside.
    let sub = context(&linked, &linked, rejecter.clone()).with_ruleset(allow_all.clone());
    let _ = tool
        .execute(
            json!({"command": "rm opencode.json && echo '{\"mcp\":{}}' > opencode.json", "timeout": 20_000}),
            &sub,
        )
        .await;
    assert_eq!(
        std::fs::read_link(linked.join("opencode.json")).unwrap(),
        Path::new("../shared.json")
    );
    assert_eq!(
        std::fs::read_to_string(linked.join("opencode.json.rejected-1")).unwrap(),
        "{\"mcp\":{}}\n"
    );

    // Every folder from the directory up to the worktree is read by the
    // next run's configuration loader: a name created in between is too.
    let deep = project.join("app/sub");
    std::fs::create_dir_all(&deep).unwrap();
    let nested = context(&deep, &project, rejecter.clone()).with_ruleset(allow_all.clone());
    let _ = tool
        .execute(
            json!({"command": "echo '{}' > ../opencode.jsonc", "timeout": 20_000}),
            &nested,
        )
        .await;
    assert!(!project.join("app/opencode.jsonc").exists());
    assert!(project.join("app/opencode.jsonc.rejected-1").exists());

    // An automatic approval (`--auto` answers `once`) keeps nothing.
    let auto = context(&project, &project, Arc::new(AllowAll)).with_ruleset(allow_all.clone());
    let out = run(
        &tool,
        &auto,
        "mkdir -p .opencode/command && echo x > .opencode/command/x.md",
    )
    .await;
    assert!(out.output.contains("does not keep it"), "{}", out.output);
    assert!(!project.join(".opencode").exists());
    assert!(project.join(".opencode.rejected-2/command/x.md").exists());

    // A rule naming protected_path allows it knowingly (`git init`).
    let mut rules = allow_all.0.clone();
    rules.push(agentgate_permission::Rule::new(
        "protected_path",
        "*",
        agentgate_permission::Action::Allow,
    ));
    let knowing = ctx.with_ruleset(Arc::new(agentgate_permission::Ruleset(rules)));
    let out = run(&tool, &knowing, "mkdir .git && echo '[core]' > .git/config").await;
    assert!(out.output.contains("allowed and kept"), "{}", out.output);
    assert!(project.join(".git/config").exists());
    let _ = std::fs::remove_dir_all(&project);
}

/// CI runs as root: every test of this file runs again as `nobody`, in a
/// copy of this binary, so the swaps, protected paths and grants hold for
/// an unprivileged user too (its sandbox is built without any privilege).
#[tokio::test]
async fn the_roots_hold_for_an_unprivileged_user_too() {
    use super::support::{is_root, rerun_as_nobody, temp_dir};
    if !is_root() || std::env::var_os(OUTSIDE_ROOT).is_some() {
        // Already unprivileged: the other tests ran as this user.
        return;
    }
    let outside = outside_dir("nobody-outside");
    let home = temp_dir("sandbox-roots", "nobody-home");
    std::os::unix::fs::chown(
        &outside,
        Some(super::support::NOBODY),
        Some(super::support::NOBODY),
    )
    .unwrap();
    let output = rerun_as_nobody(
        &["suite::sandbox_roots::", "--test-threads=1"],
        &[(OUTSIDE_ROOT, outside.display().to_string())],
        &home,
    );
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&outside);
    let Some(output) = output else {
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "as nobody:\n{stdout}\n{stderr}");
    let passed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("test result: ok. "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    assert!(
        passed >= 8,
        "the tests did not run as nobody:\n{stdout}\n{stderr}"
    );
}

/// Set in the copy of this binary whose `$HOME` is a git work tree.
const HOME_INNER: &str = "AGENT_SANDBOX_ROOTS_HOME_INNER";

/// When `$HOME` is itself a git work tree (dotfiles under git), a project
/// inside it has `$HOME` as its worktree; the sandbox's root is the project
/// directory, never `$HOME` (its `.bashrc` would run in every later shell).
/// The home must be the process's own `HOME`, so this runs in a copy of
/// the test binary started with one.
#[tokio::test]
async fn a_home_that_is_a_work_tree_stays_read_only_the_project_is_writable() {
    if std::env::var_os(HOME_INNER).is_some() || std::env::var_os(OUTSIDE_ROOT).is_some() {
        return;
    }
    let home = outside_dir("home-worktree");
    std::fs::create_dir_all(home.join(".git")).unwrap();
    std::fs::create_dir_all(home.join("code/app")).unwrap();
    let output = super::support::rerun(
        &[
            "--ignored",
            "--exact",
            "suite::sandbox_roots::inner_home_is_a_work_tree",
            "--test-threads=1",
        ],
        &[
            (HOME_INNER, "1".to_string()),
            ("TMPDIR", "/tmp".to_string()),
        ],
        &home,
        false,
    )
    .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the inner test did not run:\n{stdout}\n{stderr}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// The inner half of the test above, with `$HOME` the work tree.
#[tokio::test]
#[ignore = "run by a_home_that_is_a_work_tree_stays_read_only_the_project_is_writable"]
async fn inner_home_is_a_work_tree() {
    assert!(
        std::env::var_os(HOME_INNER).is_some(),
        "run by the outer test"
    );
    let home = PathBuf::from(std::env::var_os("HOME").unwrap())
        .canonicalize()
        .unwrap();
    assert!(!in_temp(&home), "{}", home.display());
    let project = home.join("code/app");
    let tool = bash(SandboxPolicy::default());
    let ctx = context(&project, &home, Arc::new(AllowAll));
    let out = run(
        &tool,
        &ctx,
        "echo x >> \"$HOME/.bashrc\"; echo y > \"$HOME/code/other.txt\"; echo z > ok.txt",
    )
    .await;
    assert!(!home.join(".bashrc").exists(), "{}", out.output);
    assert!(!home.join("code/other.txt").exists(), "{}", out.output);
    assert!(project.join("ok.txt").exists(), "{}", out.output);
}
