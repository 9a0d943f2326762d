//! The `apply_patch` tool (§7.2): applies a patch envelope (see
//! [`patch`](crate::files::patch)) to several files at once, all or
//! nothing, after asking one `edit` request for every file it touches.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::changes;
use crate::files::asked_path::AskedPath;
use crate::files::atomic::{FileLock, lock_file};
use crate::files::diff::unified_diff;
use crate::files::error::FileError;
use crate::files::patch::{PatchError, PatchOp, apply_chunks, parse_patch};
use crate::files::paths;
use crate::files::read::read_bounded;
use crate::files::request::ToolRequest;
use crate::files::requests::{
    ask_file_request, content_read_request, edit_requests, leads_elsewhere,
};
use crate::limits::MAX_FILE_BYTES;
use crate::search::read_rules::ReadRules;

const BOM: &str = "\u{feff}";

/// Arguments of [`ApplyPatchTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchArgs {
    /// The full patch text, from `*** Begin Patch` to `*** End Patch`.
    pub patch_text: String,
}

/// Applies a multi-file patch (§7.2), offered instead of edit and write to
/// GPT and codex-family models.
///
/// Asks, for every file the patch touches (and every move target), what
/// write and edit ask first (`protected_path`, `external_directory`), then
/// `read` for every file whose content a move or a symlink would carry to
/// another name, and for every move target, exactly as the read tool
/// would (so a `read` deny on `.env` denies `*** Update File: .env` +
/// `*** Move to: env.txt`, and a `read` ask asks), then
/// ONE `edit` request whose patterns are every touched file,
/// worktree-relative, approving `*`, with the combined diff and each
/// file's diff in metadata. The new contents are all computed before that
/// ask (a hunk that does not apply fails the call, nothing written); the
/// files are written only after it, and when a write fails midway the
/// files already written are restored.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyPatchTool;

/// The absolute paths `op` touches: its file, then its move target.
fn touched(op: &PatchOp, directory: &Path) -> Vec<PathBuf> {
    let mut paths = vec![paths::resolve(directory, Path::new(op.path()))];
    if let PatchOp::Update {
        move_to: Some(target),
        ..
    } = op
    {
        paths.push(paths::resolve(directory, Path::new(target)));
    }
    paths
}

/// The `read` requests of `ops` (a move is a read): an update that moves
/// its file carries the file's content to another name, and one through a
/// symlink replaces the link with a file holding what it led to, so such a
/// source asks `read` as the read tool would; a move's target asks too
/// (its old content is read for the diff, and a read-denied name must not
/// be reached by a rename either).
fn read_requests(ops: &[PatchOp], directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
    let mut requests: Vec<ToolRequest> = Vec::new();
    for op in ops {
        let PatchOp::Update { path, move_to, .. } = op else {
            continue;
        };
        let source = paths::resolve(directory, Path::new(path));
        let mut read = Vec::new();
        if move_to.is_some() || leads_elsewhere(&source, directory, worktree) {
            read.push(source);
        }
        if let Some(target) = move_to {
            read.push(paths::resolve(directory, Path::new(target)));
        }
        for path in read {
            if let Some(request) = content_read_request(&path, directory, worktree)
                && !requests.contains(&request)
            {
                requests.push(request);
            }
        }
    }
    requests
}

/// What `ops` ask, in order: every file's `protected_path` and
/// `external_directory` requests, the `read` of every source a move or a
/// symlink carries elsewhere (and of every move target), then one `edit`
/// with every pattern.
fn requests_for(ops: &[PatchOp], directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
    let mut first: Vec<ToolRequest> = Vec::new();
    let mut edit = ToolRequest {
        permission: "edit".to_string(),
        patterns: Vec::new(),
        always: vec!["*".to_string()],
        metadata: json!({}),
    };
    for op in ops {
        for path in touched(op, directory) {
            let path = path.display().to_string();
            for request in edit_requests(&path, directory, worktree) {
                if request.permission == "edit" {
                    for pattern in request.patterns {
                        if !edit.patterns.contains(&pattern) {
                            edit.patterns.push(pattern);
                        }
                    }
                } else if !first.contains(&request) {
                    first.push(request);
                }
            }
        }
    }
    first.extend(read_requests(ops, directory, worktree));
    first.push(edit);
    first
}

impl ApplyPatchTool {
    /// The permission requests a call makes, in order (the diffs are added
    /// to the `edit` request when the call runs). Changes nothing; fails
    /// when the patch does not parse, as the call would.
    pub fn requests(
        &self,
        args: &ApplyPatchArgs,
        directory: &Path,
        worktree: &Path,
    ) -> Result<Vec<ToolRequest>, PatchError> {
        Ok(requests_for(
            &parse_patch(&args.patch_text)?,
            directory,
            worktree,
        ))
    }
}

/// One file's planned change.
struct Change {
    path: PathBuf,
    /// Where the path led when the call asked: what is read and written.
    asked: AskedPath,
    /// What it holds now (`None`: it does not exist).
    before: Option<Vec<u8>>,
    /// What it will hold (`None`: it is removed).
    after: Option<Vec<u8>>,
}

/// What a patch changes, as the tool reports it.
struct Described {
    /// Every changed file's unified diff, concatenated.
    combined: String,
    /// One JSON object per changed file (opencode's `files` metadata).
    files: Vec<serde_json::Value>,
    /// `A|D|M path` per changed file, relative to the worktree.
    summary: Vec<String>,
}

/// Describes the `changes` that change something, paths relative to
/// `worktree`.
fn describe(changes: &[Change], worktree: &Path) -> Described {
    let mut combined = String::new();
    let mut files = Vec::new();
    let mut summary = Vec::new();
    for change in changes {
        if change.before == change.after {
            continue;
        }
        let filepath = change.path.display().to_string();
        let old = String::from_utf8_lossy(change.before.as_deref().unwrap_or_default());
        let new = String::from_utf8_lossy(change.after.as_deref().unwrap_or_default());
        let diff = unified_diff(&filepath, &old, &new);
        combined.push_str(&diff.unified);
        let (kind, letter) = match (&change.before, &change.after) {
            (None, _) => ("add", "A"),
            (_, None) => ("delete", "D"),
            _ => ("update", "M"),
        };
        let relative = paths::relative(worktree, &change.path);
        summary.push(format!("{letter} {relative}"));
        files.push(json!({
            "filePath": filepath,
            "relativePath": relative,
            "type": kind,
            "patch": diff.unified,
            "additions": diff.additions,
            "deletions": diff.deletions,
        }));
    }
    Described {
        combined,
        files,
        summary,
    }
}

/// The planned state of every touched file, in order of first touch, so
/// later operations of one patch see what earlier ones did.
struct Plan {
    changes: Vec<Change>,
    /// Where each touched path led when the call asked.
    asked: HashMap<PathBuf, AskedPath>,
}

impl Plan {
    fn index(&self, path: &Path) -> Option<usize> {
        self.changes.iter().position(|c| c.path == path)
    }

    /// The file's planned text (`None`: absent), reading it the first time.
    async fn current(&mut self, path: &Path) -> Result<Option<Vec<u8>>, FileError> {
        if let Some(i) = self.index(path) {
            return Ok(self.changes[i].after.clone());
        }
        let asked = match self.asked.get(path) {
            Some(asked) => asked.clone(),
            None => AskedPath::of(path),
        };
        let before = match tokio::fs::metadata(path).await {
            Ok(m) if m.is_dir() => return Err(FileError::IsDirectory(path.to_path_buf())),
            Ok(_) => Some(read_bounded(&asked, MAX_FILE_BYTES).await?),
            Err(_) => None,
        };
        self.changes.push(Change {
            path: path.to_path_buf(),
            asked,
            after: before.clone(),
            before,
        });
        Ok(self.changes.last().and_then(|c| c.after.clone()))
    }

    fn set(&mut self, path: &Path, after: Option<Vec<u8>>) {
        if let Some(i) = self.index(path) {
            self.changes[i].after = after;
        }
    }
}

fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|_| FileError::Binary(path.to_path_buf()).into())
}

fn not_found(path: &Path) -> ToolError {
    FileError::NotFound {
        path: path.to_path_buf(),
        suggestions: Vec::new(),
    }
    .into()
}

/// Computes every operation's result in memory.
async fn plan(
    ops: &[PatchOp],
    directory: &Path,
    asked: HashMap<PathBuf, AskedPath>,
) -> Result<Plan, ToolError> {
    let mut plan = Plan {
        changes: Vec::new(),
        asked,
    };
    for op in ops {
        let path = paths::resolve(directory, Path::new(op.path()));
        let current = plan.current(&path).await?;
        match op {
            PatchOp::Add { contents, .. } => {
                plan.set(&path, Some(contents.clone().into_bytes()));
            }
            PatchOp::Delete { .. } => {
                if current.is_none() {
                    return Err(not_found(&path));
                }
                plan.set(&path, None);
            }
            PatchOp::Update {
                move_to, chunks, ..
            } => {
                let Some(bytes) = current else {
                    return Err(not_found(&path));
                };
                let text = text_of(&path, bytes)?;
                let (bom, content) = match text.strip_prefix(BOM) {
                    Some(rest) => (BOM, rest),
                    None => ("", text.as_str()),
                };
                let display = paths::normalize(&path).display().to_string();
                let updated = if chunks.is_empty() {
                    content.to_string()
                } else {
                    apply_chunks(content, chunks, &display)
                        .map_err(|e| ToolError::failed(e.to_string()))?
                };
                let bytes = format!("{bom}{updated}").into_bytes();
                match move_to {
                    Some(target) => {
                        let target = paths::resolve(directory, Path::new(target));
                        plan.current(&target).await?;
                        plan.set(&path, None);
                        plan.set(&target, Some(bytes));
                    }
                    None => plan.set(&path, Some(bytes)),
                }
            }
        }
    }
    Ok(plan)
}

/// Writes `content` (or removes the file) where the call asked.
async fn put(asked: &AskedPath, content: Option<&[u8]>) -> Result<(), FileError> {
    match content {
        Some(bytes) => asked.write_atomic(bytes.to_vec()).await,
        None => asked.remove().await,
    }
}

/// Writes every change, all or nothing: on a failure, what was already
/// written is put back.
async fn write_all(changes: &[Change]) -> Result<(), ToolError> {
    let mut written: Vec<&Change> = Vec::new();
    for change in changes {
        if change.before == change.after {
            continue;
        }
        if let Err(error) = put(&change.asked, change.after.as_deref()).await {
            // Put back what this call already changed.
            for done in written.iter().rev() {
                let _ = put(&done.asked, done.before.as_deref()).await;
            }
            return Err(error.into());
        }
        written.push(change);
    }
    Ok(())
}

#[async_trait::async_trait]
impl TypedTool for ApplyPatchTool {
    type Args = ApplyPatchArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "apply_patch"
    }

    fn description(&self) -> &str {
        "Applies a patch to files: add, delete, update (and move) several files in one call. patchText starts with `*** Begin Patch` and ends with `*** End Patch`; in between, `*** Add File: path` followed by lines starting with `+`; `*** Delete File: path`; or `*** Update File: path` (optionally followed by `*** Move to: new/path`) and hunks, each starting with `@@` (optionally followed by a line to find first, such as a function signature) and made of lines starting with ` ` (context, about 3 lines around each change), `-` (removed) or `+` (added); `*** End of File` after a hunk that ends the file. Paths are relative to the working directory. Either every change applies or none does."
    }

    async fn run(&self, args: ApplyPatchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ops = parse_patch(&args.patch_text).map_err(|e| ToolError::failed(e.to_string()))?;
        // Where each path leads as the requests see it: what is changed.
        let asked: HashMap<PathBuf, AskedPath> = ops
            .iter()
            .flat_map(|op| touched(op, &ctx.directory))
            .map(|path| {
                let asked = AskedPath::of(&path);
                (path, asked)
            })
            .collect();
        let pins: Vec<(PathBuf, PathBuf)> = asked.values().map(AskedPath::pin).collect();
        let mut requests =
            paths::with_pinned(&pins, || requests_for(&ops, &ctx.directory, &ctx.worktree));
        let read_rules = ReadRules::of(ctx);
        // Judged on the resolution the call holds its opens to.
        let readable =
            paths::with_pinned(&pins, || asked.keys().all(|path| read_rules.allows(path)));
        let mut edit = requests.pop();
        for request in &requests {
            ask_file_request(request, ctx).await?;
        }
        let all: BTreeSet<PathBuf> = ops
            .iter()
            .flat_map(|op| touched(op, &ctx.directory))
            .collect();
        // Matching a hunk reads the file, and a failed match is an error
        // the model sees: unless the read rules let the caller read every
        // touched file anyway, `edit` is asked before any file is read
        // (showing the patch itself), so a caller whose edit is refused
        // learns nothing about a file it may not read.
        if !readable && let Some(request) = edit.take() {
            let patterns = request.patterns.join(", ");
            let metadata = json!({"filepath": patterns, "diff": args.patch_text, "files": []});
            request.with_metadata(metadata).ask(ctx).await?;
        }
        // Locks in path order, so two patches never wait on each other.
        let mut locks: Vec<FileLock> = Vec::with_capacity(all.len());
        for path in &all {
            locks.push(lock_file(path).await);
        }
        let plan = plan(&ops, &ctx.directory, asked).await?;

        let Described {
            combined,
            files,
            summary,
        } = describe(&plan.changes, &ctx.worktree);
        let patterns = edit
            .as_ref()
            .map(|e| e.patterns.join(", "))
            .unwrap_or_default();
        // opencode's shape: the patterns joined, the combined diff, each file.
        let metadata = json!({"filepath": patterns, "diff": combined, "files": files});
        if let Some(edit) = edit {
            edit.with_metadata(metadata.clone()).ask(ctx).await?;
        }

        let touched: Vec<PathBuf> = all.iter().cloned().collect();
        changes::before_paths(ctx, &touched).await;
        let written = write_all(&plan.changes).await;
        changes::after_paths(ctx, &touched).await;
        written?;
        let output = if summary.is_empty() {
            "Success. No files were changed.".to_string()
        } else {
            format!(
                "Success. Updated the following files:\n{}",
                summary.join("\n")
            )
        };
        Ok(ToolOutput::text(output)
            .with_title(summary.join(", "))
            .with_metadata(metadata))
    }
}
