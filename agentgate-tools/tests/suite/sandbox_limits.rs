//! The ceilings of each sandboxed call (`sandbox.limits`): a fork bomb
//! and a memory bomb end their call quickly with a message naming the
//! limit and its key, while this process stays responsive; ordinary
//! commands under the same small ceilings run as before.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agentgate_core::{Tool, ToolContext, ToolOutput};
use agentgate_permission::{AllowAll, PermissionGate};
use agentgate_tools::{
    BashTool, Ceiling, Guard, Sandbox, SandboxLimits, SandboxMode, SandboxPolicy,
};
use serde_json::json;

struct Project {
    dir: PathBuf,
    ctx: ToolContext,
}

impl Project {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("agentgate-limits-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        let permissions = PermissionGate::new();
        permissions.set_approver(Arc::new(AllowAll));
        let ctx = ToolContext::new("ses_limits", "msg_1", "call_1", permissions)
            .with_directories(dir.clone(), dir.clone());
        Project { dir, ctx }
    }

    async fn run(&self, tool: &BashTool, command: &str) -> ToolOutput {
        tool.execute(json!({"command": command, "timeout": 60_000}), &self.ctx)
            .await
            .unwrap()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The bash tool under `workspace-write` with small ceilings: 32
/// processes, 64 MiB. `None` (with a message) where this machine gives
/// the agent no cgroup leaf, so reaching a ceiling cannot be seen.
fn small_limits() -> Option<BashTool> {
    let limits = SandboxLimits::default()
        .with_processes(Ceiling::At(32))
        .with_memory(Ceiling::At(64 << 20));
    let sandbox = Sandbox::new(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_limits(limits));
    match &sandbox.status().limits {
        Guard::Enforced { by } if by.contains("cgroup") && by.contains("32 processes") => {}
        other => {
            eprintln!("skipped: no cgroup leaf for the call ceilings here: {other:?}");
            return None;
        }
    }
    Some(
        BashTool::new()
            .with_kill_grace(Duration::from_millis(300))
            .with_sandbox(sandbox),
    )
}

/// Counts 10 ms ticks of this runtime while `work` runs: a stalled agent
/// would count few.
async fn ticks_during<F: std::future::Future>(work: F) -> (F::Output, u64, Duration) {
    let ticks = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&ticks);
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let started = Instant::now();
    let output = work.await;
    let elapsed = started.elapsed();
    ticker.abort();
    (output, ticks.load(Ordering::Relaxed), elapsed)
}

fn limit_of(out: &ToolOutput) -> serde_json::Value {
    out.metadata["sandbox"]["limit"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_ends_its_call_at_the_process_limit() {
    let Some(tool) = small_limits() else { return };
    let p = Project::new("fork-bomb");
    // The bomb's first process returns at once; the shell stays (its
    // `sleep`) so that only the ceiling can end the call in time.
    let (out, ticks, elapsed) =
        ticks_during(p.run(&tool, "bomb() { bomb | bomb & }; bomb; sleep 30")).await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        out.output.contains("process limit (32 processes")
            && out.output.contains("`sandbox.limits.processes`"),
        "{}",
        out.output
    );
    assert_eq!(limit_of(&out)["key"], "sandbox.limits.processes");
    assert_eq!(limit_of(&out)["value"], 32);
    // The agent's runtime kept ticking (at least a fifth of the ticks).
    let expected = elapsed.as_millis() as u64 / 10;
    assert!(ticks * 5 >= expected, "{ticks} ticks in {elapsed:?}");
    // Nothing of the bomb outlives its call: the next call runs at once.
    let after = p.run(&tool, "echo after").await;
    assert!(after.output.starts_with("after"), "{}", after.output);
    assert_eq!(limit_of(&after), serde_json::Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_ends_its_call_at_the_memory_limit() {
    let Some(tool) = small_limits() else { return };
    let p = Project::new("memory-bomb");
    // bash alone: a variable doubled until it holds far past 64 MiB.
    let bomb = "x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done";
    let (out, ticks, elapsed) = ticks_during(p.run(&tool, bomb)).await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        out.output.contains("memory limit (64 MiB)")
            && out.output.contains("`sandbox.limits.memory`"),
        "{}",
        out.output
    );
    assert_eq!(limit_of(&out)["limit"], "memory");
    let expected = elapsed.as_millis() as u64 / 10;
    assert!(ticks * 5 >= expected, "{ticks} ticks in {elapsed:?}");
}

/// The class behind a memory bomb that could end the agent: the kernel's
/// out-of-memory killer picks its victim among the leaf's members and
/// kills every process that shares the victim's memory. The namespace's
/// init may share the agent's memory (the clone path), so it must never
/// be a member: only the command and what it starts are.
#[tokio::test]
async fn only_the_command_joins_the_leaf_never_the_init_sharing_the_agents_memory() {
    let Some(tool) = small_limits() else { return };
    let p = Project::new("leaf-members");
    let out = p
        .run(
            &tool,
            "echo \"init=$(cat /proc/1/cgroup | tr '\\n' ' ')\"; echo \"self=$(cat /proc/self/cgroup | tr '\\n' ' ')\"",
        )
        .await;
    let line = |prefix: &str| {
        out.output
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line: {}", out.output))
            .to_string()
    };
    let (init, command) = (line("init="), line("self="));
    assert!(
        command.contains("agentgate-"),
        "the command is in the leaf: {command}"
    );
    assert!(!init.contains("agentgate-"), "the init is not: {init}");
}

#[tokio::test]
async fn ordinary_commands_run_under_small_limits() {
    let Some(tool) = small_limits() else { return };
    let p = Project::new("ordinary");
    let out = p
        .run(
            &tool,
            "for i in 1 2 3 4 5 6 7 8; do (sleep 0.1; echo $i) & done; wait; seq 1 20000 | sort -n | tail -1",
        )
        .await;
    assert!(out.output.contains("20000"), "{}", out.output);
    assert!(!out.output.contains("limit"), "{}", out.output);
    assert_eq!(limit_of(&out), serde_json::Value::Null);
}

#[test]
fn the_limits_key_parses_and_names_itself_when_invalid() {
    let policy: SandboxPolicy = serde_json::from_value(
        json!({"mode": "workspace-write", "limits": {"processes": 32, "memory": "64MiB"}}),
    )
    .unwrap();
    assert_eq!(policy.limits.processes_max(), Some(32));
    assert_eq!(policy.limits.memory_max(), Some(64 << 20));
    let error = serde_json::from_value::<SandboxPolicy>(json!({"limits": {"memory": "lots"}}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("sandbox.limits.memory"), "{error}");
    let unlimited: SandboxPolicy =
        serde_json::from_value(json!({"limits": {"processes": "unlimited"}})).unwrap();
    assert_eq!(unlimited.limits.processes_max(), None);
    let status = Sandbox::new(
        unlimited.with_limits(
            SandboxLimits::default()
                .with_processes(Ceiling::Unlimited)
                .with_memory(Ceiling::Unlimited),
        ),
    )
    .status()
    .clone();
    assert_eq!(status.limits, Guard::NotRequested);
}
