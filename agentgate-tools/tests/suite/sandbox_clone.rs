//! Commands started without a fork of the agent (`PreparedCommand::spawn`,
//! the clone path): the same results as the fork path
//! (`PreparedCommand::apply` on a tokio command) on a table of commands
//! that exercise exit codes, signals, pipes, descriptors, credentials and
//! the namespace; the init that shares the agent's memory out of the
//! command's reach; many launches at once on a busy multi-threaded
//! runtime; a dropped child killed and reaped; errors that say what
//! failed.

#![cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use agentgate_tools::{
    CallScope, Guard, PreparedCommand, Sandbox, SandboxMode, SandboxPolicy, SandboxedChild,
};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::support::temp_dir;

/// What a command printed and how it ended.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    stdout: String,
    stderr: String,
    status: ExitStatus,
}

fn scope(dir: &Path) -> CallScope {
    CallScope {
        session_id: "ses_clone".to_string(),
        directory: dir.to_path_buf(),
        worktree: dir.to_path_buf(),
        cwd: dir.to_path_buf(),
        tool_output: None,
        approved: Vec::new(),
    }
}

/// Whether this machine runs the clone path's preconditions (a PID
/// namespace and the capability drop); the tests say so and pass
/// otherwise, as the fork path then runs.
fn clone_path_available(sandbox: &Sandbox) -> bool {
    let status = sandbox.status();
    let enforced = |guard: &Guard| matches!(guard, Guard::Enforced { .. });
    let available = enforced(&status.descendants) && enforced(&status.capabilities);
    if !available {
        eprintln!("no PID namespace or capability drop here: the fork path runs");
    }
    available
}

/// A `workspace-write` sandbox and a scratch project named `name`;
/// `None` where the clone path's preconditions are missing here.
fn setup(name: &str) -> Option<(Sandbox, PathBuf)> {
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    clone_path_available(&sandbox).then(|| (sandbox, temp_dir("sandbox-clone", name)))
}

async fn read_all(mut reader: impl AsyncRead + Unpin) -> String {
    let mut bytes = Vec::new();
    let _ = reader.read_to_end(&mut bytes).await;
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn collect(mut child: SandboxedChild) -> Run {
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (stdout, stderr, status) = tokio::join!(read_all(stdout), read_all(stderr), child.wait());
    Run {
        stdout,
        stderr,
        status: status.unwrap(),
    }
}

fn prepared(sandbox: &Sandbox, dir: &Path) -> PreparedCommand {
    sandbox.prepare(&scope(dir)).unwrap()
}

async fn via_clone(sandbox: &Sandbox, dir: &Path, script: &str) -> Run {
    let mut prepared = prepared(sandbox, dir);
    let child = prepared
        .spawn(Path::new("bash"), ["-c", script], dir)
        .unwrap();
    collect(child).await
}

async fn via_fork(sandbox: &Sandbox, dir: &Path, script: &str) -> Run {
    let mut prepared = prepared(sandbox, dir);
    let mut command = tokio::process::Command::new("bash");
    command
        .args(["-c", script])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    prepared.apply(&mut command);
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (stdout, stderr, status) = tokio::join!(read_all(stdout), read_all(stderr), child.wait());
    Run {
        stdout,
        stderr,
        status: status.unwrap(),
    }
}

/// Commands whose every observable result must not depend on how they
/// were started.
const COMMANDS: &[&str] = &[
    "echo out; echo err >&2; exit 3",
    "kill -TERM $$",
    "kill -KILL $$",
    "kill -HUP $$; echo not-reached",
    "trap 'echo got-term; exit 9' TERM; kill -TERM $$; echo after",
    // The namespace's processes, listed by bash itself (a pipeline's
    // members would race the listing).
    "echo $$ $PPID; echo /proc/[0-9]*",
    "pwd; cat; echo stdin-done",
    "env | sort",
    "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|SigBlk|SigIgn|SigCgt)' /proc/self/status",
    "ls -l /proc/self/fd | awk '{print $9, $10, $11}' | sed 's/\\[.*\\]//'",
    "umask; ulimit -n; id -u; id -g",
    "sleep 5 & echo started",
    // Not State: whether the init is still closing descriptors or already
    // waiting when grep reads it is a race in either path.
    "grep -E '^(Name|Uid|Gid)' /proc/1/status",
    "head -c 300000 /dev/zero | tr '\\0' a; head -c 100000 /dev/zero | tr '\\0' b >&2",
    "exec 1>&-; echo stdout-closed >&2",
    "touch inside && echo inside-ok; touch /tmp/agent-clone-outside-$$ 2>&1 | sed 's/.*: //'",
    "cat /proc/1/environ 2>&1 | sed 's/.*: //'; cat /proc/1/maps 2>&1 | sed 's/.*: //'",
    "echo x > /dev/null && echo null-ok; ls /dev | sort | tr '\\n' ' '",
    "ip -o link 2>/dev/null | grep -c . || cat /proc/net/dev | grep -c :",
    "(sleep 0.2; echo late) & wait; echo waited",
];

#[tokio::test]
async fn the_clone_and_fork_paths_give_the_same_results() {
    let Some((sandbox, dir)) = setup("differential") else {
        return;
    };
    for script in COMMANDS {
        let _ = std::fs::remove_file(dir.join("inside"));
        let cloned = via_clone(&sandbox, &dir, script).await;
        let _ = std::fs::remove_file(dir.join("inside"));
        let forked = via_fork(&sandbox, &dir, script).await;
        assert_eq!(cloned, forked, "{script}");
    }
    // The table means something: a few results, as expected.
    let run = via_clone(&sandbox, &dir, COMMANDS[0]).await;
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.status.code()),
        ("out\n", "err\n", Some(3))
    );
    let run = via_clone(&sandbox, &dir, COMMANDS[1]).await;
    assert_eq!(run.status.code(), Some(143));
    let run = via_clone(&sandbox, &dir, "echo $$ $PPID").await;
    assert_eq!(run.stdout, "2 1\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The pid the agent holds is the namespace's init itself (the fork path's
/// is a watcher outside the namespace): the clone path really ran.
#[tokio::test]
async fn the_agents_child_is_the_namespaces_init() {
    let Some((sandbox, dir)) = setup("init") else {
        return;
    };
    let mut prepared = prepared(&sandbox, &dir);
    let mut child = prepared.spawn(Path::new("sleep"), ["1"], &dir).unwrap();
    let pid = child.id().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let nspid = status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))
        .unwrap();
    assert_eq!(nspid.split_whitespace().last(), Some("1"), "{status}");
    child.start_kill().unwrap();
    let ended = child.wait().await.unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&ended),
        Some(9)
    );
    assert_eq!(child.id(), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The attack a prompt-injected command would try on an init that shares
/// the agent's memory: read or write it through `/proc/1/mem`, its maps,
/// its environment, `ptrace` or `process_vm_readv`, looking for a secret
/// this process holds. Every door is shut; the same methods work on the
/// command's own process, so the script itself is sound.
pub(super) async fn init_memory_is_out_of_reach(sandbox: &Sandbox, dir: &Path) {
    let secret = format!(
        "agent-secret-{}-{:x}",
        std::process::id(),
        dir.as_os_str().len() * 7919
    );
    // Held in this process's heap while the command runs.
    let held = std::hint::black_box(secret.clone().into_bytes());
    let script = format!(
        r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, fn):
    try:
        fn()
        print(name, "open")
    except Exception as e:
        print(name, "shut", type(e).__name__)
def mem_rw(pid):
    with open("/proc/%s/mem" % pid, "r+b") as f:
        f.seek(0x400000)
        f.read(1)
def maps(pid):
    open("/proc/%s/maps" % pid).read()
def environ(pid):
    open("/proc/%s/environ" % pid, "rb").read()
def attach(pid):
    if libc.ptrace(16, pid, None, None) == -1:
        raise OSError(ctypes.get_errno(), "ptrace")
def links(pid):
    # The init's working directory, root and descriptors: the links the
    # kernel guards like its memory (the agent's open files behind them).
    for link in ["cwd", "root", "exe"]:
        os.readlink("/proc/%s/%s" % (pid, link))
def vm_read(pid):
    buf = ctypes.create_string_buffer(8)
    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    local = iovec(ctypes.addressof(buf), 8)
    remote = iovec(0x400000, 8)
    if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) == -1:
        raise OSError(ctypes.get_errno(), "process_vm_readv")
for name, fn in [("mem", mem_rw), ("maps", maps), ("environ", environ), ("attach", attach), ("vm_read", vm_read), ("links", links)]:
    attempt("init-" + name, lambda: fn(1))
attempt("self-maps", lambda: maps("self"))
attempt("self-environ", lambda: environ("self"))
attempt("self-links", lambda: links("self"))
found = False
for pid in os.listdir("/proc"):
    # This process holds the secret in its own script text.
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        with open("/proc/%s/mem" % pid, "rb") as f:
            for line in open("/proc/%s/maps" % pid):
                lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
                try:
                    f.seek(lo)
                    if b"{secret}" in f.read(hi - lo):
                        found = True
                except Exception:
                    pass
    except Exception:
        pass
print("secret", "found" if found else "not-found")
"#
    );
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .arg("-c")
                .arg("pass")
                .status()
                .is_ok_and(|s| s.success())
        })
        .expect("python for the attack script");
    let mut prepared = sandbox.prepare(&scope(dir)).unwrap();
    let child = prepared
        .spawn(Path::new(python), ["-c", script.as_str()], dir)
        .unwrap();
    let run = collect(child).await;
    let out = &run.stdout;
    for door in ["mem", "maps", "environ", "attach", "vm_read", "links"] {
        assert!(
            out.contains(&format!("init-{door} shut")),
            "{door}: {out}\n{}",
            run.stderr
        );
    }
    assert!(out.contains("self-maps open"), "control: {out}");
    assert!(out.contains("self-environ open"), "control: {out}");
    assert!(out.contains("self-links open"), "control: {out}");
    assert!(out.contains("secret not-found"), "{out}");
    drop(held);
}

#[tokio::test]
async fn the_init_sharing_the_agents_memory_is_out_of_the_commands_reach() {
    let Some((sandbox, dir)) = setup("attack") else {
        return;
    };
    init_memory_is_out_of_reach(&sandbox, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Many launches at once from a multi-threaded runtime whose other threads
/// allocate and free all the while: every command gets its own arguments,
/// output and status.
#[test]
fn concurrent_launches_on_a_busy_runtime_each_get_their_own_results() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let Some((sandbox, dir)) = setup("concurrent") else {
            return;
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut kept: Vec<Vec<u8>> = Vec::new();
                let mut i = 0usize;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    kept.push(vec![i as u8; 4096 + i % 8192]);
                    if kept.len() > 256 {
                        kept.drain(..128);
                    }
                    i += 1;
                    if i.is_multiple_of(64) {
                        tokio::task::yield_now().await;
                    }
                }
                i
            })
        };
        let mut tasks = Vec::new();
        for i in 0..48 {
            let sandbox = sandbox.clone();
            let dir = dir.clone();
            tasks.push(tokio::spawn(async move {
                let script = format!(
                    "echo task-{i}; head -c {} /dev/zero | wc -c; exit {}",
                    i * 1000,
                    i % 7
                );
                (i, via_clone(&sandbox, &dir, &script).await)
            }));
        }
        for task in tasks {
            let (i, run) = task.await.unwrap();
            assert_eq!(run.stdout, format!("task-{i}\n{}\n", i * 1000), "{run:?}");
            assert_eq!(run.stderr, "");
            assert_eq!(run.status.code(), Some(i % 7));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(churn.await.unwrap() > 0);
        let _ = std::fs::remove_dir_all(&dir);
    });
}

fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(") ")?.1;
    after.chars().next()
}

/// A child dropped while it runs is killed with its namespace, and reaped
/// by a later launch.
#[tokio::test]
async fn a_dropped_child_is_killed_and_reaped_later() {
    let Some((sandbox, dir)) = setup("dropped") else {
        return;
    };
    let mut prepared = prepared(&sandbox, &dir);
    let child = prepared
        .spawn(Path::new("bash"), ["-c", "sleep 60 & sleep 60"], &dir)
        .unwrap();
    let pid = child.id().unwrap();
    drop(child);
    let mut state = process_state(pid);
    for _ in 0..200 {
        if matches!(state, None | Some('Z')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        state = process_state(pid);
    }
    assert!(matches!(state, None | Some('Z')), "{state:?}");
    // The next launch reaps it.
    via_clone(&sandbox, &dir, "true").await;
    assert_eq!(process_state(pid), None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn launch_errors_say_what_failed() {
    let Some((sandbox, dir)) = setup("errors") else {
        return;
    };
    let mut command = prepared(&sandbox, &dir);
    let error = command
        .spawn(Path::new("no-such-program-here"), ["x"], &dir)
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");

    let mut command = prepared(&sandbox, &dir);
    let error = command
        .spawn(Path::new("/nonexistent/bin/tool"), ["x"], &dir)
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");

    let missing = PathBuf::from("/nonexistent-clone-cwd");
    let mut command = prepared(&sandbox, &dir);
    let error = command
        .spawn(Path::new("true"), Vec::<String>::new(), &missing)
        .unwrap_err();
    assert!(error.to_string().contains("working directory"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
