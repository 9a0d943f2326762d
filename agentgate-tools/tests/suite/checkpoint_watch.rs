//! Project scopes served by the root's inotify watcher: after the first
//! walk, a command's changes are found from the events alone (no walk:
//! `FsCheckpoints::project_walks` stays at one), including folders it
//! creates and fills, folders moved in and out, edits made between steps
//! and writes made inside the sandbox's mount namespace; an ignore file
//! changing makes the next scope walk again.
#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agentgate_core::Tool;
use agentgate_tools::core::{ChangeScope, Checkpoints, Direction, FileChange};
use agentgate_tools::{BashTool, FsCheckpoints, Guard, Sandbox, SandboxMode, SandboxPolicy};
use serde_json::json;

use super::support::{recording_context, temp_dir};

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    checkpoints: FsCheckpoints,
}

impl Fixture {
    /// A project of 20 folders of 10 files, walked once.
    async fn new(name: &str) -> Self {
        let base = temp_dir("checkpoint-watch", name);
        let root = base.join("project");
        for f in 0..200 {
            let folder = root.join(format!("d{:02}", f / 10));
            fs::create_dir_all(&folder).unwrap();
            fs::write(folder.join(format!("f{f:03}")), format!("{f}\n")).unwrap();
        }
        let checkpoints = FsCheckpoints::new(base.join("store"));
        let fixture = Fixture {
            base,
            root,
            checkpoints,
        };
        fixture.step("true").await;
        assert!(fixture.take().await.is_empty());
        assert_eq!(fixture.walks().await, 1);
        fixture
    }

    /// One command's step: `script` run by `sh` in the project.
    async fn step(&self, script: &str) {
        let scope = ChangeScope::Project;
        let cp = &self.checkpoints;
        cp.before_change(&self.root, "s", scope).await.unwrap();
        let status = Command::new("sh")
            .args(["-c", script])
            .current_dir(&self.root)
            .status()
            .unwrap();
        assert!(status.success(), "{script}");
        cp.after_change(&self.root, "s", scope).await.unwrap();
    }

    async fn take(&self) -> Vec<FileChange> {
        self.checkpoints.take(&self.root, "s").await.unwrap()
    }

    async fn walks(&self) -> u64 {
        self.checkpoints.project_walks(&self.root).await
    }

    async fn revert(&self, changes: &[FileChange]) {
        let cp = &self.checkpoints;
        cp.apply(&self.root, changes, Direction::Back, false)
            .await
            .unwrap();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn paths_of(changes: &[FileChange]) -> Vec<&str> {
    changes.iter().map(|change| change.path.as_str()).collect()
}

/// Every path under `root` with its content (`/` for a folder).
fn tree(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
                found.push((rel, "/".to_string()));
            } else {
                found.push((rel, fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn a_command_s_changes_are_recorded_from_the_events_without_a_walk() {
    let f = Fixture::new("events").await;
    let before = tree(&f.root);
    f.step("echo changed > d03/f031 && rm d07/f075 && echo new > d19/new && chmod 700 d05")
        .await;
    let changes = f.take().await;
    assert_eq!(
        paths_of(&changes),
        ["d03/f031", "d05", "d07/f075", "d19/new"]
    );
    assert_eq!(f.walks().await, 1, "served by the watcher");
    f.revert(&changes).await;
    assert_eq!(tree(&f.root), before);
}

#[tokio::test]
async fn an_edit_between_steps_is_the_starting_point_not_a_change() {
    let f = Fixture::new("between").await;
    fs::write(f.root.join("d01/f010"), "the user's editor\n").unwrap();
    f.step("echo by-command > d02/f020").await;
    let changes = f.take().await;
    assert_eq!(paths_of(&changes), ["d02/f020"]);
    f.revert(&changes).await;
    let edited = fs::read_to_string(f.root.join("d01/f010")).unwrap();
    assert_eq!(edited, "the user's editor\n");
    assert_eq!(f.walks().await, 1);
}

#[tokio::test]
async fn a_nested_folder_created_and_filled_by_one_command_is_recorded_and_watched() {
    let f = Fixture::new("nested").await;
    let before = tree(&f.root);
    f.step("mkdir -p n/a/b && echo 1 > n/a/b/f && echo 2 > n/top && mkdir n/a/c")
        .await;
    let first = f.take().await;
    assert_eq!(
        paths_of(&first),
        ["n", "n/a", "n/a/b", "n/a/b/f", "n/a/c", "n/top"]
    );
    // The new folders are watched now.
    f.step("echo 3 > n/a/c/g && echo 4 > n/a/b/f").await;
    let second = f.take().await;
    assert_eq!(paths_of(&second), ["n/a/b/f", "n/a/c/g"]);
    assert_eq!(f.walks().await, 1);
    f.revert(&second).await;
    f.revert(&first).await;
    assert_eq!(tree(&f.root), before);
}

#[tokio::test]
async fn folders_moved_in_out_and_within_the_project_are_recorded() {
    let f = Fixture::new("moves").await;
    let outside = f.base.join("outside");
    fs::create_dir_all(outside.join("m/y")).unwrap();
    fs::write(outside.join("m/x"), "x\n").unwrap();
    fs::write(outside.join("m/y/z"), "z\n").unwrap();
    let before = tree(&f.root);
    let mv_in = format!("mv {} m", outside.join("m").display());
    f.step(&mv_in).await;
    let moved_in = f.take().await;
    assert_eq!(paths_of(&moved_in), ["m", "m/x", "m/y", "m/y/z"]);
    assert!(moved_in.iter().all(|change| change.before.is_none()));
    f.step("echo w > m/y/w && mv d04 d40 && echo v > d40/v")
        .await;
    let within = f.take().await;
    let mut expected: Vec<String> = (40..50).map(|n| format!("d04/f{n:03}")).collect();
    expected.extend(["d04".into(), "d40".into(), "d40/v".into(), "m/y/w".into()]);
    expected.extend((40..50).map(|n| format!("d40/f{n:03}")));
    expected.sort();
    assert_eq!(paths_of(&within), expected);
    let mv_out = format!("mv m {}", outside.join("gone").display());
    f.step(&mv_out).await;
    let moved_out = f.take().await;
    assert_eq!(paths_of(&moved_out), ["m", "m/x", "m/y", "m/y/w", "m/y/z"]);
    assert!(moved_out.iter().all(|change| change.after.is_none()));
    // A folder moved out is no longer watched under its old path.
    fs::write(outside.join("gone/x"), "later\n").unwrap();
    f.step("true").await;
    assert!(f.take().await.is_empty());
    assert_eq!(f.walks().await, 1);
    for changes in [&moved_out, &within, &moved_in] {
        f.revert(changes).await;
    }
    fs::remove_dir_all(outside.join("gone")).unwrap();
    assert_eq!(tree(&f.root), before);
}

#[tokio::test]
async fn ignored_folders_are_skipped_and_an_ignore_file_change_walks_again() {
    let f = Fixture::new("ignored").await;
    fs::write(f.root.join(".gitignore"), "target/\n").unwrap();
    f.step("true").await;
    let _ = f.take().await;
    assert_eq!(f.walks().await, 2, "an ignore file changed");
    f.step("mkdir -p target/debug && echo o > target/debug/out && echo k > kept")
        .await;
    assert_eq!(paths_of(&f.take().await), ["kept"]);
    f.step("echo more > target/debug/out2").await;
    assert!(f.take().await.is_empty());
    assert_eq!(f.walks().await, 2);
}

/// A command run by the bash tool in the sandbox (its own mount namespace,
/// the project bind-mounted): the watches on the host's folders see its
/// writes, which are on the same inodes.
#[tokio::test]
async fn writes_made_inside_the_sandbox_s_mounts_are_seen_by_the_watcher() {
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    if !matches!(sandbox.status().private_proc, Guard::Enforced { .. }) {
        eprintln!("no mount namespace for commands here: skipped");
        return;
    }
    let f = Fixture::new("sandboxed").await;
    let checkpoints = Arc::new(f.checkpoints.clone());
    let (ctx, _) = recording_context(&f.root, true);
    let ctx = ctx.with_checkpoints(checkpoints.clone());
    let bash = BashTool::new().with_sandbox(sandbox);
    let command = "mkdir -p s/t && echo in > s/t/f && echo edit > d00/f000 && rm d01/f011";
    let input = json!({"command": command, "description": "change"});
    bash.execute(input, &ctx).await.unwrap();
    let changes = checkpoints.take(&f.root, "ses_test").await.unwrap();
    assert_eq!(
        paths_of(&changes),
        ["d00/f000", "d01/f011", "s", "s/t", "s/t/f"]
    );
    assert_eq!(f.walks().await, 1, "seen through the mounts, not walked");
}

/// The descent along changed paths applies each folder's `.gitignore`:
/// a change under a folder a nested `.gitignore` ignores is not recorded,
/// one in a folder a `!pattern` un-ignores is, all without a walk.
#[tokio::test]
async fn nested_ignore_files_and_whitelists_are_applied_to_the_events() {
    let f = Fixture::new("nested-ignores").await;
    fs::write(f.root.join(".gitignore"), "build*/\n!build-keep/\n").unwrap();
    fs::write(f.root.join("d02/.gitignore"), "cache/\n*.tmp\n").unwrap();
    f.step("mkdir -p d02/cache d02/deep/cache build build-keep")
        .await;
    let _ = f.take().await;
    assert_eq!(f.walks().await, 2, "ignore files changed");
    f.step(
        "echo 1 > d02/cache/a && echo 2 > d02/deep/cache/b && echo 3 > d02/x.tmp \
         && echo 4 > build/out && echo 5 > build-keep/out && echo 6 > d02/deep/kept",
    )
    .await;
    assert_eq!(
        paths_of(&f.take().await),
        ["build-keep/out", "d02/deep/kept"]
    );
    f.step("mkdir -p d02/new/cache && echo 7 > d02/new/cache/c && echo 8 > d02/new/k")
        .await;
    assert_eq!(paths_of(&f.take().await), ["d02/new", "d02/new/k"]);
    assert_eq!(f.walks().await, 2, "served by the events");
}
