//! The external-directory check (§7.3): a tool touching a path outside the
//! project asks `external_directory` for the folder first.

use std::path::{Path, PathBuf};

use agentgate_core::ToolContext;
use agentgate_permission::PermissionError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::files::paths;
use crate::files::request::ToolRequest;

/// The permission name of the check.
pub const EXTERNAL_DIRECTORY: &str = "external_directory";

/// What the approver is shown for an external path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalMetadata {
    /// The path the tool touches.
    pub filepath: String,
    /// The folder asked for: the target itself when it is a directory,
    /// else its parent.
    #[serde(rename = "parentDir")]
    pub parent_dir: String,
}

/// The `external_directory` request for a path outside the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalRequest {
    /// Always [`EXTERNAL_DIRECTORY`].
    pub permission: String,
    /// `[<dir>/*]`.
    pub patterns: Vec<String>,
    /// The same as `patterns`: "always" approves the whole folder.
    pub always: Vec<String>,
    /// The target and the folder asked for.
    pub metadata: ExternalMetadata,
}

impl ExternalRequest {
    /// The request as a generic [`ToolRequest`].
    pub fn to_planned(&self) -> ToolRequest {
        ToolRequest {
            permission: self.permission.clone(),
            patterns: self.patterns.clone(),
            always: self.always.clone(),
            metadata: serde_json::to_value(&self.metadata)
                .unwrap_or(Value::Object(Default::default())),
        }
    }
}

/// Whether `target` counts as inside the project (§7.3): it is `directory`
/// or below it, or inside `worktree` unless the worktree is `/` (a project
/// that is not a git repository, where only the directory counts).
pub fn is_inside(target: &Path, directory: &Path, worktree: &Path) -> bool {
    if paths::contains(directory, target) {
        return true;
    }
    if paths::normalize(worktree) == Path::new("/") {
        return false;
    }
    paths::contains(worktree, target)
}

/// The `external_directory` request a tool must make before touching
/// `target` (an absolute path), or `None` when the target is inside the
/// project. `target_is_dir` picks the folder asked for: the target itself,
/// or its parent for a file.
///
/// ```
/// use std::path::Path;
/// use agentgate_tools::external_request;
/// let dir = Path::new("/home/u/proj/pkg");
/// let worktree = Path::new("/home/u/proj");
/// let request = external_request(Path::new("/etc/passwd"), false, dir, worktree).unwrap();
/// assert_eq!(request.patterns, ["/etc/*"]);
/// assert_eq!(request.metadata.parent_dir, "/etc");
/// assert!(external_request(Path::new("/home/u/proj/README.md"), false, dir, worktree).is_none());
/// ```
pub fn external_request(
    target: &Path,
    target_is_dir: bool,
    directory: &Path,
    worktree: &Path,
) -> Option<ExternalRequest> {
    if is_inside(target, directory, worktree) {
        return None;
    }
    let target = paths::normalize(target);
    let parent: PathBuf = if target_is_dir {
        target.clone()
    } else {
        target
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| target.clone())
    };
    let parent_text = parent.to_string_lossy().into_owned();
    let glob = if parent_text.ends_with('/') {
        format!("{parent_text}*")
    } else {
        format!("{parent_text}/*")
    };
    let glob = if cfg!(windows) {
        glob
    } else {
        glob.replace('\\', "/")
    };
    Some(ExternalRequest {
        permission: EXTERNAL_DIRECTORY.to_string(),
        patterns: vec![glob.clone()],
        always: vec![glob],
        metadata: ExternalMetadata {
            filepath: target.to_string_lossy().into_owned(),
            parent_dir: parent_text,
        },
    })
}

/// One `external_directory` request covering every view that is outside
/// its project, the first view's metadata.
pub(crate) fn external_for(views: &[paths::PathView], is_dir: bool) -> Option<ToolRequest> {
    let mut external: Option<ToolRequest> = None;
    for view in views {
        let Some(request) = external_request(&view.target, is_dir, &view.directory, &view.worktree)
        else {
            continue;
        };
        match &mut external {
            None => external = Some(request.to_planned()),
            Some(first) => {
                for pattern in request.patterns {
                    if !first.patterns.contains(&pattern) {
                        first.patterns.push(pattern.clone());
                        first.always.push(pattern);
                    }
                }
            }
        }
    }
    external
}

/// Asks `external_directory` through `ctx` when `target` is outside the
/// context's directory and worktree; does nothing for inside paths.
pub async fn ask_external_directory(
    ctx: &ToolContext,
    target: &Path,
    target_is_dir: bool,
) -> Result<(), PermissionError> {
    match external_request(target, target_is_dir, &ctx.directory, &ctx.worktree) {
        Some(request) => request.to_planned().ask(ctx).await,
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_worktree_counts_only_the_directory() {
        let dir = Path::new("/home/u/scratch");
        assert!(
            external_request(Path::new("/home/u/scratch/x"), false, dir, Path::new("/")).is_none()
        );
        let request =
            external_request(Path::new("/home/u/other/x"), false, dir, Path::new("/")).unwrap();
        assert_eq!(request.patterns, ["/home/u/other/*"]);
    }

    #[test]
    fn root_target() {
        let request =
            external_request(Path::new("/"), true, Path::new("/a"), Path::new("/a")).unwrap();
        assert_eq!(request.patterns, ["/*"]);
    }
}
