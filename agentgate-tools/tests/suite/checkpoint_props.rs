//! Exactness of checkpoints, by property: in a generated tree, generated
//! steps of generated operations (create, modify, chmod, symlink create or
//! replace, rename of a file or folder, delete, nested mkdir, removal of a
//! folder), each reported like a file tool (the exact paths it touches) or
//! like a command (the whole project). For every step k, applying back the
//! net of steps k.. gives the tree as it was before step k, byte for byte
//! and mode for mode; applying it forward gives the final tree again.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use agentgate_core::checkpoint::net_changes;
use agentgate_core::{ChangeScope, Checkpoints, Direction, FileChange};
use agentgate_tools::FsCheckpoints;
use proptest::prelude::*;

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
});
static CASE: AtomicU64 = AtomicU64::new(0);

const NAMES: [&str; 3] = ["a", "b", "c"];
const MODES: [u32; 4] = [0o644, 0o755, 0o600, 0o640];
const TARGETS: [&str; 4] = ["a", "../b", "/nonexistent/x", "c/d"];

/// One entry of a tree, as compared.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, u32),
    Link(PathBuf),
    Dir(u32),
}

/// An operation, its targets chosen among what exists when it runs.
#[derive(Debug, Clone)]
enum Op {
    Create {
        dir: usize,
        name: usize,
        content: Vec<u8>,
    },
    Modify {
        file: usize,
        content: Vec<u8>,
    },
    Chmod {
        file: usize,
        mode: usize,
    },
    Symlink {
        dir: usize,
        name: usize,
        target: usize,
    },
    RenameFile {
        file: usize,
        dir: usize,
        name: usize,
    },
    RenameDir {
        from: usize,
        dir: usize,
        name: usize,
    },
    Delete {
        file: usize,
    },
    Mkdir {
        dir: usize,
        name: usize,
        inner: usize,
    },
    RemoveDir {
        dir: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let content = prop::collection::vec(prop::sample::select(vec![b'x', b'y', b'\n', 0u8]), 0..6);
    let i = || 0usize..8;
    prop_oneof![
        (i(), i(), content.clone()).prop_map(|(dir, name, content)| Op::Create {
            dir,
            name,
            content
        }),
        (i(), content).prop_map(|(file, content)| Op::Modify { file, content }),
        (i(), i()).prop_map(|(file, mode)| Op::Chmod { file, mode }),
        (i(), i(), i()).prop_map(|(dir, name, target)| Op::Symlink { dir, name, target }),
        (i(), i(), i()).prop_map(|(file, dir, name)| Op::RenameFile { file, dir, name }),
        (i(), i(), i()).prop_map(|(from, dir, name)| Op::RenameDir { from, dir, name }),
        i().prop_map(|file| Op::Delete { file }),
        (i(), i(), i()).prop_map(|(dir, name, inner)| Op::Mkdir { dir, name, inner }),
        i().prop_map(|dir| Op::RemoveDir { dir }),
    ]
}

/// The tree under `root`: relative path → node.
fn snapshot(root: &Path) -> BTreeMap<String, Node> {
    let mut tree = BTreeMap::new();
    let mut pending = vec![String::new()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(root.join(&folder)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let rel = if folder.is_empty() {
                name
            } else {
                format!("{folder}/{name}")
            };
            let metadata = fs::symlink_metadata(entry.path()).unwrap();
            let mode = metadata.permissions().mode() & 0o7777;
            let node = if metadata.is_symlink() {
                Node::Link(fs::read_link(entry.path()).unwrap())
            } else if metadata.is_dir() {
                pending.push(rel.clone());
                Node::Dir(mode)
            } else {
                Node::File(fs::read(entry.path()).unwrap(), mode)
            };
            tree.insert(rel, node);
        }
    }
    tree
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Runs `op` on the tree under `root`: the paths it touches (none when it
/// does not apply to the tree as it is).
fn run(root: &Path, op: &Op) -> Vec<String> {
    let tree = snapshot(root);
    let pick = |filter: &dyn Fn(&Node) -> bool, at: usize| -> Option<String> {
        let found: Vec<&String> = tree
            .iter()
            .filter(|(_, node)| filter(node))
            .map(|(rel, _)| rel)
            .collect();
        (!found.is_empty()).then(|| found[at % found.len()].clone())
    };
    let mut dirs: Vec<String> = vec![String::new()];
    dirs.extend(
        tree.iter()
            .filter(|(_, n)| matches!(n, Node::Dir(_)))
            .map(|(rel, _)| rel.clone()),
    );
    let dir_at = |at: usize| dirs[at % dirs.len()].clone();
    let free = |rel: &str| !tree.contains_key(rel);
    let is_file = |node: &Node| matches!(node, Node::File(..));
    let path = |rel: &str| root.join(rel);
    match op {
        Op::Create { dir, name, content } => {
            let rel = join(&dir_at(*dir), NAMES[name % 3]);
            if !free(&rel) {
                return vec![];
            }
            fs::write(path(&rel), content).unwrap();
            vec![rel]
        }
        Op::Modify { file, content } => {
            let Some(rel) = pick(&is_file, *file) else {
                return vec![];
            };
            fs::write(path(&rel), content).unwrap();
            vec![rel]
        }
        Op::Chmod { file, mode } => {
            let Some(rel) = pick(&is_file, *file) else {
                return vec![];
            };
            fs::set_permissions(path(&rel), fs::Permissions::from_mode(MODES[mode % 4])).unwrap();
            vec![rel]
        }
        Op::Symlink { dir, name, target } => {
            let rel = join(&dir_at(*dir), NAMES[name % 3]);
            match tree.get(&rel) {
                Some(Node::Dir(_)) => return vec![],
                Some(_) => fs::remove_file(path(&rel)).unwrap(),
                None => {}
            }
            symlink(TARGETS[target % 4], path(&rel)).unwrap();
            vec![rel]
        }
        Op::RenameFile { file, dir, name } => {
            let Some(from) = pick(&is_file, *file) else {
                return vec![];
            };
            let to = join(&dir_at(*dir), NAMES[name % 3]);
            if !free(&to) {
                return vec![];
            }
            fs::rename(path(&from), path(&to)).unwrap();
            vec![from, to]
        }
        Op::RenameDir { from, dir, name } => {
            let Some(from) = pick(&|n| matches!(n, Node::Dir(_)), *from) else {
                return vec![];
            };
            let to = join(&dir_at(*dir), NAMES[name % 3]);
            if !free(&to) || to.starts_with(&format!("{from}/")) {
                return vec![];
            }
            fs::rename(path(&from), path(&to)).unwrap();
            vec![from, to]
        }
        Op::Delete { file } => {
            let Some(rel) = pick(&|n| !matches!(n, Node::Dir(_)), *file) else {
                return vec![];
            };
            fs::remove_file(path(&rel)).unwrap();
            vec![rel]
        }
        Op::Mkdir { dir, name, inner } => {
            let outer = join(&dir_at(*dir), NAMES[name % 3]);
            let rel = join(&outer, NAMES[inner % 3]);
            if tree.get(&outer).is_some_and(|n| !matches!(n, Node::Dir(_))) || !free(&rel) {
                return vec![];
            }
            fs::create_dir_all(path(&rel)).unwrap();
            vec![rel]
        }
        Op::RemoveDir { dir } => {
            let Some(rel) = pick(&|n| matches!(n, Node::Dir(_)), *dir) else {
                return vec![];
            };
            // Emptied first, then removed, as `rm -r` does.
            fs::remove_dir_all(path(&rel)).unwrap();
            vec![rel]
        }
    }
}

/// Runs `op` reported as a file tool does (`paths`) or as a command.
async fn reported(checkpoints: &FsCheckpoints, root: &Path, op: &Op, paths: bool) {
    if !paths {
        checkpoints
            .before_change(root, "s", ChangeScope::Project)
            .await
            .unwrap();
        run(root, op);
        checkpoints
            .after_change(root, "s", ChangeScope::Project)
            .await
            .unwrap();
        return;
    }
    // A file tool knows its paths before it writes: here they are found by
    // running the op on a copy of the tree first.
    let touched = touched_paths(root, op);
    let touched: Vec<PathBuf> = touched.iter().map(PathBuf::from).collect();
    checkpoints
        .before_change(root, "s", ChangeScope::Paths(&touched))
        .await
        .unwrap();
    run(root, op);
    checkpoints
        .after_change(root, "s", ChangeScope::Paths(&touched))
        .await
        .unwrap();
}

/// The paths `op` would touch, found by running it on a copy of the tree.
fn touched_paths(root: &Path, op: &Op) -> Vec<String> {
    let copy = root.with_extension("dry");
    let _ = fs::remove_dir_all(&copy);
    copy_tree(root, &copy);
    let touched = run(&copy, op);
    fs::remove_dir_all(&copy).unwrap();
    touched
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for (rel, node) in snapshot(from) {
        let target = to.join(&rel);
        match node {
            Node::Dir(mode) => {
                fs::create_dir_all(&target).unwrap();
                fs::set_permissions(&target, fs::Permissions::from_mode(mode)).unwrap();
            }
            Node::File(bytes, mode) => {
                fs::write(&target, bytes).unwrap();
                fs::set_permissions(&target, fs::Permissions::from_mode(mode)).unwrap();
            }
            Node::Link(link) => symlink(link, &target).unwrap(),
        }
    }
}

type Steps = Vec<Vec<(Op, bool)>>;

fn check(initial: &[Op], steps: &Steps) -> Result<(), TestCaseError> {
    let base = std::env::temp_dir().join(format!(
        "cp-props-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    let root = base.join("p");
    fs::create_dir_all(&root).unwrap();
    for op in initial {
        run(&root, op);
    }
    let checkpoints = FsCheckpoints::new(base.join("store"));
    let result = RUNTIME.block_on(async {
        let mut before = Vec::new();
        let mut records: Vec<Vec<FileChange>> = Vec::new();
        for step in steps {
            before.push(snapshot(&root));
            for (op, paths) in step {
                reported(&checkpoints, &root, op, *paths).await;
            }
            records.push(checkpoints.take(&root, "s").await.unwrap());
        }
        let last = snapshot(&root);
        for k in 0..steps.len() {
            let net = net_changes(records[k..].iter().flatten().cloned());
            checkpoints
                .apply(&root, &net, Direction::Back, false)
                .await
                .unwrap();
            prop_assert_eq!(&snapshot(&root), &before[k], "back to before step {}", k);
            checkpoints
                .apply(&root, &net, Direction::Forward, false)
                .await
                .unwrap();
            prop_assert_eq!(&snapshot(&root), &last, "forward again from step {}", k);
        }
        Ok(())
    });
    let _ = fs::remove_dir_all(&base);
    result
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn reverting_any_suffix_of_steps_restores_the_tree_exactly(
        initial in prop::collection::vec(op(), 0..8),
        steps in prop::collection::vec(prop::collection::vec((op(), any::<bool>()), 1..4), 1..4),
    ) {
        check(&initial, &steps)?;
    }
}
