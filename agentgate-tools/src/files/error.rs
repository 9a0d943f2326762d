//! [`FileError`]: why a file tool could not do its work. The messages are
//! what the model sees, so each says what to do next.

use std::path::PathBuf;

use agentgate_core::ToolError;

use crate::files::atomic::WriteError;
use crate::files::replace::EditError;

/// A file tool's failure (other than a permission answer).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The path does not exist; `suggestions` are similar names in its folder.
    #[error("File not found: {}{}", path.display(), suggest(suggestions))]
    NotFound {
        /// The missing path.
        path: PathBuf,
        /// Up to three similarly named entries of the same folder.
        suggestions: Vec<PathBuf>,
    },
    /// A file was expected.
    #[error("Path is a directory, not a file: {}", .0.display())]
    IsDirectory(PathBuf),
    /// A directory was expected.
    #[error("Path is not a directory: {}. Give a directory to search or list.", .0.display())]
    NotDirectory(PathBuf),
    /// The path is a device, FIFO or socket, not a regular file.
    #[error(
        "Not a regular file: {}. Only regular files can be read or edited.",
        .0.display()
    )]
    NotRegular(PathBuf),
    /// A folder on the path (or the path itself, through a link) leads
    /// somewhere other than when the call asked permission: changed in
    /// between, by another process. Nothing was read or written there.
    #[error(
        "{} changed while the call was being approved: it led to {} when permission was asked, and now leads to {}. Nothing was read or written; run the call again to be asked about where it leads now.",
        path.display(),
        asked.display(),
        now.as_deref().map_or_else(|| "a place that cannot be told (is /proc mounted?)".to_string(), |now| now.display().to_string())
    )]
    Moved {
        /// The path the call names.
        path: PathBuf,
        /// Where it led when the call asked.
        asked: PathBuf,
        /// Where it leads now, when that can be told.
        now: Option<PathBuf>,
    },
    /// The file is larger than the tools read.
    #[error(
        "File too large: {} is over {limit} bytes. Use grep or bash (head, tail, sed -n) to look at parts of it.",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The largest size read.
        limit: u64,
    },
    /// The file looks binary.
    #[error("Cannot read binary file: {}", .0.display())]
    Binary(PathBuf),
    /// `offset` is past the end of the file.
    #[error("Offset {offset} is out of range for this file ({lines} lines)")]
    OffsetOutOfRange {
        /// The requested first line (1-based).
        offset: usize,
        /// The file's line count.
        lines: usize,
    },
    /// `offset` or `limit` is zero.
    #[error("{0} must be greater than or equal to 1")]
    ZeroArgument(&'static str),
    /// An edit with an empty `oldString` would overwrite an existing file.
    #[error(
        "File {} already exists. Provide a non-empty oldString to edit it, or use write for an intentional full-file replacement.",
        .0.display()
    )]
    AlreadyExists(PathBuf),
    /// The replacement failed.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Reading failed.
    #[error("Could not read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The search pattern is not a valid glob or regular expression.
    #[error("Invalid pattern {pattern:?}: {reason}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn suggest(suggestions: &[PathBuf]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    let list: Vec<String> = suggestions
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!("\n\nDid you mean one of these?\n{}", list.join("\n"))
}

impl From<FileError> for ToolError {
    fn from(error: FileError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

impl From<EditError> for ToolError {
    fn from(error: EditError) -> Self {
        ToolError::Failed(error.to_string())
    }
}
