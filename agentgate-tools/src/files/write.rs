//! The `write` tool (§7.2): replaces or creates a whole file, atomically,
//! after asking `edit` with a diff.

use std::path::Path;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::changes;
use crate::files::asked_path::AskedPath;
use crate::files::atomic::lock_file;
use crate::files::diff::unified_diff;
use crate::files::error::FileError;
use crate::files::paths;
use crate::files::read::read_bounded;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_file_request, edit_requests};
use crate::limits::MAX_FILE_BYTES;

/// Arguments of [`WriteTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    /// The file to write (absolute, or relative to the working directory).
    pub file_path: String,
    /// The file's complete new content.
    pub content: String,
}

/// Writes a whole file (§7.2).
///
/// Asks `external_directory` for paths outside the project, then `edit`
/// with the worktree-relative path, `always: ["*"]` and metadata
/// `{filepath, diff}`; only then creates missing folders and writes the file
/// atomically (temporary file + rename). Concurrent writes and edits of one
/// file run one after another.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

impl WriteTool {
    /// The permission requests a call makes, in order (the `edit` request's
    /// diff is added when the call runs). Changes nothing.
    pub fn requests(
        &self,
        args: &WriteArgs,
        directory: &Path,
        worktree: &Path,
    ) -> Vec<ToolRequest> {
        edit_requests(&args.file_path, directory, worktree)
    }
}

#[async_trait::async_trait]
impl TypedTool for WriteTool {
    type Args = WriteArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Writes a file to the local filesystem, replacing it if it exists and creating missing folders. filePath may be absolute or relative to the working directory. Prefer edit for changes to an existing file."
    }

    async fn run(&self, args: WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = paths::resolve(&ctx.directory, Path::new(&args.file_path));
        // Where the path leads as the requests see it: what is written.
        let asked = AskedPath::of(&path);
        let mut requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        let edit = requests.pop();
        for request in &requests {
            ask_file_request(request, ctx).await?;
        }
        let _lock = lock_file(&path).await;
        let (exists, old) = match tokio::fs::metadata(&path).await {
            Ok(metadata) if metadata.is_dir() => return Err(FileError::IsDirectory(path).into()),
            Ok(_) => {
                let bytes = read_bounded(&asked, MAX_FILE_BYTES).await?;
                (true, String::from_utf8_lossy(&bytes).into_owned())
            }
            Err(_) => (false, String::new()),
        };
        let filepath = path.display().to_string();
        let diff = unified_diff(&filepath, &old, &args.content);
        if let Some(edit) = edit {
            edit.with_metadata(json!({"filepath": filepath, "diff": diff.unified}))
                .ask(ctx)
                .await?;
        }
        let touched = [path.clone()];
        changes::before_paths(ctx, &touched).await;
        let written = asked.write_atomic(args.content.into_bytes()).await;
        changes::after_paths(ctx, &touched).await;
        written?;
        Ok(ToolOutput::text("Wrote file successfully.")
            .with_title(paths::relative(&ctx.worktree, &path))
            .with_metadata(json!({
                "filepath": filepath,
                "exists": exists,
                "diff": diff.unified,
            })))
    }
}
