//! The `read` rules applied to each file a search would show: grep and
//! glob list file names and contents, so a file the host may not read must
//! not appear in their output (a deviation from opencode, which asks only
//! `grep`/`glob` with the search pattern; see `docs/security.md`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agent_core::{ToolContext, ToolError};
use agent_permission::{Action, evaluate};

use crate::paths;
use crate::request::ToolRequest;

/// The permission whose rules decide which files a search may show.
const READ: &str = "read";

/// Which of `files` (absolute paths) the caller may see, and how many
/// were left out. Each file is judged on its worktree-relative
/// path and, through a symlink, on where it leads, against the context's
/// rules and approvals: a file any rule denies is left out; the files the
/// rules leave to the user are asked for in one `read` request (an error
/// when rejected); the rest are shown.
pub(crate) async fn visible_files(
    ctx: &ToolContext,
    files: &[PathBuf],
) -> Result<(HashSet<PathBuf>, usize), ToolError> {
    let approved = ctx.permissions().approved();
    let rulesets = [ctx.ruleset(), &approved];
    let mut shown = HashSet::with_capacity(files.len());
    let mut asked: Vec<PathBuf> = Vec::new();
    let mut ask_patterns: Vec<String> = Vec::new();
    let mut hidden = 0;
    for file in files {
        let patterns = read_patterns(file, &ctx.directory, &ctx.worktree);
        let actions: Vec<Action> = patterns
            .iter()
            .map(|pattern| evaluate(READ, pattern, &rulesets).action)
            .collect();
        if actions.contains(&Action::Deny) {
            hidden += 1;
        } else if actions.contains(&Action::Ask) {
            for pattern in patterns {
                if !ask_patterns.contains(&pattern) {
                    ask_patterns.push(pattern);
                }
            }
            asked.push(file.clone());
        } else {
            shown.insert(file.clone());
        }
    }
    if !asked.is_empty() {
        ToolRequest {
            permission: READ.to_string(),
            patterns: ask_patterns,
            always: vec!["*".to_string()],
            metadata: serde_json::json!({
                "files": asked.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            }),
        }
        .ask(ctx)
        .await?;
        shown.extend(asked);
    }
    Ok((shown, hidden))
}

/// The `read` patterns of `file`: worktree-relative, as written and where
/// a symlink leads.
fn read_patterns(file: &Path, directory: &Path, worktree: &Path) -> Vec<String> {
    let mut patterns: Vec<String> = Vec::new();
    for view in paths::views(file, directory, worktree) {
        let pattern = paths::worktree_pattern(&view.worktree, &view.target);
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    }
    patterns
}
