//! Reporting a tool's file changes to the session's checkpoints
//! ([`ToolContext::before_change`] and [`after_change`](ToolContext::after_change)):
//! a checkpoint that cannot be kept never fails the tool, the change is
//! made and a warning says it cannot be taken back.

use std::path::PathBuf;

use agentgate_core::{ChangeScope, ToolContext};

/// Before the first write of `scope` (after the permission is granted).
pub(crate) async fn before(ctx: &ToolContext, scope: ChangeScope<'_>) {
    if let Err(error) = ctx.before_change(scope).await {
        tracing::warn!(%error, tool_call = %ctx.call_id, "checkpoint before a change failed; this change cannot be reverted");
    }
}

/// After the last write of `scope` (also when a write failed midway).
pub(crate) async fn after(ctx: &ToolContext, scope: ChangeScope<'_>) {
    if let Err(error) = ctx.after_change(scope).await {
        tracing::warn!(%error, tool_call = %ctx.call_id, "checkpoint after a change failed; this change cannot be reverted");
    }
}

/// [`before`] for exactly `paths`.
pub(crate) async fn before_paths(ctx: &ToolContext, paths: &[PathBuf]) {
    before(ctx, ChangeScope::Paths(paths)).await;
}

/// [`after`] for exactly `paths`.
pub(crate) async fn after_paths(ctx: &ToolContext, paths: &[PathBuf]) {
    after(ctx, ChangeScope::Paths(paths)).await;
}
