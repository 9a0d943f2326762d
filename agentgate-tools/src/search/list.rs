//! The `list` tool: a folder's files as an indented tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::files::asked_path::{AskedPath, OpenedRoot};
use crate::files::error::FileError;
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_in_order, external_requests};
use crate::limits::SearchLimits;
use crate::search::read_rules::ReadRules;
use crate::search::walk::{PathGlob, walk_files};

/// Folders never listed (build output, caches, dependencies), as opencode.
pub const DEFAULT_IGNORED_DIRS: &[&str] = &[
    "node_modules",
    "__pycache__",
    ".git",
    "dist",
    "build",
    "target",
    "vendor",
    "bin",
    "obj",
    ".idea",
    ".vscode",
    ".zig-cache",
    "zig-out",
    ".coverage",
    "coverage",
    "tmp",
    "temp",
    ".cache",
    "cache",
    "logs",
    ".venv",
    "venv",
    "env",
];

/// Arguments of [`ListTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// The folder to list (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Extra globs of files or folders to leave out.
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
}

/// Lists a folder's files as a tree.
///
/// Asks `external_directory` for a folder outside the project, then `list`
/// with the folder's absolute path and `always: ["*"]`. Files ignored by
/// `.gitignore`, the usual build/cache folders ([`DEFAULT_IGNORED_DIRS`])
/// and the `ignore` globs are left out; the first 100 files in path order
/// are shown. As glob and grep, a file the `read` rules do not allow is
/// not named (only their number is said), so a listing cannot reveal what
/// a `read` of that file would deny or ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListTool {
    limits: SearchLimits,
}

impl ListTool {
    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: SearchLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &SearchLimits {
        &self.limits
    }

    /// The permission requests a call makes, in order. Changes nothing.
    pub fn requests(&self, args: &ListArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let search = paths::resolve(directory, Path::new(args.path.as_deref().unwrap_or(".")));
        let mut requests = Vec::new();
        requests.extend(external_requests(&search, true, directory, worktree));
        let shown = search.display().to_string();
        requests.push(
            ToolRequest::new("list", shown.clone(), "*").with_metadata(json!({"path": shown})),
        );
        requests
    }
}

/// The tree under `root` of the `files` (relative, `/`-separated).
fn render(root: &Path, files: &[PathBuf]) -> String {
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let mut by_dir: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for file in files {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for ancestor in dir.ancestors() {
            dirs.insert(ancestor.to_path_buf());
        }
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        by_dir.entry(dir).or_default().push(name);
    }
    fn walk(
        dir: &Path,
        depth: usize,
        dirs: &BTreeSet<PathBuf>,
        by_dir: &BTreeMap<PathBuf, Vec<String>>,
        out: &mut String,
    ) {
        if depth > 0 {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            out.push_str(&format!("{}{name}/\n", "  ".repeat(depth)));
        }
        for child in dirs
            .iter()
            .filter(|d| d.parent() == Some(dir) && d.as_path() != dir)
        {
            walk(child, depth + 1, dirs, by_dir, out);
        }
        let mut names = by_dir.get(dir).cloned().unwrap_or_default();
        names.sort();
        for name in names {
            out.push_str(&format!("{}{name}\n", "  ".repeat(depth + 1)));
        }
    }
    let mut out = format!("{}/\n", root.display());
    walk(Path::new(""), 0, &dirs, &by_dir, &mut out);
    out
}

#[async_trait::async_trait]
impl TypedTool for ListTool {
    type Args = ListArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "list"
    }

    fn description(&self) -> &str {
        "Lists the files of a folder as a tree, leaving out files ignored by .gitignore and build/cache folders such as node_modules and target. Use ignore to leave out more (globs). Prefer glob and grep when you know what you are looking for."
    }

    async fn run(&self, args: ListArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let search = paths::resolve(
            &ctx.directory,
            Path::new(args.path.as_deref().unwrap_or(".")),
        );
        // Where the folder leads as the requests see it: what is listed.
        let asked = AskedPath::of(&search);
        let requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        ask_in_order(&requests, ctx).await?;
        if !tokio::fs::metadata(&search).await.is_ok_and(|m| m.is_dir()) {
            return Err(FileError::NotDirectory(search).into());
        }
        let OpenedRoot::Folder(root_folder) = asked.open_root()? else {
            return Err(FileError::NotDirectory(search).into());
        };
        let ignores = args
            .ignore
            .iter()
            .flatten()
            .map(|g| PathGlob::new(g.trim_end_matches('/')))
            .collect::<Result<Vec<_>, _>>()?;
        let cancel = ctx.cancel.clone();
        let read_rules = ReadRules::of(ctx);
        let root = search.clone();
        let ignores = std::sync::Arc::new(ignores);
        let limit = self.limits.max_results;
        let files = tokio::task::spawn_blocking(move || {
            let dir_ignores = std::sync::Arc::clone(&ignores);
            let keep_dir = move |relative: &Path| {
                let name = relative.file_name().map(|n| n.to_string_lossy());
                let default = name.is_some_and(|n| DEFAULT_IGNORED_DIRS.contains(&n.as_ref()));
                !default && !dir_ignores.iter().any(|g| g.is_match(relative))
            };
            let (found, _) = walk_files(
                &root,
                Some(&root_folder),
                std::sync::Arc::new(keep_dir),
                &|| cancel.is_cancelled(),
            );
            let mut hidden = 0usize;
            let files = found
                .into_iter()
                .filter(|f| !ignores.iter().any(|g| g.is_match(&f.relative)))
                .filter(|f| {
                    let allowed = read_rules.allows(&f.path);
                    hidden += usize::from(!allowed);
                    allowed
                })
                .map(|f| f.relative)
                .take(limit + 1)
                .collect::<Vec<_>>();
            (files, hidden)
        })
        .await
        .map_err(|e| ToolError::failed(format!("The listing stopped unexpectedly: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let (files, hidden) = files;
        let truncated = files.len() > limit;
        let files = &files[..files.len().min(limit)];
        let mut output = render(&search, files);
        if hidden > 0 {
            output.push_str(&format!(
                "\n({hidden} files are not shown: the read rules do not allow reading them)\n"
            ));
        }
        if truncated {
            output.push_str(&format!(
                "\n(Showing the first {limit} files. List a subfolder or use glob to see more.)\n"
            ));
        }
        Ok(ToolOutput::text(output)
            .with_title(paths::relative(&ctx.worktree, &search))
            .with_metadata(json!({"count": files.len(), "truncated": truncated})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_tree() {
        let files = [
            PathBuf::from("b.txt"),
            PathBuf::from("src/lib.rs"),
            PathBuf::from("src/a/x.rs"),
            PathBuf::from("a.txt"),
        ];
        assert_eq!(
            render(Path::new("/p"), &files),
            "/p/\n  src/\n    a/\n      x.rs\n    lib.rs\n  a.txt\n  b.txt\n"
        );
    }
}
