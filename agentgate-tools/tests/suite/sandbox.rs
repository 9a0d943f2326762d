//! The bash tool under the OS sandbox, against real processes and the real
//! kernel: with every permission allowed, the sandbox alone keeps writes in
//! the workspace, denied paths unread, the network off when asked, secrets
//! out of the environment, and no descendant alive after the call.
#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate_core::{Tool, ToolContext, ToolOutput};
use agentgate_permission::{AllowAll, PermissionGate};
use agentgate_tools::{BashTool, Guard, Sandbox, SandboxMode, SandboxPolicy};
use serde_json::json;

/// Folders `workspace-write` always leaves writable (the temporary
/// folders), so a test's "outside the project" must not be under them.
fn temp_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .collect();
    roots.push(std::env::temp_dir());
    roots
        .into_iter()
        .map(|r| r.canonicalize().unwrap_or(r))
        .collect()
}

/// Where the tests make their folders: cargo's per-target temporary
/// directory, unless the checkout itself lives under a temporary folder
/// (a CI clone in `/tmp`), where everything would be writable anyway; then
/// a folder under `$HOME/.cache`.
fn test_root() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(target).unwrap();
    let target = target.canonicalize().unwrap();
    let in_temp = |p: &Path| temp_roots().iter().any(|r| p.starts_with(r));
    if !in_temp(&target) {
        return target;
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !in_temp(h))
        .expect("the checkout is under a temporary folder and HOME is unset or temporary too: no place outside the sandbox's writable folders for these tests");
    let root = home.join(".cache").join("agent-sdk-sandbox-tests");
    std::fs::create_dir_all(&root).unwrap();
    root.canonicalize().unwrap()
}

/// A fresh directory outside every temporary folder (writable under
/// `workspace-write`) and outside any other test's project.
fn fresh_dir(name: &str) -> PathBuf {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = test_root().join(format!("sandbox-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

struct Project {
    dir: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

impl Project {
    fn new(name: &str) -> Self {
        let dir = fresh_dir(&format!("{name}-project"));
        let outside = fresh_dir(&format!("{name}-outside"));
        // A permissive ruleset: every ask is allowed, so only the sandbox
        // stands between the command and the file system.
        let permissions = PermissionGate::new();
        permissions.set_approver(Arc::new(AllowAll));
        let ctx = ToolContext::new("ses_sandbox", "msg_1", "call_1", permissions)
            .with_directories(dir.clone(), dir.clone());
        Project { dir, outside, ctx }
    }

    async fn run(&self, tool: &BashTool, command: &str) -> ToolOutput {
        tool.execute(json!({"command": command, "timeout": 20_000}), &self.ctx)
            .await
            .unwrap()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_dir_all(&self.outside);
    }
}

fn sandboxed(policy: SandboxPolicy) -> BashTool {
    let sandbox = Sandbox::new(policy);
    let status = sandbox.status();
    // This machine (and CI) has Landlock and user namespaces; a test that
    // silently ran unsandboxed would prove nothing.
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

fn has_python() -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn status_reports_what_is_enforced() {
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false));
    let status = sandbox.status();
    assert!(
        matches!(&status.filesystem, Guard::Enforced { by } if by.contains("landlock")),
        "{status:?}"
    );
    assert!(
        matches!(status.network, Guard::Enforced { .. }),
        "{status:?}"
    );
    assert!(
        matches!(status.descendants, Guard::Enforced { .. }),
        "{status:?}"
    );
    let open = Sandbox::new(SandboxPolicy::new(SandboxMode::DangerFullAccess));
    assert_eq!(open.status().filesystem, Guard::NotRequested);
    assert_eq!(open.status().network, Guard::NotRequested);
}

#[tokio::test]
async fn python_writing_outside_the_project_is_blocked_inside_works() {
    assert!(has_python(), "python3 is needed for this test");
    let p = Project::new("python");
    let tool = workspace_write();
    let target = p.outside.join("py.txt");
    let out = p
        .run(
            &tool,
            &format!(
                "python3 -c \"open('{}', 'w').write('x')\"",
                target.display()
            ),
        )
        .await;
    assert!(!target.exists(), "the write outside went through");
    assert!(
        out.output.contains(&format!(
            "write outside the workspace was blocked by the sandbox: {}",
            target.display()
        )),
        "{}",
        out.output
    );
    assert_eq!(out.metadata["sandbox"]["denials"][0]["kind"], "write");

    let out = p
        .run(
            &tool,
            "python3 -c \"open('inside.txt', 'w').write('x')\" && cat inside.txt",
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(p.dir.join("inside.txt")).unwrap(),
        "x"
    );
    assert!(!out.output.contains("<sandbox>"), "{}", out.output);

    // Control: without the sandbox the same write goes through, so the
    // failure above is the sandbox's doing.
    let open = BashTool::new().with_sandbox(Sandbox::new(SandboxPolicy::new(
        SandboxMode::DangerFullAccess,
    )));
    p.run(
        &open,
        &format!(
            "python3 -c \"open('{}', 'w').write('x')\"",
            target.display()
        ),
    )
    .await;
    assert!(target.exists(), "the control write failed");
}

#[tokio::test]
async fn a_script_written_then_run_cannot_write_outside() {
    let p = Project::new("script");
    let tool = workspace_write();
    let target = p.outside.join("from-script.txt");
    p.run(
        &tool,
        &format!("printf 'echo owned > {}\\n' > script.sh", target.display()),
    )
    .await;
    assert!(p.dir.join("script.sh").exists());
    let out = p.run(&tool, "sh ./script.sh").await;
    assert!(!target.exists(), "the script wrote outside: {}", out.output);
    assert!(
        out.output
            .contains("write outside the workspace was blocked by the sandbox"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn read_only_mode_blocks_writes_in_the_project_too() {
    let p = Project::new("read-only");
    let tool = sandboxed(SandboxPolicy::new(SandboxMode::ReadOnly));
    let out = p
        .run(
            &tool,
            "echo x > inside.txt; cat /etc/hostname >/dev/null && echo read-ok",
        )
        .await;
    assert!(!p.dir.join("inside.txt").exists(), "{}", out.output);
    assert!(out.output.contains("read-ok"), "{}", out.output);
}

#[tokio::test]
async fn denied_paths_cannot_be_read_their_siblings_can() {
    let p = Project::new("deny-read");
    let secrets = p.outside.join("secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("key"), "TOPSECRET").unwrap();
    std::fs::write(p.outside.join("public.txt"), "public-content").unwrap();
    let tool = sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_deny_read(&secrets));
    let out = p
        .run(
            &tool,
            &format!(
                "cat {}/key; cat {}/public.txt",
                secrets.display(),
                p.outside.display()
            ),
        )
        .await;
    assert!(!out.output.contains("TOPSECRET"), "{}", out.output);
    assert!(out.output.contains("public-content"), "{}", out.output);
    assert!(
        out.output
            .contains("read of a protected path was blocked by the sandbox"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn loopback_socket_fails_with_network_off_and_works_with_it_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = Project::new("network");
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let off = sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false));
    let out = p.run(&off, &command).await;
    assert!(!out.output.contains("connected"), "{}", out.output);

    let on = sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(true));
    let out = p.run(&on, &command).await;
    assert!(out.output.contains("connected"), "{}", out.output);
    drop(listener);
}

#[tokio::test]
async fn setsid_and_double_forked_survivors_are_ended_with_the_call() {
    let p = Project::new("survivors");
    let tool = workspace_write();
    // Control: the same line run by a plain shell leaves survivors behind,
    // so the test can see one.
    let control = fresh_dir("survivors-control");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("setsid sh -c 'sleep 1; touch m' & (sh -c 'sleep 1; touch m2' &)")
        .current_dir(&control)
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let out = p
        .run(
            &tool,
            "setsid sh -c 'sleep 1; touch m' & (sh -c 'sleep 1; touch m2' &) ; echo started",
        )
        .await;
    assert!(out.output.contains("started"), "{}", out.output);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call waited"
    );
    // Real processes: give them twice their sleep to (fail to) write.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !p.dir.join("m").exists(),
        "the setsid'd process survived the call"
    );
    assert!(
        !p.dir.join("m2").exists(),
        "the double-forked process survived the call"
    );
    // The control's survivors do write (allowing for a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(control.join("m").exists() && control.join("m2").exists()) {
        assert!(
            Instant::now() < deadline,
            "the control's survivors never wrote"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = std::fs::remove_dir_all(&control);
}

#[tokio::test]
async fn setsid_survivor_is_ended_on_timeout() {
    let p = Project::new("survivor-timeout");
    let tool = workspace_write();
    let out = tool
        .execute(
            json!({"command": "setsid sh -c 'sleep 1; touch m' & sleep 30", "timeout": 200}),
            &p.ctx,
        )
        .await
        .unwrap();
    assert!(out.output.contains("exceeding timeout"), "{}", out.output);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !p.dir.join("m").exists(),
        "the setsid'd process survived the timeout"
    );
}

#[tokio::test]
async fn provider_keys_and_secrets_do_not_reach_commands() {
    let p = Project::new("env");
    let base: Vec<(OsString, OsString)> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", "/nonexistent-home".to_string()),
        ("OPENAI_API_KEY", "sk-leak-openai".to_string()),
        ("ANTHROPIC_API_KEY", "sk-leak-anthropic".to_string()),
        ("GITHUB_TOKEN", "sk-leak-github".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "sk-leak-aws".to_string()),
        ("KEEP_ME", "kept-value".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    let sandbox = Sandbox::new(SandboxPolicy::default()).with_base_environment(base.clone());
    let tool = BashTool::new().with_sandbox(sandbox);
    let out = p.run(&tool, "env").await;
    assert!(!out.output.contains("sk-leak"), "{}", out.output);
    // An allow list: a name the configuration does not list stays out...
    assert!(!out.output.contains("KEEP_ME"), "{}", out.output);
    assert!(
        out.output.contains("HOME=/nonexistent-home"),
        "{}",
        out.output
    );
    // ...and passes once it does.
    let policy = SandboxPolicy::default().with_env(agentgate_tools::EnvFilter {
        keep: vec!["KEEP_ME".to_string()],
        ..agentgate_tools::EnvFilter::default()
    });
    let tool = BashTool::new().with_sandbox(Sandbox::new(policy).with_base_environment(base));
    let out = p.run(&tool, "env").await;
    assert!(!out.output.contains("sk-leak"), "{}", out.output);
    assert!(out.output.contains("KEEP_ME=kept-value"), "{}", out.output);
}

#[tokio::test]
async fn everyday_commands_work_under_the_sandbox() {
    let p = Project::new("everyday");
    let tool = workspace_write();
    let out = p
        .run(
            &tool,
            "echo to-stderr > /dev/stderr; t=$(mktemp) && echo temp-ok > \"$t\" && cat \"$t\" \
             && rm \"$t\"; ls / > /dev/null && echo listed; mkdir -p sub/dir && mv sub/dir sub/moved \
             && rm -r sub && echo moved; id -u >/dev/null && echo id-ok",
        )
        .await;
    for expected in ["to-stderr", "temp-ok", "listed", "moved", "id-ok"] {
        assert!(out.output.contains(expected), "{expected}: {}", out.output);
    }
    assert!(!out.output.contains("<sandbox>"), "{}", out.output);
    assert_eq!(
        out.metadata["sandbox"]["status"]["filesystem"]["state"],
        "enforced"
    );
}
