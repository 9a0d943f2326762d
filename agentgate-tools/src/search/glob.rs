//! The `glob` tool (§7.2): files whose path matches a glob pattern, newest
//! first.

use std::os::fd::OwnedFd;
use std::path::Path;

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
use crate::search::open_folder::OpenFolder;
use crate::search::read_rules::{ReadRules, WalkedFolders};
use crate::search::walk::{Found, PathGlob, Walked, sort_newest_first, walk_parallel};

/// One walker thread's findings.
struct Finding<'r> {
    folders: WalkedFolders,
    /// The folder of the files being met, reached from the root.
    folder: OpenFolder<'r>,
    found: Vec<Found>,
    /// Matching files the read rules do not allow.
    hidden: usize,
}

/// The files under `root` matching `glob` that the read rules allow,
/// newest first (then by path), and how many matching files they do not
/// allow. Walked on the walker's threads; only allowed matches are
/// stat'ed for their modification time.
fn find_files(
    root: &Path,
    root_folder: &OwnedFd,
    glob: &PathGlob,
    read_rules: &ReadRules,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> (Vec<Found>, usize) {
    let start = || Finding {
        folders: WalkedFolders::default(),
        folder: OpenFolder::new(root, Some(root_folder)),
        found: Vec::new(),
        hidden: 0,
    };
    let visit = |thread: &mut Finding<'_>, file: &Walked<'_>| {
        if !glob.is_match(file.relative()) {
            return;
        }
        if !read_rules.allows_walked(file.path, file.may_be_link(), &mut thread.folders) {
            thread.hidden += 1;
            return;
        }
        // Only a file still in the folder the walk reached is named.
        if let Some(modified) = file.modified_in(&mut thread.folder) {
            thread.found.push(Found {
                path: file.path.to_path_buf(),
                relative: file.relative().to_path_buf(),
                modified,
            });
        }
    };
    let (threads, _) = walk_parallel(root, cancelled, start, visit);
    let mut found = Vec::new();
    let mut hidden = 0;
    for thread in threads {
        found.extend(thread.found);
        hidden += thread.hidden;
    }
    sort_newest_first(&mut found);
    (found, hidden)
}

/// Arguments of [`GlobTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GlobArgs {
    /// The glob to match (`**/*.rs`, `src/*.ts`; a pattern without `/`
    /// matches file names at any depth).
    pub pattern: String,
    /// The folder to search (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
}

/// Finds files by glob (§7.2).
///
/// Asks `glob` with the pattern first, then `external_directory` for a
/// search folder outside the project. Files ignored by `.gitignore` (and
/// `.ignore`) are skipped; hidden files are included, `.git` is not. All
/// matches are sorted newest first (then by path) and the first 100 are
/// returned with a truncation notice. opencode sorts only the first 100
/// files ripgrep happens to find; sorting all of them first returns the
/// newest files, deterministically.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool {
    limits: SearchLimits,
}

impl GlobTool {
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
    pub fn requests(&self, args: &GlobArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let search = paths::resolve(directory, Path::new(args.path.as_deref().unwrap_or(".")));
        let mut requests = vec![
            ToolRequest::new("glob", args.pattern.clone(), "*")
                .with_metadata(json!({"pattern": args.pattern, "path": args.path})),
        ];
        requests.extend(external_requests(&search, true, directory, worktree));
        requests
    }
}

#[async_trait::async_trait]
impl TypedTool for GlobTool {
    type Args = GlobArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        "Finds files by glob pattern (`**/*.rs`, `src/**/*.ts`; a pattern without `/` matches file names at any depth), skipping files ignored by .gitignore. Returns absolute paths, most recently modified first, at most 100."
    }

    async fn run(&self, args: GlobArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let search = paths::resolve(
            &ctx.directory,
            Path::new(args.path.as_deref().unwrap_or(".")),
        );
        // Where the folder leads as the requests see it: what is searched.
        let asked = AskedPath::of(&search);
        let requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        ask_in_order(&requests, ctx).await?;
        if !tokio::fs::metadata(&search).await.is_ok_and(|m| m.is_dir()) {
            return Err(FileError::NotDirectory(search).into());
        }
        let OpenedRoot::Folder(root_folder) = asked.open_root()? else {
            return Err(FileError::NotDirectory(search).into());
        };
        let glob = PathGlob::new(&args.pattern)?;
        let cancel = ctx.cancel.clone();
        // Only files the read rules allow are named.
        let read_rules = ReadRules::of(ctx);
        let root = search.clone();
        let (walked, hidden) = tokio::task::spawn_blocking(move || {
            find_files(&root, &root_folder, &glob, &read_rules, &|| {
                cancel.is_cancelled()
            })
        })
        .await
        .map_err(|e| ToolError::failed(format!("The file search stopped unexpectedly: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let limit = self.limits.max_results;
        let truncated = walked.len() > limit;
        let shown: Vec<String> = walked
            .iter()
            .take(limit)
            .map(|f| f.path.display().to_string())
            .collect();
        let mut output = if shown.is_empty() {
            "No files found".to_string()
        } else {
            shown.join("\n")
        };
        if hidden > 0 {
            output.push_str(&format!(
                "\n\n({hidden} matching files are not shown: the read rules do not allow reading them)"
            ));
        }
        if truncated {
            output.push_str(&format!(
                "\n\n(Results are truncated: showing first {limit} of {} results. Consider using a more specific path or pattern.)",
                walked.len()
            ));
        }
        Ok(ToolOutput::text(output)
            .with_title(paths::relative(&ctx.worktree, &search))
            .with_metadata(json!({"count": shown.len(), "truncated": truncated})))
    }
}
