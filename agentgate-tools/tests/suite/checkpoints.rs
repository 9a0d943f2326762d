//! `FsCheckpoints` end to end on real folders: what each scope records,
//! revert and unrevert, conflicts, and the attacks of a hostile
//! repository or model on revert (links planted in parents, paths that
//! climb out of the project).
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use agentgate_tools::FsCheckpoints;
use agentgate_tools::core::{
    ChangeScope, CheckpointError, Checkpoints, Direction, FileChange, FileState,
};

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    checkpoints: FsCheckpoints,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let base = std::env::temp_dir().join(format!("cp-it-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let root = base.join("project");
        fs::create_dir_all(&root).unwrap();
        let checkpoints = FsCheckpoints::new(base.join("store"));
        Fixture {
            base,
            root,
            checkpoints,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    async fn paths<F: FnOnce()>(&self, rels: &[&str], change: F) {
        let paths: Vec<PathBuf> = rels.iter().map(PathBuf::from).collect();
        let scope = ChangeScope::Paths(&paths);
        self.checkpoints
            .before_change(&self.root, "s", scope)
            .await
            .unwrap();
        change();
        self.checkpoints
            .after_change(&self.root, "s", scope)
            .await
            .unwrap();
    }

    async fn project<F: FnOnce()>(&self, change: F) {
        let scope = ChangeScope::Project;
        self.checkpoints
            .before_change(&self.root, "s", scope)
            .await
            .unwrap();
        change();
        self.checkpoints
            .after_change(&self.root, "s", scope)
            .await
            .unwrap();
    }

    async fn take(&self) -> Vec<FileChange> {
        self.checkpoints.take(&self.root, "s").await.unwrap()
    }

    async fn apply(
        &self,
        changes: &[FileChange],
        direction: Direction,
        force: bool,
    ) -> Result<(), CheckpointError> {
        self.checkpoints
            .apply(&self.root, changes, direction, force)
            .await
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

#[tokio::test]
async fn a_file_tool_write_with_new_folders_is_reverted_and_unreverted() {
    let f = Fixture::new("write");
    fs::write(f.path("keep.txt"), "keep").unwrap();
    f.paths(&["a/b/c.txt"], || {
        fs::create_dir_all(f.path("a/b")).unwrap();
        fs::write(f.path("a/b/c.txt"), "new").unwrap();
    })
    .await;
    let changes = f.take().await;
    assert_eq!(paths_of(&changes), ["a", "a/b", "a/b/c.txt"]);
    assert!(f.take().await.is_empty(), "take empties the record");
    f.apply(&changes, Direction::Back, false).await.unwrap();
    assert!(!f.path("a").exists());
    assert_eq!(fs::read_to_string(f.path("keep.txt")).unwrap(), "keep");
    f.apply(&changes, Direction::Forward, false).await.unwrap();
    assert_eq!(fs::read_to_string(f.path("a/b/c.txt")).unwrap(), "new");
    // The revert and unrevert are not recorded as the agent's changes.
    f.project(|| {}).await;
    assert!(f.take().await.is_empty());
}

#[tokio::test]
async fn a_command_s_changes_are_found_by_the_project_walk() {
    let f = Fixture::new("bash");
    fs::create_dir_all(f.path("src")).unwrap();
    fs::write(f.path("src/edit.rs"), "old").unwrap();
    fs::write(f.path("src/gone.rs"), "gone").unwrap();
    fs::write(f.path("run.sh"), "#!/bin/sh").unwrap();
    fs::write(f.path(".gitignore"), "target/\n").unwrap();
    f.project(|| {
        fs::write(f.path("src/edit.rs"), "new").unwrap();
        fs::remove_file(f.path("src/gone.rs")).unwrap();
        fs::write(f.path("src/made.rs"), "made").unwrap();
        fs::set_permissions(f.path("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("src/edit.rs", f.path("link")).unwrap();
        fs::create_dir_all(f.path("target/debug")).unwrap();
        fs::write(f.path("target/debug/out"), "ignored").unwrap();
    })
    .await;
    let changes = f.take().await;
    assert_eq!(
        paths_of(&changes),
        [
            "link",
            "run.sh",
            "src/edit.rs",
            "src/gone.rs",
            "src/made.rs"
        ]
    );
    f.apply(&changes, Direction::Back, false).await.unwrap();
    assert_eq!(fs::read_to_string(f.path("src/edit.rs")).unwrap(), "old");
    assert_eq!(fs::read_to_string(f.path("src/gone.rs")).unwrap(), "gone");
    assert!(!f.path("src/made.rs").exists() && fs::symlink_metadata(f.path("link")).is_err());
    assert_eq!(
        fs::metadata(f.path("run.sh")).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(
        f.path("target/debug/out").exists(),
        "ignored paths are not captured"
    );
}

#[tokio::test]
async fn a_file_changed_since_is_a_conflict_unless_forced() {
    let f = Fixture::new("conflict");
    fs::write(f.path("a.txt"), "1").unwrap();
    fs::write(f.path("b.txt"), "1").unwrap();
    f.paths(&["a.txt", "b.txt"], || {
        fs::write(f.path("a.txt"), "2").unwrap();
        fs::write(f.path("b.txt"), "2").unwrap();
    })
    .await;
    let changes = f.take().await;
    fs::write(f.path("b.txt"), "the user's edit").unwrap();
    let error = f.apply(&changes, Direction::Back, false).await.unwrap_err();
    assert_eq!(
        error,
        CheckpointError::Conflict {
            paths: vec!["b.txt".into()]
        }
    );
    assert_eq!(
        fs::read_to_string(f.path("a.txt")).unwrap(),
        "2",
        "nothing moved"
    );
    f.apply(&changes, Direction::Back, true).await.unwrap();
    assert_eq!(fs::read_to_string(f.path("a.txt")).unwrap(), "1");
    assert_eq!(fs::read_to_string(f.path("b.txt")).unwrap(), "1");
}

#[tokio::test]
async fn a_parent_replaced_by_a_link_is_never_written_through() {
    let f = Fixture::new("link-parent");
    let outside = f.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(f.path("a")).unwrap();
    f.paths(&["a/x"], || fs::write(f.path("a/x"), "agent").unwrap())
        .await;
    let changes = f.take().await;
    f.apply(&changes, Direction::Back, false).await.unwrap();
    // The model swaps `a` for a link out of the project, unrecorded.
    fs::remove_dir(f.path("a")).unwrap();
    symlink(&outside, f.path("a")).unwrap();
    let error = f
        .apply(&changes, Direction::Forward, true)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, CheckpointError::Io { path, .. } if path == Path::new("a/x")),
        "{error}"
    );
    assert!(
        !outside.join("x").exists(),
        "nothing written outside the project"
    );
    // And the other way: a file behind the link is not removed.
    fs::write(outside.join("x"), "agent").unwrap();
    let back = f.apply(&changes, Direction::Back, false).await.unwrap_err();
    assert_eq!(
        back,
        CheckpointError::Conflict {
            paths: vec!["a/x".into()]
        }
    );
    f.apply(&changes, Direction::Back, true).await.unwrap();
    assert_eq!(fs::read_to_string(outside.join("x")).unwrap(), "agent");
}

#[tokio::test]
async fn a_recorded_swap_of_a_folder_for_a_link_is_reverted_to_the_folder() {
    let f = Fixture::new("link-swap");
    let outside = f.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(f.path("a")).unwrap();
    fs::write(f.path("a/x"), "mine").unwrap();
    f.project(|| {
        fs::remove_dir_all(f.path("a")).unwrap();
        symlink(&outside, f.path("a")).unwrap();
    })
    .await;
    let changes = f.take().await;
    assert_eq!(paths_of(&changes), ["a", "a/x"]);
    f.apply(&changes, Direction::Back, false).await.unwrap();
    assert!(fs::symlink_metadata(f.path("a")).unwrap().is_dir());
    assert_eq!(fs::read_to_string(f.path("a/x")).unwrap(), "mine");
    assert!(!outside.join("x").exists());
    f.apply(&changes, Direction::Forward, false).await.unwrap();
    assert!(fs::symlink_metadata(f.path("a")).unwrap().is_symlink());
    assert!(!outside.join("x").exists());
}

#[tokio::test]
async fn recorded_paths_that_leave_the_project_are_refused() {
    let f = Fixture::new("hostile");
    let outside = f.base.join("escaped");
    fs::write(f.path("ok"), "ok").unwrap();
    f.paths(&["ok"], || fs::write(f.path("ok"), "changed").unwrap())
        .await;
    let state = f.take().await.remove(0).after;
    let hostile = [
        "../escaped",
        "/tmp/escaped",
        "a/\0b",
        ".git/hooks/pre-commit",
        "a/../../escaped",
        "",
    ];
    for path in hostile {
        let changes = [
            FileChange::new("ok", None, state.clone()),
            FileChange::new(path, None, state.clone()),
        ];
        let error = f
            .apply(&changes, Direction::Forward, true)
            .await
            .unwrap_err();
        assert!(
            matches!(error, CheckpointError::Io { .. }),
            "{path:?}: {error}"
        );
    }
    assert!(!outside.exists());
    assert!(!f.root.join(".git").exists());
    assert_eq!(
        fs::read_to_string(f.path("ok")).unwrap(),
        "changed",
        "nothing moved"
    );
}

#[tokio::test]
async fn a_scope_path_outside_the_project_or_behind_a_link_is_not_captured() {
    let f = Fixture::new("scope");
    let outside = f.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    symlink(&outside, f.path("l")).unwrap();
    let far = outside.join("far");
    f.paths(&[far.to_str().unwrap(), "l/x"], || {
        fs::write(&far, "x").unwrap();
        fs::write(f.path("l/x"), "x").unwrap();
    })
    .await;
    assert!(f.take().await.is_empty());
}

#[tokio::test]
async fn a_pruned_content_makes_its_change_unrevertible() {
    let f = Fixture::new("pruned");
    let small = FsCheckpoints::builder(f.base.join("small"))
        .max_bytes(8)
        .build();
    fs::write(f.path("a"), "first content").unwrap();
    let paths = [PathBuf::from("a")];
    small
        .before_change(&f.root, "s", ChangeScope::Paths(&paths))
        .await
        .unwrap();
    fs::write(f.path("a"), "second content").unwrap();
    small
        .after_change(&f.root, "s", ChangeScope::Paths(&paths))
        .await
        .unwrap();
    let changes = small.take(&f.root, "s").await.unwrap();
    let error = small
        .apply(&f.root, &changes, Direction::Back, false)
        .await
        .unwrap_err();
    assert!(
        matches!(error, CheckpointError::Missing { ref path, .. } if path == "a"),
        "{error}"
    );
    let Some(FileState::File { blob, .. }) = &changes[0].after else {
        panic!()
    };
    assert_eq!(small.blob(&f.root, blob).await.unwrap(), b"second content");
}
