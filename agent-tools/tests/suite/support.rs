//! Helpers shared by the tool tests: scratch directories and an approver
//! that records what it is asked.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::ToolContext;
use agent_permission::{Approver, PermissionRequest, Permissions, Reply};

/// A fresh, canonical directory under the system temp dir, unique to this
/// test run (`area` and `name` make it recognisable).
pub fn temp_dir(area: &str, name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agent-tools-{area}-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// An approver that records every request, then allows it once or
/// rejects it.
pub struct Recorder {
    pub allow: bool,
    pub seen: Arc<Mutex<Vec<PermissionRequest>>>,
}

#[async_trait::async_trait]
impl Approver for Recorder {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.seen.lock().unwrap().push(request.clone());
        if self.allow {
            Reply::Once
        } else {
            Reply::reject()
        }
    }
}

/// A context for `dir` (also the worktree) whose every request reaches a
/// [`Recorder`] that allows or rejects; returns the requests it saw.
pub fn recording_context(
    dir: &Path,
    allow: bool,
) -> (ToolContext, Arc<Mutex<Vec<PermissionRequest>>>) {
    let permissions = Permissions::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    permissions.set_approver(Arc::new(Recorder {
        allow,
        seen: Arc::clone(&seen),
    }));
    let ctx = ToolContext::new("ses_test", "msg_test", "call_test", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf());
    (ctx, seen)
}
