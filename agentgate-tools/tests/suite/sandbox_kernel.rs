//! The kernel layer of the sandbox against real processes: with every
//! permission allowed, a sandboxed `bash -c` cannot reach a daemon's unix
//! socket, read the agent's `/proc/<pid>/environ`, `ptrace`, use a
//! capability (even as root), read a credential folder inside a writable
//! root, or see variables the configuration does not name. Each check has
//! a control — the same command without the sandbox, or with the one knob
//! that allows it — so a failure is the sandbox's doing.
//!
//! CI runs as root: `unprivileged_user_gets_the_same_layer` re-runs the
//! checks that apply to any user as `nobody`, in a copy of this test binary
//! started with `setuid`.
#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgate_core::{Tool, ToolContext, ToolOutput};
use agentgate_permission::{AllowAll, PermissionGate};
use agentgate_tools::{BashTool, EnvFilter, Guard, Sandbox, SandboxMode, SandboxPolicy};
use serde_json::json;

use super::support::{is_root, rerun_as_nobody, temp_dir};

/// Set (to the outer test's pid) in the copy of this binary that runs as
/// `nobody`.
const INNER: &str = "AGENT_SANDBOX_KERNEL_INNER";

struct Project {
    dir: PathBuf,
    ctx: ToolContext,
}

impl Project {
    fn new(name: &str) -> Self {
        let dir = temp_dir("sandbox-kernel", name);
        let permissions = PermissionGate::new();
        permissions.set_approver(Arc::new(AllowAll));
        let ctx = ToolContext::new("ses_kernel", "msg_1", "call_1", permissions)
            .with_directories(dir.clone(), dir.clone());
        Project { dir, ctx }
    }

    async fn run(&self, tool: &BashTool, command: &str) -> ToolOutput {
        tool.execute(json!({"command": command, "timeout": 20_000}), &self.ctx)
            .await
            .unwrap()
    }

    /// Writes `script` into the project and runs it with python.
    async fn python(&self, tool: &BashTool, script: &str) -> String {
        std::fs::write(self.dir.join("probe.py"), script).unwrap();
        self.run(tool, &format!("{} probe.py", python()))
            .await
            .output
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The system python (the pyenv shims on a developer's PATH need
/// variables the sandbox does not pass).
fn python() -> &'static str {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("python3")
}

fn sandboxed(policy: SandboxPolicy) -> BashTool {
    let sandbox = Sandbox::new(policy);
    let status = sandbox.status();
    assert!(
        !status.is_degraded(),
        "the sandbox is not fully enforced here: {}",
        status.summary()
    );
    BashTool::new()
        .with_kill_grace(Duration::from_millis(300))
        .with_sandbox(sandbox)
}

fn workspace_write() -> BashTool {
    sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite))
}

fn unsandboxed() -> BashTool {
    BashTool::new().with_sandbox(Sandbox::new(SandboxPolicy::new(
        SandboxMode::DangerFullAccess,
    )))
}

/// A daemon outside the sandbox: a unix socket (a path or an abstract
/// name) that greets whoever connects.
fn daemon(addr: &SocketAddr) -> UnixListener {
    let listener = UnixListener::bind_addr(addr).unwrap();
    let server = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        for stream in server.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = stream.write_all(b"hello-from-daemon");
        }
    });
    listener
}

/// A fresh directory with a path short enough for a socket in it
/// (`sun_path` holds 108 bytes).
fn socket_dir() -> PathBuf {
    let base = if Path::new("/tmp").is_dir() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    agentgate_testing::scratch_dir_in(&base, "ask")
}

/// A python script that connects to `target` (a path, or `@name` for an
/// abstract socket) and prints what it gets or the error.
fn connect_script(target: &str) -> String {
    format!(
        r#"import socket
target = {target:?}
if target.startswith("@"):
    target = "\0" + target[1:]
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(target)
    print("got", s.recv(100).decode())
except OSError as e:
    print("refused", e.errno, e)
a, b = socket.socketpair()
a.send(b"pair-ok")
print(b.recv(10).decode())
"#
    )
}

#[test]
fn status_reports_the_kernel_layer() {
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_deny_read("/nonexistent");
    let sandbox = Sandbox::new(policy);
    let status = sandbox.status();
    for guard in [
        &status.seccomp,
        &status.abstract_unix_sockets,
        &status.private_proc,
        &status.capabilities,
        &status.credential_masking,
    ] {
        assert!(matches!(guard, Guard::Enforced { .. }), "{status:#?}");
    }
    assert!(
        status.summary().contains("private /proc enforced"),
        "{}",
        status.summary()
    );
    let json = serde_json::to_value(status).unwrap();
    assert_eq!(json["seccomp"]["state"], "enforced");
    assert_eq!(json["credential_masking"]["state"], "enforced");

    // Nothing to mask without denied paths, or in read-only mode (where
    // Landlock denies them everywhere).
    let plain = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    assert_eq!(plain.status().credential_masking, Guard::NotRequested);
    let read_only =
        Sandbox::new(SandboxPolicy::new(SandboxMode::ReadOnly).with_default_secret_paths());
    assert_eq!(read_only.status().credential_masking, Guard::NotRequested);
    assert!(matches!(read_only.status().seccomp, Guard::Enforced { .. }));

    let open = Sandbox::new(SandboxPolicy::new(SandboxMode::DangerFullAccess));
    // The call ceilings apply in every mode (they bound resources).
    for (name, guard) in open.status().guards().into_iter().skip(3) {
        if name == "limits" {
            continue;
        }
        assert_eq!(*guard, Guard::NotRequested, "{name}");
    }
}

#[tokio::test]
async fn a_daemons_unix_socket_cannot_be_reached() {
    let p = Project::new("unix-socket");
    let outside = socket_dir();
    let path = outside.join("daemon.sock");
    let _listener = daemon(&SocketAddr::from_pathname(&path).unwrap());
    let script = connect_script(path.to_str().unwrap());

    let out = p.python(&workspace_write(), &script).await;
    assert!(out.contains("refused 1 "), "{out}");
    assert!(!out.contains("hello-from-daemon"), "{out}");
    assert!(
        out.contains("pair-ok"),
        "socketpair must keep working: {out}"
    );

    // Control: with unix sockets allowed knowingly, the same script
    // reaches the daemon.
    let allowed =
        sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_unix_sockets(true));
    let out = p.python(&allowed, &script).await;
    assert!(out.contains("got hello-from-daemon"), "{out}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[tokio::test]
async fn abstract_sockets_outside_stay_out_of_reach_even_when_unix_sockets_are_allowed() {
    let allowed =
        sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_unix_sockets(true));
    let scoped = matches!(
        &allowed.sandbox().status().abstract_unix_sockets,
        Guard::Enforced { by } if by.contains("landlock")
    );
    if !scoped {
        eprintln!(
            "skipped: this kernel has no Landlock ABI 6 ({})",
            allowed.sandbox().status().summary()
        );
        return;
    }
    let p = Project::new("abstract-socket");
    let name = format!("agent-sandbox-test-{}", std::process::id());
    let _listener = daemon(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap());
    let script = connect_script(&format!("@{name}"));
    let out = p.python(&allowed, &script).await;
    assert!(out.contains("refused 1 "), "{out}");
    let out = p.python(&unsandboxed(), &script).await;
    assert!(out.contains("got hello-from-daemon"), "control: {out}");
}

/// `/proc/<pid>/environ` of the process running the sandbox, and what
/// `/proc` and `/dev` hold.
async fn proc_and_dev(p: &Project, tool: &BashTool, pid: u32) -> String {
    p.run(
        tool,
        &format!(
            "cat /proc/{pid}/environ >/dev/null 2>&1 && echo environ-readable || echo environ-unreadable; \
             echo procs: $(ls /proc | grep -c '^[0-9]'); \
             grep -q '^Pid:' /proc/self/status && echo own-status-ok; \
             echo dev: $(ls -A /dev); cat <(echo subst-ok); echo x > /dev/null && echo null-ok; \
             head -c 4 /dev/urandom | wc -c"
        ),
    )
    .await
    .output
}

#[tokio::test]
async fn the_agents_proc_entries_are_not_reachable_and_dev_is_minimal() {
    let p = Project::new("proc");
    let pid = std::process::id();
    // A denied path outside makes Landlock grant reads entry by entry
    // from `/` (the host's /proc and /dev included): the new mounts must
    // stay readable under those rules too.
    let denied = temp_dir("sandbox-kernel", "proc-denied");
    for tool in [
        workspace_write(),
        sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_deny_read(&denied)),
    ] {
        let out = proc_and_dev(&p, &tool, pid).await;
        check_proc_and_dev(&out);
    }
    let _ = std::fs::remove_dir_all(&denied);

    // Control: without the sandbox the agent's environment is readable.
    let out = proc_and_dev(&p, &unsandboxed(), pid).await;
    assert!(out.contains("environ-readable"), "{out}");
}

fn check_proc_and_dev(out: &str) {
    assert!(out.contains("environ-unreadable"), "{out}");
    assert!(out.contains("own-status-ok"), "{out}");
    // bash, its command substitution, ls and grep, under init: a handful.
    let procs: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("procs: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(procs < 10, "{out}");
    let dev: Vec<&str> = out
        .lines()
        .find_map(|l| l.strip_prefix("dev: "))
        .unwrap()
        .split_whitespace()
        .collect();
    let allowed = [
        "fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom",
        "zero",
    ];
    assert!(dev.iter().all(|d| allowed.contains(d)), "{out}");
    assert!(dev.contains(&"null") && dev.contains(&"fd"), "{out}");
    for expected in ["subst-ok", "null-ok", "\n4"] {
        assert!(out.contains(expected), "{expected}: {out}");
    }
}

/// Makes each call the filter refuses and prints its errno (0: it worked).
fn refused_calls_script() -> String {
    format!(
        r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(ret):
    return ctypes.get_errno() if ret == -1 else 0
# PTRACE_TRACEME
print("ptrace", errno_of(libc.ptrace(0, 0, None, None)))
# process_vm_readv on our own memory
buf = ctypes.create_string_buffer(8)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.addressof(buf), 8)
remote = iovec(ctypes.addressof(buf), 8)
print("process_vm_readv", errno_of(libc.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)))
params = ctypes.create_string_buffer(120)
print("io_uring_setup", errno_of(libc.syscall({io_uring}, 1, params)))
# KEYCTL_GET_KEYRING_ID of the session keyring
print("keyctl", errno_of(libc.syscall({keyctl}, 0, -3, 1)))
"#,
        io_uring = libc::SYS_io_uring_setup,
        keyctl = libc::SYS_keyctl,
    )
}

fn errnos(out: &str) -> Vec<(String, i32)> {
    out.lines()
        .filter_map(|l| {
            let (name, errno) = l.split_once(' ')?;
            Some((name.to_string(), errno.trim().parse().ok()?))
        })
        .collect()
}

#[tokio::test]
async fn ptrace_and_the_other_refused_calls_fail_with_eperm() {
    let p = Project::new("seccomp");
    let script = refused_calls_script();
    let out = p.python(&workspace_write(), &script).await;
    let sandboxed = errnos(&out);
    assert_eq!(sandboxed.len(), 4, "{out}");
    for (name, errno) in &sandboxed {
        assert_eq!(*errno, libc::EPERM, "{name}: {out}");
    }
    // Control: unsandboxed, ptrace(TRACEME) and reading our own memory work.
    let out = p.python(&unsandboxed(), &script).await;
    let open = errnos(&out);
    assert!(open.contains(&("ptrace".to_string(), 0)), "{out}");
    assert!(open.contains(&("process_vm_readv".to_string(), 0)), "{out}");
}

/// A file only a capability can read (mode 000: even its owner may not),
/// a `chown` to another user, `mknod`, and the capability sets.
async fn capability_calls(p: &Project, tool: &BashTool) -> String {
    std::fs::write(p.dir.join("locked"), "locked-content").unwrap();
    std::fs::set_permissions(
        p.dir.join("locked"),
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    let _ = std::fs::remove_file(p.dir.join("node"));
    std::fs::write(p.dir.join("mine"), "x").unwrap();
    p.run(
        tool,
        "cat locked; chown 65534:65534 mine && echo chown-worked; \
         mknod node c 1 3 && echo mknod-worked; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status",
    )
    .await
    .output
}

#[tokio::test]
async fn root_has_no_capabilities_under_the_sandbox() {
    if !is_root() {
        eprintln!(
            "skipped: not root (an unprivileged user has no capabilities to lose; \
             unprivileged_user_gets_the_same_layer checks the sets)"
        );
        return;
    }
    let p = Project::new("caps");
    let out = capability_calls(&p, &workspace_write()).await;
    assert!(!out.contains("locked-content"), "{out}");
    assert!(!out.contains("chown-worked"), "{out}");
    assert!(!out.contains("mknod-worked"), "{out}");
    for set in ["CapEff", "CapPrm", "CapBnd"] {
        assert!(
            out.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {out}"
        );
    }
    // Control: root without the sandbox does all three.
    let out = capability_calls(&p, &unsandboxed()).await;
    for expected in ["locked-content", "chown-worked", "mknod-worked"] {
        assert!(out.contains(expected), "control {expected}: {out}");
    }
}

#[tokio::test]
async fn a_credential_folder_inside_a_writable_root_is_masked() {
    let p = Project::new("mask");
    let ssh = p.dir.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), "PRIVATE-KEY").unwrap();
    std::fs::write(p.dir.join(".netrc"), "machine x password NETRC-SECRET").unwrap();
    std::fs::write(p.dir.join("code.rs"), "fn main() {}").unwrap();
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite)
        .with_deny_read(&ssh)
        .with_deny_read(p.dir.join(".netrc"));
    let tool = sandboxed(policy);
    let out = p
        .run(
            &tool,
            "cat ./.ssh/id_ed25519; ls .ssh; cat .netrc; rm -rf .ssh; mv .netrc moved; \
             echo new > .ssh/planted; echo edited >> code.rs && echo code-writable",
        )
        .await;
    for secret in ["PRIVATE-KEY", "NETRC-SECRET"] {
        assert!(!out.output.contains(secret), "{}", out.output);
    }
    assert!(out.output.contains("code-writable"), "{}", out.output);
    assert!(
        out.output
            .contains("read of a protected path was blocked by the sandbox"),
        "{}",
        out.output
    );
    // The host's files are untouched.
    assert_eq!(
        std::fs::read_to_string(ssh.join("id_ed25519")).unwrap(),
        "PRIVATE-KEY"
    );
    assert!(p.dir.join(".netrc").exists() && !p.dir.join("moved").exists());
    assert!(!ssh.join("planted").exists());

    // Control: the same policy without the kernel layer's mounts would
    // leave them readable; unsandboxed they are.
    let out = p.run(&unsandboxed(), "cat .ssh/id_ed25519").await;
    assert!(out.output.contains("PRIVATE-KEY"), "{}", out.output);
}

/// An agent environment with the usual suspects.
fn agent_environment() -> Vec<(OsString, OsString)> {
    [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", "/home/agent-test".to_string()),
        ("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.1".to_string()),
        ("DOCKER_HOST", "unix:///var/run/docker.sock".to_string()),
        ("FOO_TOKEN", "leak-foo".to_string()),
        ("MY_API_KEY", "leak-api".to_string()),
        ("AWS_ACCESS_KEY_ID", "leak-aws-id".to_string()),
        ("AWS_REGION", "leak-aws-region".to_string()),
        ("GH_TOKEN", "leak-gh".to_string()),
        ("GH_HOST", "leak-gh-host".to_string()),
        ("DATABASE_URL", "postgres://u:leak-db@h/db".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect()
}

#[tokio::test]
async fn only_core_and_configured_variables_reach_commands() {
    let p = Project::new("env");
    let tool = BashTool::new().with_sandbox(
        Sandbox::new(SandboxPolicy::default()).with_base_environment(agent_environment()),
    );
    let out = p.run(&tool, "env").await.output;
    assert!(out.contains("HOME=/home/agent-test"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("PATH=")), "{out}");
    for name in [
        "SSH_AUTH_SOCK",
        "DOCKER_HOST",
        "FOO_TOKEN",
        "MY_API_KEY",
        "AWS_",
        "GH_",
        "DATABASE_URL",
    ] {
        assert!(!out.contains(name), "{name}: {out}");
    }
    assert!(!out.contains("leak"), "{out}");
    // What bash itself sets, and nothing else.
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        .collect();
    for name in &names {
        assert!(
            ["PATH", "HOME", "PWD", "SHLVL", "_", "OLDPWD"].contains(name),
            "{name}: {out}"
        );
    }

    // The configuration names what else passes.
    let policy = SandboxPolicy::default().with_env(EnvFilter {
        keep: vec!["DOCKER_HOST".to_string(), "AWS_REGION".to_string()],
        ..EnvFilter::default()
    });
    let tool = BashTool::new()
        .with_sandbox(Sandbox::new(policy).with_base_environment(agent_environment()));
    let out = p.run(&tool, "env").await.output;
    assert!(
        out.contains("DOCKER_HOST=unix:///var/run/docker.sock"),
        "{out}"
    );
    assert!(out.contains("AWS_REGION=leak-aws-region"), "{out}");
    assert!(
        !out.contains("SSH_AUTH_SOCK") && !out.contains("leak-foo"),
        "{out}"
    );
}

/// The checks that hold for any user, run by the inner copy of this test
/// binary as `nobody` (or directly, when the tests do not run as root).
async fn checks_for_any_user(parent: u32) {
    let p = Project::new("any-user");
    let tool = workspace_write();

    let outside = socket_dir();
    let path = outside.join("daemon.sock");
    let _listener = daemon(&SocketAddr::from_pathname(&path).unwrap());
    let out = p
        .python(&tool, &connect_script(path.to_str().unwrap()))
        .await;
    assert!(
        out.contains("refused 1 ") && out.contains("pair-ok"),
        "{out}"
    );

    let out = proc_and_dev(&p, &tool, parent).await;
    assert!(out.contains("environ-unreadable"), "parent {parent}: {out}");
    let out = proc_and_dev(&p, &tool, std::process::id()).await;
    assert!(out.contains("environ-unreadable"), "self: {out}");
    let out = proc_and_dev(&p, &unsandboxed(), std::process::id()).await;
    assert!(out.contains("environ-readable"), "control: {out}");

    // The clone path's init shares this process's memory, here from a
    // user namespace the command's capabilities are dropped in.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    super::sandbox_clone::init_memory_is_out_of_reach(
        &Sandbox::new(SandboxPolicy::default()),
        &p.dir,
    )
    .await;

    let out = p.python(&tool, &refused_calls_script()).await;
    let errnos = errnos(&out);
    assert_eq!(errnos.len(), 4, "{out}");
    assert!(errnos.iter().all(|(_, e)| *e == libc::EPERM), "{out}");

    let out = p
        .run(&tool, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
        .await
        .output;
    for set in ["CapEff", "CapPrm", "CapBnd"] {
        assert!(
            out.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {out}"
        );
    }

    let env_tool = BashTool::new().with_sandbox(
        Sandbox::new(SandboxPolicy::default()).with_base_environment(agent_environment()),
    );
    let out = p.run(&env_tool, "env").await.output;
    assert!(
        !out.contains("leak") && !out.contains("SSH_AUTH_SOCK"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&outside);
}

/// Entry point of the copy started by `unprivileged_user_gets_the_same_layer`
/// (ignored in normal runs: it only means something as `nobody`).
#[tokio::test]
#[ignore = "run by unprivileged_user_gets_the_same_layer as nobody"]
async fn inner_checks_as_the_unprivileged_user() {
    let parent: u32 = std::env::var(INNER)
        .expect("started by unprivileged_user_gets_the_same_layer")
        .parse()
        .unwrap();
    assert!(!is_root(), "the inner run must not be root");
    checks_for_any_user(parent).await;
}

#[tokio::test]
async fn unprivileged_user_gets_the_same_layer() {
    if !is_root() {
        // Already unprivileged: the checks run here, against this process.
        checks_for_any_user(std::process::id()).await;
        return;
    }
    let tmp = temp_dir("sandbox-kernel", "nobody-home");
    let output = rerun_as_nobody(
        &[
            "--ignored",
            "--exact",
            "suite::sandbox_kernel::inner_checks_as_the_unprivileged_user",
            "--test-threads=1",
        ],
        &[(INNER, std::process::id().to_string())],
        &tmp,
    );
    let _ = std::fs::remove_dir_all(&tmp);
    let Some(output) = output else {
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "as nobody:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the inner test did not run:\n{stdout}\n{stderr}"
    );
}
