//! The permission requests the file tools make, in the order they ask
//! them, and the one way they ask: what read, write, edit, glob, grep and
//! list (and the bash tool, for the files a command reads) would ask for a
//! path is computed here, so every tool asks the same requests for the
//! same path and hosts can see them before anything runs.

use std::path::Path;

use agentgate_core::ToolContext;
use agentgate_permission::PermissionError;

use crate::files::external::external_for;
use crate::files::paths;
use crate::files::protected::{PROTECTED_PATH, protected_request};
use crate::files::request::ToolRequest;

/// What a file tool asks before touching `path` (absolute, normalised):
/// `external_directory` when it — or, through a symlink, the file it
/// leads to — is outside the project, then `permission` with the
/// worktree-relative pattern of the path and of where it leads, "always"
/// approving `*` (§7.2; checking the link's target is a deviation, see
/// `docs/security.md`). Only looks at the file system to resolve links.
pub fn file_requests(
    permission: &str,
    path: &Path,
    is_dir: bool,
    directory: &Path,
    worktree: &Path,
) -> Vec<ToolRequest> {
    let views = paths::views(path, directory, worktree);
    let mut requests: Vec<ToolRequest> = external_for(&views, is_dir).into_iter().collect();
    let mut own = ToolRequest::new(permission, paths::worktree_pattern(worktree, path), "*");
    for view in &views[1..] {
        let pattern = paths::worktree_pattern(&view.worktree, &view.target);
        if !own.patterns.contains(&pattern) {
            own.patterns.push(pattern);
        }
    }
    requests.push(own);
    requests
}

/// The `external_directory` request for a search or listing root:
/// `target` as written and, through a symlink, where it leads (at most one
/// request, with the patterns of both). `None` when both are inside.
pub(crate) fn external_requests(
    target: &Path,
    target_is_dir: bool,
    directory: &Path,
    worktree: &Path,
) -> Option<ToolRequest> {
    external_for(&paths::views(target, directory, worktree), target_is_dir)
}

/// `protected_path` (for a protected path, see `protected`), then
/// `external_directory` (when outside), then `edit` on the
/// worktree-relative path and, through a symlink, on where it leads: what
/// write and edit ask.
pub(crate) fn edit_requests(
    file_path: &str,
    directory: &Path,
    worktree: &Path,
) -> Vec<ToolRequest> {
    let path = paths::resolve(directory, Path::new(file_path));
    let mut requests: Vec<ToolRequest> = protected_request(&path, directory, worktree)
        .into_iter()
        .collect();
    requests.extend(file_requests("edit", &path, false, directory, worktree));
    requests
}

/// The `read` request a tool makes before it carries the content of
/// `path` (absolute) to another name — a move, or a rewrite through a
/// symlink, which replaces the link by a file holding what it led to: the
/// same `read` request the read tool makes for `path` (its
/// worktree-relative pattern and, through a symlink, where it leads), so a
/// `read` deny denies and a `read` ask asks. The `external_directory`
/// request is left out: the tool's edit requests ask it for the same
/// paths.
pub(crate) fn content_read_request(
    path: &Path,
    directory: &Path,
    worktree: &Path,
) -> Option<ToolRequest> {
    file_requests("read", path, false, directory, worktree)
        .into_iter()
        .find(|request| request.permission == "read")
}

/// Whether `path` (absolute) leads elsewhere through a symlink, so that
/// rewriting it would replace the link with what it leads to.
pub(crate) fn leads_elsewhere(path: &Path, directory: &Path, worktree: &Path) -> bool {
    paths::views(path, directory, worktree).len() > 1
}

/// Asks a file tool's `request`: `protected_path` by the rules that name
/// it only (an `"*": "allow"` does not answer it), the rest as usual.
pub(crate) async fn ask_file_request(
    request: &ToolRequest,
    ctx: &ToolContext,
) -> Result<(), PermissionError> {
    if request.permission == PROTECTED_PATH {
        request.ask_by_name(ctx).await
    } else {
        request.ask(ctx).await
    }
}

/// Asks `requests` through `ctx` in order, each as [`ask_file_request`]
/// does; the first refusal stops the rest.
pub(crate) async fn ask_in_order(
    requests: &[ToolRequest],
    ctx: &ToolContext,
) -> Result<(), PermissionError> {
    for request in requests {
        ask_file_request(request, ctx).await?;
    }
    Ok(())
}
