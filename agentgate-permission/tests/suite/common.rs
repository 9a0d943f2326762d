//! Helpers shared by the test modules.
// Helpers panic on purpose: a failed expectation is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use agentgate_permission::{AskRequest, PermissionError, PermissionGate};
use tokio::task::JoinHandle;

/// The longest any single await of a test may take (real time, or paused
/// time that auto-advances): a broken gate fails the test instead of
/// hanging it. 10 s, or `AGENT_TEST_LIMIT_MS` (scripts/mutation.sh sets
/// it lower: a mutant that hangs the gate fails as surely, sooner).
pub fn limit() -> Duration {
    static LIMIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("AGENT_TEST_LIMIT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(10), Duration::from_millis)
    })
}

/// Awaits `future`, failing the test when it takes longer than [`limit`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit(), future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

pub type AskTask = JoinHandle<Result<(), PermissionError>>;

/// Waits (without sleeping) until `cond` holds; fails after [`limit`].
pub async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let waited = tokio::time::timeout(limit(), async {
        while !cond() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(waited.is_ok(), "timed out waiting until {what}");
}

pub fn pending_ids(permissions: &PermissionGate) -> Vec<String> {
    permissions.pending().into_iter().map(|r| r.id).collect()
}

/// Spawns an ask with a fixed id and waits until it is pending.
pub async fn ask_pending(permissions: &PermissionGate, request: AskRequest) -> AskTask {
    let id = request.id.clone().expect("test requests carry ids");
    let task = tokio::spawn(permissions.ask(request));
    wait_until(&format!("{id} is pending"), || {
        pending_ids(permissions).contains(&id)
    })
    .await;
    task
}

pub async fn finished(task: AskTask) -> Result<(), PermissionError> {
    tokio::time::timeout(limit(), task)
        .await
        .expect("ask did not finish")
        .expect("ask task panicked")
}

/// A fresh, empty directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    agentgate_testing::scratch_dir(&format!("agentgate-permission-{name}"))
}
