//! A tool context for the benches that run the built-in tools directly.

use std::path::Path;
use std::sync::Arc;

use agentgate_core::ToolContext;
use agentgate_permission::{PermissionGate, Rule, Ruleset};

/// A tool context in `dir` (its directory and work tree) whose rules allow
/// everything, so a tool's asks never wait.
pub fn allow_all_context(dir: &Path) -> ToolContext {
    let allow = Ruleset(vec![Rule::new(
        "*",
        "*",
        agentgate_permission::Action::Allow,
    )]);
    ToolContext::new(
        "ses_bench",
        "msg_bench",
        "call_bench",
        PermissionGate::new(),
    )
    .with_directories(dir.to_path_buf(), dir.to_path_buf())
    .with_ruleset(Arc::new(allow))
}
