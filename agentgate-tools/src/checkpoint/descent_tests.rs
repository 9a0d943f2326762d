//! The descent along changed paths against the walker, on generated trees
//! with `.gitignore` files (ignore and `!` whitelist lines, folder-only
//! and anchored patterns), the root's `.git/info/exclude` and links: for
//! any set of paths and appeared folders, it finds what the walk finds.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use crate::checkpoint::descent;
use crate::checkpoint::rules::IgnoreRules;
use crate::checkpoint::walk;
use crate::checkpoint::watch::Watcher;

const NAMES: [&str; 6] = ["a", "b", "target", ".h", "x.log", "keep.log"];
const LINES: [&str; 12] = [
    "target/",
    "*.log",
    "!keep.log",
    "b",
    "/a",
    "a/b/",
    "!b",
    ".h",
    "!target/",
    "**/a",
    "b/*",
    "!b/x.log",
];

/// A generated tree: folders, files, ignore files, links.
#[derive(Debug, Clone)]
struct Tree {
    folders: Vec<Vec<usize>>,
    files: Vec<(usize, usize)>,
    gitignores: Vec<(usize, Vec<usize>)>,
    exclude: Vec<usize>,
    links: Vec<(usize, usize)>,
    asked: Vec<(usize, usize)>,
    deep: Vec<usize>,
}

fn tree() -> impl Strategy<Value = Tree> {
    let folder = prop::collection::vec(0..NAMES.len(), 1..4);
    let lines = prop::collection::vec(0..LINES.len(), 0..4);
    (
        prop::collection::vec(folder, 1..10),
        prop::collection::vec((0..10usize, 0..NAMES.len()), 0..20),
        prop::collection::vec((0..11usize, lines.clone()), 0..4),
        lines,
        prop::collection::vec((0..10usize, 0..NAMES.len()), 0..2),
        prop::collection::vec((0..11usize, 0..NAMES.len()), 1..8),
        prop::collection::vec(0..10usize, 0..3),
    )
        .prop_map(
            |(folders, files, gitignores, exclude, links, asked, deep)| Tree {
                folders,
                files,
                gitignores,
                exclude,
                links,
                asked,
                deep,
            },
        )
}

impl Tree {
    /// The relative path of folder `i` (`""` past the end: the root).
    fn folder(&self, i: usize) -> String {
        (self.folders.get(i).map(|parts| {
            let names: Vec<&str> = parts.iter().map(|&n| NAMES[n]).collect();
            names.join("/")
        }))
        .unwrap_or_default()
    }

    fn join(folder: &str, name: &str) -> String {
        if folder.is_empty() {
            name.to_string()
        } else {
            format!("{folder}/{name}")
        }
    }

    fn lines(lines: &[usize]) -> String {
        lines.iter().map(|&l| format!("{}\n", LINES[l])).collect()
    }

    /// Writes the tree under `root`.
    fn make(&self, root: &Path) {
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/exclude"), Self::lines(&self.exclude)).unwrap();
        for i in 0..self.folders.len() {
            let _ = std::fs::create_dir_all(root.join(self.folder(i)));
        }
        for &(folder, name) in &self.files {
            let path = root.join(Self::join(&self.folder(folder), NAMES[name]));
            if !path.exists() {
                let _ = std::fs::write(path, "f");
            }
        }
        for (folder, lines) in &self.gitignores {
            let path = root.join(self.folder(*folder)).join(".gitignore");
            let _ = std::fs::write(path, Self::lines(lines));
        }
        for &(folder, name) in &self.links {
            let path = root.join(Self::join(&self.folder(folder), NAMES[name]));
            let _ = std::os::unix::fs::symlink(root.join(self.folder(0)), path);
        }
    }

    /// The paths asked about and the folders said to have appeared.
    fn asked(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut paths: BTreeSet<String> = (self.asked.iter())
            .map(|&(folder, name)| Self::join(&self.folder(folder), NAMES[name]))
            .collect();
        let deep: BTreeSet<String> = (self.deep.iter())
            .map(|&i| self.folder(i))
            .filter(|rel| !rel.is_empty())
            .collect();
        paths.extend(deep.iter().cloned());
        (paths, deep)
    }
}

/// What the whole walk finds among `paths` and under `deep`.
fn expected(root: &Path, paths: &BTreeSet<String>, deep: &BTreeSet<String>) -> Vec<String> {
    let in_deep = |rel: &str| {
        deep.contains(rel)
            || crate::checkpoint::rel_path::ancestors(rel)
                .iter()
                .any(|up| deep.contains(*up))
    };
    let mut found: Vec<String> = (walk::project(root, None).unwrap().into_iter())
        .map(|(rel, _)| rel)
        .filter(|rel| paths.contains(rel) || in_deep(rel))
        .collect();
    found.sort();
    found
}

/// A fresh folder, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("cp-descent-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn names(found: Vec<(String, crate::checkpoint::observe::StatKey)>) -> Vec<String> {
    found.into_iter().map(|(rel, _)| rel).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_descent_finds_what_the_walk_finds(tree in tree()) {
        let dir = TempDir::new();
        let root = dir.path().join("p");
        tree.make(&root);
        let (paths, deep) = tree.asked();
        let watcher = Watcher::new(&root).unwrap();
        let mut rules = IgnoreRules::default();
        let descended = descent::some(&root, &paths, &deep, &watcher.watches(), &mut rules);
        let descended = names(descended.expect("no nested repository: decided"));
        prop_assert_eq!(&descended, &expected(&root, &paths, &deep));
        let walked = walk::some(&root, &paths, &deep, watcher.watches()).unwrap();
        prop_assert_eq!(&descended, &names(walked));
        // With the rules kept from the first descent, the same again.
        let again = descent::some(&root, &paths, &deep, &watcher.watches(), &mut rules);
        prop_assert_eq!(descended, names(again.expect("decided")));
    }
}

#[test]
fn a_nested_repository_is_left_to_the_walk() {
    let dir = TempDir::new();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub/.git/info")).unwrap();
    std::fs::write(root.join("sub/.git/info/exclude"), "x\n").unwrap();
    std::fs::write(root.join("sub/x"), "").unwrap();
    let watcher = Watcher::new(root).unwrap();
    let paths = BTreeSet::from(["sub/x".to_string()]);
    let mut rules = IgnoreRules::default();
    let watches = watcher.watches();
    let found = descent::some(root, &paths, &BTreeSet::new(), &watches, &mut rules);
    assert!(found.is_none());
    let walked = walk::some(root, &paths, &BTreeSet::new(), Arc::clone(&watches)).unwrap();
    assert!(
        walked.is_empty(),
        "ignored by the nested repository's exclude"
    );
}
