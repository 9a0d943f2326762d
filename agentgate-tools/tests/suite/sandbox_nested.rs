//! Protected names below the project directory: a later run started in a
//! subfolder reads that subfolder's `opencode.json`, `opencode.jsonc` and
//! `.opencode`, and `git` there the nearest `.git`. Commands must neither
//! plant them (without an ask the user answers), nor change, remove or move
//! away the ones that exist.
//!
//! The property test drives generated commands — every way of making an
//! entry the test knows (a write, a folder moved or copied in, an archive
//! unpacked, a rename, a symbolic or hard link, `git init`, a flood of
//! events around it, a background writer)
//! at generated depths, and attacks on the entries that exist (writes,
//! removals, renames of a folder above them) — and checks the file system
//! itself after each: every protected entry below the project is one that
//! was there before, unchanged and in place. Every ask is refused.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{Action, PermissionGate, Reply, Rule, Ruleset};
use agentgate_testing::RecordingApprover;
use agentgate_tools::{BashTool, Guard, PROTECTED_NAMES, Sandbox, SandboxMode, SandboxPolicy};
use serde_json::json;

/// A fresh project outside the temporary folders (cargo's per-target
/// temporary directory), so only the project and the temporary folders
/// are writable, as for a real project.
fn project(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    let base = base.canonicalize().unwrap();
    agentgate_testing::scratch_dir_in(&base, &format!("nested-{name}"))
}

fn tool() -> Option<BashTool> {
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    // The other sandbox tests require the full sandbox too: CI has it.
    assert!(
        matches!(sandbox.status().protected_paths, Guard::Enforced { .. }),
        "protected paths are not enforced here: {}",
        sandbox.status().summary()
    );
    Some(
        BashTool::new()
            .with_kill_grace(Duration::from_millis(300))
            .with_sandbox(sandbox),
    )
}

/// Everything allowed by the rules, as the built-in agents do; the
/// `protected_path` asks go to `approver` (none of these rules names it).
fn context(project: &Path, approver: Arc<RecordingApprover>) -> ToolContext {
    let permissions = PermissionGate::new();
    permissions.set_approver(approver);
    ToolContext::new("ses_nested", "msg_1", "call_1", permissions)
        .with_directories(project.to_path_buf(), project.to_path_buf())
        .with_ruleset(Arc::new(Ruleset::from(vec![Rule::new(
            "*",
            "*",
            Action::Allow,
        )])))
}

/// Every protected entry at any depth below `root` (not entered: an
/// entry is one thing), with what it holds: a file's bytes, a link's
/// target, a folder's whole tree.
fn protected_entries(root: &Path) -> BTreeMap<PathBuf, String> {
    fn digest(path: &Path, out: &mut String) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            out.push_str(&format!("link {:?}\n", std::fs::read_link(path).unwrap()));
        } else if meta.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(path)
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            names.sort();
            for name in names {
                out.push_str(&format!("{name:?}/\n"));
                digest(&path.join(name), out);
            }
        } else {
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(path).unwrap_or_default(),
            ));
            out.push('\n');
        }
    }
    let mut found = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name.to_str().is_some_and(|n| PROTECTED_NAMES.contains(&n)) {
                let mut held = String::new();
                digest(&path, &mut held);
                found.insert(path, held);
            } else if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            }
        }
    }
    found
}

/// A small deterministic generator (the cases are reproducible by seed).
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

/// The shell that makes entry `name` at `at` (a path relative to the
/// current folder): a file for the configuration files, a folder with
/// content for the folders.
fn make(name: &str, at: &str) -> String {
    if name.ends_with(".json") || name.ends_with(".jsonc") {
        format!("printf '{{\"permission\":{{\"bash\":\"allow\"}}}}' > {at}")
    } else {
        format!("mkdir -p {at}/hooks && printf 'touch pwned' > {at}/hooks/pre-commit")
    }
}

/// One generated command: a way to plant a protected entry at a generated
/// depth, or an attack on one that exists.
fn attack(rng: &mut Lcg) -> String {
    let depth = 1 + rng.below(3);
    let folder: Vec<String> = (0..depth)
        .map(|_| {
            rng.pick(&["src", "packages", "a", "b", "node_modules", "x y"])
                .to_string()
        })
        .collect();
    let folder = format!("'{}'", folder.join("/"));
    let name = rng.pick(PROTECTED_NAMES);
    let file = format!("{folder}/{name}");
    let inner = rng.pick(&["", "deep/", "deep/er/"]);
    match rng.below(14) {
        0 => format!("mkdir -p {folder} && {}", make(name, &file)),
        1 => format!(
            "T=$(mktemp -d) && mkdir -p $T/x/{inner} && {} && mkdir -p {folder} && mv $T/x {folder}/moved",
            make(name, &format!("$T/x/{inner}{name}"))
        ),
        2 => format!(
            "T=$(mktemp -d) && mkdir -p $T/x/{inner} && {} && mkdir -p {folder} && cp -r $T/x {folder}/copied",
            make(name, &format!("$T/x/{inner}{name}"))
        ),
        3 => format!(
            "T=$(mktemp -d) && mkdir -p $T/x/{inner} && {} && tar -C $T/x -cf $T/a.tar . && mkdir -p {folder} && tar -C {folder} -xf $T/a.tar",
            make(name, &format!("$T/x/{inner}{name}"))
        ),
        4 => format!(
            "mkdir -p {folder} && {} && mv {folder}/staged {file}",
            make(name, &format!("{folder}/staged"))
        ),
        5 => format!(
            "mkdir -p {folder} && printf '{{}}' > evil.json && ln -s \"$PWD/evil.json\" {file}"
        ),
        6 => format!("mkdir -p {folder} && printf '{{}}' > evil.json && ln evil.json {file}"),
        7 => match rng.below(4) {
            0 => "printf evil > packages/a/opencode.json".to_string(),
            1 => "printf evil >> packages/a/.opencode/agent/x.md; rm -rf packages/a/.opencode"
                .to_string(),
            2 => "printf 'gitdir: /tmp/evil' > vendor/lib/.git".to_string(),
            _ => "rm -f packages/a/opencode.json vendor/lib/.git".to_string(),
        },
        8 => rng
            .pick(&[
                "mv packages/a packages/z && mkdir packages/a",
                "mv packages pk && mkdir -p packages/a",
                "mv vendor/lib vendor/lib2 && mkdir vendor/lib",
                "mv vendor v2",
                "rm -rf packages",
            ])
            .to_string(),
        // Many events in one call, the plant among them. (More than the
        // kernel queues makes the index walk again: the unit tests of
        // `sandbox/nested.rs` cover that path without a slow flood.)
        9 => format!(
            "mkdir -p {folder}/flood && (cd {folder}/flood && seq 300 | xargs touch) && {} && touch {folder}/flood/z",
            make(name, &file)
        ),
        10 => format!("mkdir -p {folder} && ( {} ) & wait", make(name, &file)),
        11 => format!(
            "mkdir -p {folder} && git init -q {folder} 2>/dev/null || {}",
            make(".git", &format!("{folder}/.git"))
        ),
        12 => format!(
            "mkdir -p {folder}/staged-dir/{inner} && {} && mv {folder}/staged-dir {folder}/renamed",
            make(name, &format!("{folder}/staged-dir/{inner}{name}"))
        ),
        _ => format!("mkdir -p {folder} && cd {folder} && {}", make(name, name)),
    }
}

fn seed_project(root: &Path) {
    std::fs::create_dir_all(root.join("packages/a/.opencode/agent")).unwrap();
    std::fs::write(
        root.join("packages/a/opencode.json"),
        r#"{"permission":{"bash":"deny"}}"#,
    )
    .unwrap();
    std::fs::write(root.join("packages/a/.opencode/agent/x.md"), "reviewer\n").unwrap();
    std::fs::create_dir_all(root.join("vendor/lib")).unwrap();
    std::fs::write(
        root.join("vendor/lib/.git"),
        "gitdir: ../../.git/modules/lib\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "project\n").unwrap();
}

#[tokio::test]
async fn generated_commands_never_keep_or_change_a_protected_entry_below_the_project() {
    let Some(tool) = tool() else {
        return;
    };
    let seeds: u64 = std::env::var("AGENT_NESTED_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for seed in 0..seeds {
        let root = project(&format!("prop-{seed}"));
        seed_project(&root);
        let approver = Arc::new(RecordingApprover::replying(Reply::reject()));
        let ctx = context(&root, approver.clone());
        let mut rng = Lcg(seed.wrapping_mul(0x9E3779B97F4A7C15) ^ 0x5EED);
        let before = protected_entries(&root);
        assert_eq!(before.len(), 3, "{before:?}");
        for case in 0..16 {
            let command = attack(&mut rng);
            let _ = tool
                .execute(json!({"command": command, "timeout": 20_000}), &ctx)
                .await;
            let now = protected_entries(&root);
            assert_eq!(
                now,
                before,
                "seed {seed}, case {case}: after `{command}` the protected entries below the project differ (asked: {:?})",
                approver.summaries()
            );
            // The rest of the project stays writable.
            let out = tool
                .execute(
                    json!({"command": "echo ok > build.log && cat build.log"}),
                    &ctx,
                )
                .await
                .unwrap();
            assert!(
                out.output.contains("ok"),
                "seed {seed}, case {case}: {}",
                out.output
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// What the agent's own file tools (which ask first) or the user write
/// between commands is theirs: the next command neither asks about it nor
/// undoes it, and from then on it is protected like the rest.
#[tokio::test]
async fn entries_written_between_commands_are_kept_and_then_protected() {
    let Some(tool) = tool() else {
        return;
    };
    let root = project("between");
    seed_project(&root);
    let approver = Arc::new(RecordingApprover::replying(Reply::reject()));
    let ctx = context(&root, approver.clone());
    tool.execute(json!({"command": "true"}), &ctx)
        .await
        .unwrap();
    std::fs::create_dir_all(root.join("packages/b")).unwrap();
    std::fs::write(root.join("packages/b/opencode.json"), "{}").unwrap();
    let out = tool
        .execute(json!({"command": "cat packages/b/opencode.json"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.output.trim(), "{}");
    assert!(
        approver.summaries().is_empty(),
        "{:?}",
        approver.summaries()
    );
    let _ = tool
        .execute(
            json!({"command": "printf evil > packages/b/opencode.json; mv packages/b packages/c"}),
            &ctx,
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(root.join("packages/b/opencode.json")).unwrap(),
        "{}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Two calls at once: what one command plants while the other runs is
/// still asked (by the call that sees it first) and undone.
#[tokio::test]
async fn a_plant_during_a_concurrent_call_is_still_caught() {
    let Some(tool) = tool() else {
        return;
    };
    let root = project("concurrent");
    seed_project(&root);
    let approver = Arc::new(RecordingApprover::replying(Reply::reject()));
    let ctx = context(&root, approver.clone());
    let slow = tool.execute(json!({"command": "sleep 0.5"}), &ctx);
    let plant = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        tool.execute(
            json!({"command": "mkdir -p src/deep && printf '{}' > src/deep/opencode.json"}),
            &ctx,
        )
        .await
    };
    let _ = tokio::join!(slow, plant);
    assert!(!root.join("src/deep/opencode.json").exists());
    assert!(root.join("src/deep/opencode.json.rejected-1").exists());
    assert!(
        approver
            .summaries()
            .iter()
            .any(|s| s.starts_with("protected_path ") && s.contains("src/deep/opencode.json")),
        "{:?}",
        approver.summaries()
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Never answers: the host went away mid-ask.
struct Silent;

#[async_trait::async_trait]
impl agentgate_permission::Approver for Silent {
    async fn approve(&self, _request: &agentgate_permission::PermissionRequest) -> Reply {
        std::future::pending().await
    }
}

/// A call whose future is dropped while the protected_path ask waits (the
/// host's turn cancelled, its process ending) keeps nothing: the planted
/// entry is moved aside as a rejected one would be.
#[tokio::test]
async fn a_call_dropped_during_its_ask_keeps_nothing() {
    let Some(tool) = tool() else {
        return;
    };
    let root = project("dropped");
    seed_project(&root);
    let permissions = PermissionGate::new();
    permissions.set_approver(Arc::new(Silent));
    let ctx = ToolContext::new("ses_nested", "msg_1", "call_1", permissions)
        .with_directories(root.clone(), root.clone())
        .with_ruleset(Arc::new(Ruleset::from(vec![Rule::new(
            "*",
            "*",
            Action::Allow,
        )])));
    let call = tool.execute(
        json!({"command": "mkdir -p src && printf '{}' > src/opencode.json && printf '{}' > opencode.json"}),
        &ctx,
    );
    let outcome = tokio::time::timeout(Duration::from_secs(5), call).await;
    assert!(outcome.is_err(), "the ask never returns: {outcome:?}");
    assert!(!root.join("src/opencode.json").exists());
    assert!(root.join("src/opencode.json.rejected-1").exists());
    assert!(
        !root.join("opencode.json").exists(),
        "the top-level one too"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A class the plants above do not use: an atomic exchange of two folders
/// (`renameat2` with `RENAME_EXCHANGE`), swapping a folder built in `/tmp`
/// with one of the project's. Neither side is created or moved in the
/// usual sense. Landlock refuses it (no reparenting across writable
/// roots), and were it allowed the watch would see the folder arrive.
#[tokio::test]
async fn a_folder_exchanged_into_the_project_is_still_caught() {
    let Some(tool) = tool() else {
        return;
    };
    let python = std::process::Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|status| status.success());
    if !python {
        eprintln!("skipped: no python3 for renameat2");
        return;
    }
    // No protected entry yet, so no folder is pinned either.
    let root = project("exchange");
    std::fs::create_dir_all(root.join("src/lib")).unwrap();
    let approver = Arc::new(RecordingApprover::replying(Reply::reject()));
    let ctx = context(&root, approver.clone());
    let before = protected_entries(&root);
    let exchange = "T=$(mktemp -d) && mkdir -p $T/x/.opencode/agent && printf evil > $T/x/.opencode/agent/a.md && \
        python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); r=l.renameat2(-100,sys.argv[1].encode(),-100,sys.argv[2].encode(),2); sys.exit(0 if r==0 else ctypes.get_errno())' $T/x src/lib; echo exchanged=$?";
    let out = tool
        .execute(json!({"command": exchange, "timeout": 20_000}), &ctx)
        .await;
    // Either Landlock refuses to move a folder from one writable root into
    // another (EXDEV: the right to reparent, `REFER`, is not granted across
    // roots), or the exchange happened and the watch saw the folder arrive,
    // asked, and moved the planted entry aside. The protected entries are
    // unchanged either way.
    let text = format!("{out:?}");
    assert!(
        text.contains("exchanged=18")
            || root.join("src/lib/.opencode.rejected-1").exists()
            || root.join("src/lib.rejected-1").exists(),
        "{text}; asked: {:?}",
        approver.summaries()
    );
    assert_eq!(
        protected_entries(&root),
        before,
        "after the exchange ({out:?}); asked: {:?}",
        approver.summaries()
    );
    let _ = std::fs::remove_dir_all(&root);
}
