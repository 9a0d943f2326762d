//! The `edit` tool (§17): replaces a string in a file using the replacer
//! cascade of [`replace`](crate::files::replace()), after asking `edit` with the diff.

use std::path::Path;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::changes;
use crate::files::asked_path::AskedPath;
use crate::files::atomic::lock_file;
use crate::files::diff::{FileDiff, unified_diff};
use crate::files::error::FileError;
use crate::files::paths;
use crate::files::read::read_bounded;
use crate::files::replace::{EditError, replace};
use crate::files::request::ToolRequest;
use crate::files::requests::{
    ask_file_request, content_read_request, edit_requests, leads_elsewhere,
};
use crate::limits::MAX_FILE_BYTES;
use crate::search::read_rules::ReadRules;

const BOM: &str = "\u{feff}";

/// Arguments of [`EditTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditArgs {
    /// The file to edit (absolute, or relative to the working directory).
    pub file_path: String,
    /// The text to replace. Empty creates a new file with `newString`.
    pub old_string: String,
    /// The replacement text (must differ from `oldString`).
    pub new_string: String,
    /// Replace every occurrence instead of requiring a unique one.
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// Edits a file by string replacement (§17).
///
/// Identical strings are refused; an empty `oldString` creates a file that
/// does not exist yet. Line endings follow the file (CRLF when it contains
/// any `\r\n`) and a byte-order mark is kept. The `edit` request (after
/// `external_directory` for outside paths) carries `{filepath, diff}`:
/// when the `read` rules let the caller read the file, the file's real
/// unified diff (computed under the file's lock, which is held until the
/// write, so the approver sees exactly what is written); otherwise the
/// diff of `oldString` to `newString`, asked before the file is read at
/// all. The file is written atomically; edits of one file are serialised.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

impl EditTool {
    /// The permission requests a call makes, in order (the change is added
    /// to the `edit` request when the call runs). Changes nothing.
    ///
    /// Editing a symlink replaces the link with a file holding the edited
    /// content of what it led to, so through a symlink the call also asks
    /// `read` for the file, as the read tool would (before `edit`): a file
    /// the `read` rules deny cannot reappear under the link's name.
    pub fn requests(&self, args: &EditArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let mut requests = edit_requests(&args.file_path, directory, worktree);
        let path = paths::resolve(directory, Path::new(&args.file_path));
        if leads_elsewhere(&path, directory, worktree)
            && let Some(read) = content_read_request(&path, directory, worktree)
        {
            let at = requests
                .iter()
                .position(|r| r.permission == "edit")
                .unwrap_or(requests.len());
            requests.insert(at, read);
        }
        requests
    }
}

/// `text` with its line endings converted to `\r\n` when `crlf`, else `\n`.
fn with_line_endings(text: &str, crlf: bool) -> String {
    let lf = text.replace("\r\n", "\n");
    if crlf { lf.replace('\n', "\r\n") } else { lf }
}

#[async_trait::async_trait]
impl TypedTool for EditTool {
    type Args = EditArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        "Performs an exact string replacement in a file. oldString must match the file's text (whitespace and indentation tolerant matching is tried when it does not) and must be unique unless replaceAll is set; include surrounding lines to make it unique. An empty oldString creates a new file with newString."
    }

    async fn run(&self, args: EditArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.old_string == args.new_string {
            return Err(EditError::Identical.into());
        }
        let path = paths::resolve(&ctx.directory, Path::new(&args.file_path));
        let filepath = path.display().to_string();
        // Where the path leads as the requests see it: what is edited.
        let asked = AskedPath::of(&path);
        let mut requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        let edit = requests
            .iter()
            .position(|r| r.permission == "edit")
            .map(|at| requests.remove(at));
        // `protected_path` and `external_directory` come first, as before.
        for request in &requests {
            ask_file_request(request, ctx).await?;
        }
        // The change is computed and written under the file's lock, held
        // across the ask, so what the approver saw is what is written.
        let _lock = lock_file(&path).await;
        let ask_edit = |diff: String| {
            let edit = edit.clone();
            let filepath = filepath.clone();
            async move {
                match edit {
                    Some(request) => {
                        let request =
                            request.with_metadata(json!({"filepath": filepath, "diff": diff}));
                        ask_file_request(&request, ctx).await
                    }
                    None => Ok(()),
                }
            }
        };
        // Judged on the resolution the call holds its opens to.
        let readable = asked.pinned(|| ReadRules::of(ctx).allows(&path));
        let (bytes, diff) = if readable {
            // The caller may read the file anyway: compute the change first
            // and show the approver the file's real diff, with context.
            let change = changed(&args, &asked).await?;
            ask_edit(change.1.unified.clone()).await?;
            change
        } else {
            // The file is not readable under the rules: `edit` is asked
            // before the file is read or matched, so "oldString not found"
            // tells a caller whose edit is refused nothing about it (a
            // deviation: opencode asks after computing the diff, see
            // docs/security.md). The approver sees the requested change as
            // a diff of the two strings.
            ask_edit(unified_diff(&filepath, &args.old_string, &args.new_string).unified).await?;
            changed(&args, &asked).await?
        };
        let touched = [path.clone()];
        changes::before_paths(ctx, &touched).await;
        let written = asked.write_atomic(bytes).await;
        changes::after_paths(ctx, &touched).await;
        written?;
        Ok(ToolOutput::text("Edit applied successfully.")
            .with_title(paths::relative(&ctx.worktree, &path))
            .with_metadata(json!({
                "diff": diff.unified,
                "filediff": {
                    "file": filepath,
                    "additions": diff.additions,
                    "deletions": diff.deletions,
                },
            })))
    }
}

/// The file's new bytes after the edit, and the diff of the change.
async fn changed(args: &EditArgs, asked: &AskedPath) -> Result<(Vec<u8>, FileDiff), ToolError> {
    let path = asked.path();
    let filepath = path.display().to_string();
    let metadata = tokio::fs::metadata(path).await;
    if args.old_string.is_empty() {
        if metadata.is_ok() {
            return Err(FileError::AlreadyExists(path.to_path_buf()).into());
        }
        let diff = unified_diff(&filepath, "", &args.new_string);
        return Ok((args.new_string.clone().into_bytes(), diff));
    }
    match metadata {
        Err(_) => {
            return Err(FileError::NotFound {
                path: path.to_path_buf(),
                suggestions: Vec::new(),
            }
            .into());
        }
        Ok(m) if m.is_dir() => return Err(FileError::IsDirectory(path.to_path_buf()).into()),
        Ok(_) => {}
    }
    let raw = read_bounded(asked, MAX_FILE_BYTES).await?;
    let Ok(text) = String::from_utf8(raw) else {
        return Err(FileError::Binary(path.to_path_buf()).into());
    };
    let (bom, content) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text.as_str()),
    };
    let crlf = content.contains("\r\n");
    let old = with_line_endings(&args.old_string, crlf);
    let new = with_line_endings(&args.new_string, crlf);
    let updated = replace(content, &old, &new, args.replace_all.unwrap_or(false))?;
    let diff = unified_diff(
        &filepath,
        &with_line_endings(content, false),
        &with_line_endings(&updated, false),
    );
    Ok((format!("{bom}{updated}").into_bytes(), diff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings() {
        assert_eq!(with_line_endings("a\nb\r\nc", true), "a\r\nb\r\nc");
        assert_eq!(with_line_endings("a\r\nb", false), "a\nb");
    }
}
