//! The folder a walker thread is reading files from, reached from the
//! search root one name at a time without following a link.
//!
//! The walk lists folders by path. A folder inside the search swapped for
//! a link (to `~/.ssh`, by a process racing the search) after the walk
//! met it would be followed by any later path lookup; here each folder
//! below the root is opened by name in its parent's descriptor with
//! `O_NOFOLLOW | O_DIRECTORY`, so the swap fails instead, and a file is
//! only ever opened by name in a folder so reached. The root itself is
//! opened once per search, following a link there (it is the path the call
//! named), and checked to be where the call asked about.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

/// Flags of every folder opened here: a handle for `*at` calls only.
const FOLDER: OFlag = OFlag::O_PATH
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC);

/// The folder `root`, open (following a link there); `None` when it is
/// not a folder or cannot be opened. The tools open their root through
/// [`crate::files::asked_path::AskedPath::open_root`], which also checks it
/// is where the call asked.
#[cfg(test)]
pub(crate) fn open_root(root: &Path) -> Option<OwnedFd> {
    openat(nix::fcntl::AT_FDCWD, root, FOLDER, Mode::empty()).ok()
}

/// One walker thread's open folders: the chain from the search root down
/// to the folder of the files it is meeting (the walker hands a thread a
/// folder's files one after the other), so moving to a sibling opens one
/// folder.
pub(crate) struct OpenFolder<'r> {
    root_path: &'r Path,
    root: Option<&'r OwnedFd>,
    /// The folder last asked for, as the walk wrote it.
    path: PathBuf,
    /// Whether `chain` reaches `path`.
    reached: bool,
    /// Each folder below the root down to `path`: its name and descriptor.
    chain: Vec<(OsString, OwnedFd)>,
}

impl<'r> OpenFolder<'r> {
    /// The folders below `root` (at `root_path`, as the walk writes it).
    pub(crate) fn new(root_path: &'r Path, root: Option<&'r OwnedFd>) -> Self {
        OpenFolder {
            root_path,
            root,
            path: PathBuf::new(),
            reached: false,
            chain: Vec::new(),
        }
    }

    /// The folder `folder` (a path the walk wrote, under the root), open;
    /// `None` when it is not under the root or some folder on the way
    /// from the root is no longer a folder (a link swapped in, removed).
    pub(crate) fn at(&mut self, folder: &Path) -> Option<&OwnedFd> {
        // Compared as bytes: `Path`'s equality walks components.
        if self.path.as_os_str() != folder.as_os_str() || self.path.as_os_str().is_empty() {
            self.path.clear();
            self.path.push(folder);
            self.reached = self.reach(folder);
        }
        if !self.reached {
            return None;
        }
        match self.chain.last() {
            Some((_, fd)) => Some(fd),
            None => self.root,
        }
    }

    /// Opens the chain down to `folder`, keeping the folders it shares
    /// with the chain open before.
    fn reach(&mut self, folder: &Path) -> bool {
        let Some(root) = self.root else {
            return false;
        };
        let Ok(relative) = folder.strip_prefix(self.root_path) else {
            return false;
        };
        let mut names: Vec<&OsStr> = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => names.push(name),
                Component::CurDir => {}
                _ => return false,
            }
        }
        let shared = self
            .chain
            .iter()
            .zip(&names)
            .take_while(|((open, _), name)| open.as_os_str() == **name)
            .count();
        self.chain.truncate(shared);
        for name in &names[shared..] {
            let parent = self.chain.last().map_or(root, |(_, fd)| fd);
            let flags = FOLDER | OFlag::O_NOFOLLOW;
            match openat(parent, *name, flags, Mode::empty()) {
                Ok(fd) => self.chain.push((name.to_os_string(), fd)),
                Err(_) => return false,
            }
        }
        true
    }
}

/// Runs `work` while another thread exchanges `a` and `b` (a folder and a
/// link, say) without pause, one atomic `renameat2` each, as a process
/// racing a search would; `work`'s result and how many exchanges ran. The
/// racer stops however `work` ends (a failed assertion too).
#[cfg(test)]
pub(crate) fn racing<T>(a: &Path, b: &Path, work: impl FnOnce() -> T) -> (T, usize) {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    use std::sync::atomic::{AtomicBool, Ordering};
    /// Stops the racer when dropped.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stopping = Stop(&stop);
        let racer = scope.spawn(|| {
            let mut swaps = 0;
            while !stop.load(Ordering::Relaxed) {
                renameat2(AT_FDCWD, a, AT_FDCWD, b, RenameFlags::RENAME_EXCHANGE).unwrap();
                swaps += 1;
            }
            swaps
        });
        let result = work();
        drop(stopping);
        (result, racer.join().unwrap())
    })
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;

    fn real(fd: &OwnedFd) -> PathBuf {
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
    }

    #[test]
    fn reaches_folders_by_name_and_refuses_a_link_on_the_way() {
        let base =
            std::env::temp_dir().join(format!("agentgate-open-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        for folder in ["root/a/b", "root/a/c", "root/d", "outside/b"] {
            std::fs::create_dir_all(base.join(folder)).unwrap();
        }
        let root_path = base.join("root");
        let root = open_root(&root_path);
        let mut open = OpenFolder::new(&root_path, root.as_ref());
        for folder in ["a/b", "a/c", "d", "", "a", "a/b"] {
            let path = root_path.join(folder);
            let fd = open.at(&path).expect(folder);
            assert_eq!(real(fd), path.canonicalize().unwrap(), "{folder}");
        }
        // Not under the root, or climbing out of it.
        assert!(open.at(&base.join("outside/b")).is_none());
        assert!(open.at(&root_path.join("a/../../outside")).is_none());
        // `a` swapped for a link to the outside folder: its files are not
        // reached. (A chain still open keeps the folder it reached by name,
        // wherever it was moved: the folder met, not the link.)
        std::fs::rename(root_path.join("a"), base.join("moved")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root_path.join("a")).unwrap();
        let kept = open
            .at(&root_path.join("a/b"))
            .expect("the chain open before");
        assert_eq!(real(kept), base.join("moved/b").canonicalize().unwrap());
        assert!(open.at(&root_path.join("d")).is_some());
        assert!(open.at(&root_path.join("a/b")).is_none());
        assert!(open.at(&root_path.join("a")).is_none());
        let mut fresh = OpenFolder::new(&root_path, root.as_ref());
        assert!(fresh.at(&root_path.join("a/b")).is_none());
        assert!(fresh.at(&root_path.join("a")).is_none());
        // The root may be a link: it is the path the call named.
        std::os::unix::fs::symlink(&root_path, base.join("root-link")).unwrap();
        let link_path = base.join("root-link");
        let linked = open_root(&link_path);
        let mut through = OpenFolder::new(&link_path, linked.as_ref());
        assert!(through.at(&link_path.join("d")).is_some());
        // A search of one file has no root folder.
        std::fs::write(base.join("file"), "x").unwrap();
        assert!(open_root(&base.join("file")).is_none());
        let _ = std::fs::remove_dir_all(&base);
    }
}
