//! A cgroup leaf per sandboxed call, holding its process and memory
//! ceilings (`sandbox.limits`).
//!
//! Where it can, the agent makes one directory per call below a cgroup it
//! may write — cgroup v2 (`pids.max`, `memory.max`, no swap, the whole
//! leaf killed on an out-of-memory), or the v1 `pids` and `memory`
//! hierarchies of a machine that still mounts them — and the call's
//! command moves itself in (writing `0` to `cgroup.procs` through a
//! descriptor the agent opened) before it starts anything: every process
//! of the call is then counted together, whatever user it runs as. No
//! process that shares the agent's memory (the cloned namespace init) is
//! ever a member: the out-of-memory killer kills every process sharing its
//! victim's memory, and the agent would be one of them. The
//! leaf's event counters say afterwards which ceiling was reached. The
//! leaf is removed once empty (now, or at a later call).

use std::fs::{self, OpenOptions};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Which ceiling a call reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reached {
    /// A fork or clone failed at the process ceiling.
    Processes,
    /// The memory ceiling's out-of-memory killer ended a process.
    Memory,
}

/// A cgroup directory below which the agent makes its leaves, and the
/// controllers a leaf there gets.
#[derive(Debug, Clone)]
struct Parent {
    dir: PathBuf,
    v2: bool,
    pids: bool,
    memory: bool,
}

/// Where this process can make leaves: one cgroup v2 parent with both
/// controllers, or the v1 `pids` and `memory` hierarchies (either may be
/// missing).
#[derive(Debug, Default)]
pub(super) struct Layout {
    parents: Vec<Parent>,
}

impl Layout {
    /// Whether a leaf bounds the number of processes.
    pub(super) fn processes(&self) -> bool {
        self.parents.iter().any(|p| p.pids)
    }

    /// Whether a leaf bounds memory.
    pub(super) fn memory(&self) -> bool {
        self.parents.iter().any(|p| p.memory)
    }

    /// Which cgroups hold the process ceiling (`processes`) or the memory
    /// ceiling, for the status line.
    pub(super) fn describe(&self, processes: bool) -> String {
        let named: Vec<String> = self
            .parents
            .iter()
            .filter(|p| if processes { p.pids } else { p.memory })
            .map(|p| {
                let version = if p.v2 { "v2" } else { "v1" };
                format!("a cgroup {version} leaf below {}", p.dir.display())
            })
            .collect();
        named.join(" and ")
    }
}

/// The layout of this process, probed once.
pub(super) fn layout() -> &'static Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    LAYOUT.get_or_init(|| {
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let candidates = candidates(&mounts, &own);
        // One v2 leaf holds both controllers; the v1 hierarchies only
        // where no v2 parent is usable.
        let (v2, v1): (Vec<Parent>, Vec<Parent>) = candidates.into_iter().partition(|p| p.v2);
        let parents = match v2.into_iter().find_map(usable) {
            Some(parent) => vec![parent],
            None => v1.into_iter().filter_map(usable).collect(),
        };
        Layout { parents }
    })
}

/// The cgroup directories to try, from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`: the agent's own v2 cgroup and its parent (a
/// delegated subtree whose leaf the agent runs in), or its own v1 `pids`
/// and `memory` cgroups. v2 is preferred when it has the controllers.
fn candidates(mountinfo: &str, own: &str) -> Vec<Parent> {
    let mut v2 = Vec::new();
    let mut v1 = Vec::new();
    for line in mountinfo.lines() {
        let Some((mount, fstype, options)) = cgroup_mount(line) else {
            continue;
        };
        let (root, point) = mount;
        if fstype == "cgroup2" {
            let Some(path) = own_path(own, |controllers| controllers.is_empty()) else {
                continue;
            };
            let Some(dir) = below_mount(&point, &root, &path) else {
                continue;
            };
            let parent = dir.parent().map(Path::to_path_buf);
            for dir in std::iter::once(dir).chain(parent.filter(|p| p.starts_with(&point))) {
                v2.push(Parent {
                    dir,
                    v2: true,
                    pids: true,
                    memory: true,
                });
            }
        } else {
            for controller in ["pids", "memory"] {
                if !options.split(',').any(|o| o == controller) {
                    continue;
                }
                let Some(path) = own_path(own, |c| c.split(',').any(|c| c == controller)) else {
                    continue;
                };
                if let Some(dir) = below_mount(&point, &root, &path) {
                    v1.push(Parent {
                        dir,
                        v2: false,
                        pids: controller == "pids",
                        memory: controller == "memory",
                    });
                }
            }
        }
    }
    v2.extend(v1);
    v2
}

/// A mountinfo line of a cgroup file system: ((its root, where it is
/// mounted), its type, its super options).
fn cgroup_mount(line: &str) -> Option<((String, PathBuf), &str, &str)> {
    let (left, right) = line.split_once(" - ")?;
    let mut fields = left.split(' ');
    let root = fields.nth(3)?.to_string();
    let point = PathBuf::from(fields.next()?);
    let mut right = right.split(' ');
    let fstype = right.next()?;
    let options = right.nth(1)?;
    matches!(fstype, "cgroup" | "cgroup2").then_some(((root, point), fstype, options))
}

/// The agent's cgroup path in the hierarchy whose controller field
/// matches `wanted`.
fn own_path(own: &str, wanted: impl Fn(&str) -> bool) -> Option<String> {
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        wanted(controllers).then(|| path.to_string())
    })
}

/// `path` (of the hierarchy) as a directory below the mount of `root`
/// at `point`; `None` when the mount does not show it.
fn below_mount(point: &Path, root: &str, path: &str) -> Option<PathBuf> {
    let rest = if root == "/" {
        path
    } else {
        path.strip_prefix(root)?
    };
    let rest = rest.trim_start_matches('/');
    if rest.split('/').any(|part| part == "..") {
        return None;
    }
    if rest.is_empty() {
        return Some(point.to_path_buf());
    }
    Some(point.join(rest))
}

/// `candidate` if the agent can make a leaf there with the controllers
/// it names (v2: they are in its `cgroup.subtree_control`, or can be put
/// there); left-over leaves of ended agents are removed on the way.
fn usable(candidate: Parent) -> Option<Parent> {
    if candidate.v2 {
        let control = candidate.dir.join("cgroup.subtree_control");
        let enabled = |text: &str| {
            let has = |c: &str| text.split_whitespace().any(|w| w == c);
            has("pids") && has("memory")
        };
        let current = fs::read_to_string(&control).ok()?;
        if !enabled(&current) {
            fs::write(&control, "+pids +memory").ok()?;
            if !enabled(&fs::read_to_string(&control).ok()?) {
                return None;
            }
        }
    }
    remove_stale(&candidate.dir);
    let probe = candidate
        .dir
        .join(format!("agentgate-{}-probe", std::process::id()));
    fs::create_dir(&probe).ok()?;
    let writable = OpenOptions::new()
        .write(true)
        .open(probe.join("cgroup.procs"))
        .is_ok();
    let _ = fs::remove_dir(&probe);
    writable.then_some(candidate)
}

/// Removes the empty leaves of agents that are no longer running.
fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("agentgate-"))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// One call's leaf: a directory in each hierarchy of the layout.
#[derive(Debug)]
pub(super) struct Leaf {
    dirs: Vec<Parent>,
}

/// Leaves whose processes had not all exited when their call ended;
/// removed at a later call.
static LINGERING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl Leaf {
    /// Makes the leaf with these ceilings (`None`: none of that kind);
    /// returns it and the `cgroup.procs` descriptors the call's first
    /// process writes `0` to.
    pub(super) fn create(
        layout: &Layout,
        processes: Option<u64>,
        memory: Option<u64>,
    ) -> io::Result<(Leaf, Vec<OwnedFd>)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        remove_lingering();
        let name = format!(
            "agentgate-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut leaf = Leaf { dirs: Vec::new() };
        let mut procs = Vec::new();
        for parent in &layout.parents {
            let wanted =
                (parent.pids && processes.is_some()) || (parent.memory && memory.is_some());
            if !wanted {
                continue;
            }
            let dir = parent.dir.join(&name);
            fs::create_dir(&dir)?;
            leaf.dirs.push(Parent {
                dir: dir.clone(),
                ..parent.clone()
            });
            for (file, value) in settings(parent, processes, memory) {
                write_setting(&dir.join(file), &value)?;
            }
            let file = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(dir.join("cgroup.procs"))?;
            procs.push(OwnedFd::from(file));
        }
        Ok((leaf, procs))
    }

    /// Which ceiling the call reached, if any.
    pub(super) fn reached(&self) -> Option<Reached> {
        for dir in &self.dirs {
            if dir.pids && counter(&dir.dir.join("pids.events"), "max") > 0 {
                return Some(Reached::Processes);
            }
            let (file, key) = if dir.v2 {
                ("memory.events", "oom_kill")
            } else {
                ("memory.oom_control", "oom_kill")
            };
            if dir.memory && counter(&dir.dir.join(file), key) > 0 {
                return Some(Reached::Memory);
            }
        }
        None
    }
}

impl Drop for Leaf {
    /// Kills what is left of the call and removes the leaf; one whose
    /// processes are still exiting is removed at a later call.
    fn drop(&mut self) {
        for dir in &self.dirs {
            kill_members(dir);
            if fs::remove_dir(&dir.dir).is_err() && dir.dir.exists() {
                match LINGERING.lock() {
                    Ok(mut lingering) => lingering.push(dir.dir.clone()),
                    Err(poisoned) => poisoned.into_inner().push(dir.dir.clone()),
                }
            }
        }
    }
}

/// The files a leaf of `parent` gets, in order.
fn settings(
    parent: &Parent,
    processes: Option<u64>,
    memory: Option<u64>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let (true, Some(n)) = (parent.pids, processes) {
        out.push(("pids.max", n.to_string()));
    }
    if let (true, Some(bytes)) = (parent.memory, memory) {
        if parent.v2 {
            out.push(("memory.max", bytes.to_string()));
            out.push(("memory.swap.max", "0".to_string()));
            out.push(("memory.oom.group", "1".to_string()));
        } else {
            out.push(("memory.limit_in_bytes", bytes.to_string()));
            out.push(("memory.memsw.limit_in_bytes", bytes.to_string()));
        }
    }
    out
}

/// Writes a leaf setting; one the kernel lacks (no swap accounting, an
/// older kernel without `memory.oom.group`) is skipped, as the ceiling
/// itself holds without it.
fn write_setting(path: &Path, value: &str) -> io::Result<()> {
    let optional = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        matches!(
            n,
            "memory.swap.max" | "memory.oom.group" | "memory.memsw.limit_in_bytes"
        )
    });
    match fs::write(path, value) {
        Err(_) if optional => Ok(()),
        other => other,
    }
}

/// The value of `key` in a flat-keyed cgroup file (`max 3`).
fn counter(path: &Path, key: &str) -> u64 {
    fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let (name, value) = line.split_once(' ')?;
                (name == key).then(|| value.trim().parse().ok())?
            })
        })
        .unwrap_or(0)
}

/// SIGKILL to every process still in the leaf (`cgroup.kill` on v2).
fn kill_members(dir: &Parent) {
    if dir.v2 && fs::write(dir.dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    let Ok(text) = fs::read_to_string(dir.dir.join("cgroup.procs")) else {
        return;
    };
    for pid in text
        .lines()
        .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
    {
        if pid > 0 {
            // SAFETY: kill takes integers only.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Removes the lingering leaves that are empty by now.
fn remove_lingering() {
    let mut lingering = match LINGERING.lock() {
        Ok(lingering) => lingering,
        Err(poisoned) => poisoned.into_inner(),
    };
    lingering.retain(|dir| fs::remove_dir(dir).is_err() && dir.exists());
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:14 - cgroup cgroup rw,pids
33 25 0:28 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory
36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:15 - cgroup2 cgroup2 rw
40 25 0:40 / /proc rw - proc proc rw";

    const OWN: &str = "\
8:pids:/
4:memory:/process_api/44b9
0::/user.slice/agent.scope";

    #[test]
    fn candidates_come_from_mountinfo_and_own_cgroup() {
        let found = candidates(MOUNTINFO, OWN);
        let dirs: Vec<(&Path, bool, bool, bool)> = found
            .iter()
            .map(|p| (p.dir.as_path(), p.v2, p.pids, p.memory))
            .collect();
        assert_eq!(
            dirs,
            [
                (
                    Path::new("/sys/fs/cgroup/unified/user.slice/agent.scope"),
                    true,
                    true,
                    true
                ),
                (
                    Path::new("/sys/fs/cgroup/unified/user.slice"),
                    true,
                    true,
                    true
                ),
                (Path::new("/sys/fs/cgroup/pids"), false, true, false),
                (
                    Path::new("/sys/fs/cgroup/memory/process_api/44b9"),
                    false,
                    false,
                    true
                ),
            ]
        );
    }

    #[test]
    fn the_status_names_the_hierarchy_of_each_ceiling() {
        let layout = Layout {
            parents: candidates(MOUNTINFO, OWN).into_iter().skip(2).collect(),
        };
        assert!(layout.processes() && layout.memory());
        assert_eq!(
            layout.describe(true),
            "a cgroup v1 leaf below /sys/fs/cgroup/pids"
        );
        assert_eq!(
            layout.describe(false),
            "a cgroup v1 leaf below /sys/fs/cgroup/memory/process_api/44b9"
        );
        assert!(!Layout::default().processes());
    }

    #[test]
    fn a_mount_of_a_subtree_maps_paths_below_it() {
        assert_eq!(
            below_mount(Path::new("/sys/fs/cgroup"), "/docker/abc", "/docker/abc/x"),
            Some(PathBuf::from("/sys/fs/cgroup/x"))
        );
        assert_eq!(
            below_mount(Path::new("/sys/fs/cgroup"), "/docker/abc", "/other"),
            None
        );
        assert_eq!(below_mount(Path::new("/sys/fs/cgroup"), "/", "/../x"), None);
    }

    #[test]
    fn counters_and_settings() {
        let dir =
            std::env::temp_dir().join(format!("agentgate-cgroup-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let events = dir.join("pids.events");
        fs::write(&events, "max 3\n").unwrap();
        assert_eq!(counter(&events, "max"), 3);
        fs::write(&events, "oom 0\noom_kill 2\n").unwrap();
        assert_eq!(counter(&events, "oom_kill"), 2);
        assert_eq!(counter(&dir.join("missing"), "max"), 0);
        let v1 = Parent {
            dir: dir.clone(),
            v2: false,
            pids: false,
            memory: true,
        };
        assert_eq!(
            settings(&v1, Some(5), Some(1 << 20)),
            [
                ("memory.limit_in_bytes", "1048576".to_string()),
                ("memory.memsw.limit_in_bytes", "1048576".to_string())
            ]
        );
        let v2 = Parent {
            v2: true,
            pids: true,
            ..v1
        };
        assert_eq!(
            settings(&v2, Some(5), None),
            [("pids.max", "5".to_string())]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
