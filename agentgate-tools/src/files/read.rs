//! The `read` tool (§19): a file's lines numbered `N: line`, or a
//! directory's entries.

use std::path::{Path, PathBuf};

use agentgate_core::{
    FilePart, MAX_IMAGE_BYTES, ToolContext, ToolError, ToolOutput, TypedTool, image_mime,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::files::asked_path::AskedPath;
use crate::files::error::FileError;
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_in_order, file_requests};
use crate::limits::ReadLimits;
use crate::search::read_rules::ReadRules;

/// Extensions always treated as binary.
const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "exe", "dll", "so", "class", "jar", "war", "7z", "doc", "docx", "xls",
    "xlsx", "ppt", "pptx", "odt", "ods", "odp", "bin", "dat", "obj", "o", "a", "lib", "wasm",
    "pyc", "pyo",
];

/// Arguments of [`ReadTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadArgs {
    /// The file or directory to read (absolute, or relative to the working
    /// directory).
    pub file_path: String,
    /// The line (or entry) number to start from, 1-based.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines (or entries) to return (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Reads a text file with line numbers, or lists a directory (§19).
///
/// Asks `external_directory` for paths outside the project, then `read`
/// with the worktree-relative path and `always: ["*"]`. A png, jpeg, gif
/// or webp image (at most 5 MiB) is returned as an image attachment with
/// the text `Image read successfully` when the model accepts images
/// ([`ToolContext::accepts_images`]); binary files, and images for other
/// models, are refused; output is capped at 2000 lines, 2000 characters per line and
/// 50 KB, with a hint telling the model which `offset` continues. A
/// directory's entries that the `read` rules do not allow are not named, as
/// in glob, grep and list.
///
/// The caps are [`ReadLimits`]; `ReadTool::default()` has opencode's.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool {
    limits: ReadLimits,
}

impl ReadTool {
    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: ReadLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &ReadLimits {
        &self.limits
    }

    /// The permission requests a call makes, in order, for a working
    /// `directory` and `worktree`. Only looks at the file system (to see
    /// whether the path is a directory); changes nothing.
    pub fn requests(&self, args: &ReadArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let path = paths::resolve(directory, Path::new(&args.file_path));
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        file_requests("read", &path, is_dir, directory, worktree)
    }
}

#[async_trait::async_trait]
impl TypedTool for ReadTool {
    type Args = ReadArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        "Reads a file from the local filesystem, or lists a directory. filePath may be absolute or relative to the working directory. Returns up to 2000 lines as `N: line`; use offset (1-based) and limit to read other parts of long files. Binary files cannot be read; images (png, jpeg, gif, webp) are returned as images when the model accepts them."
    }

    async fn run(&self, args: ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = paths::resolve(&ctx.directory, Path::new(&args.file_path));
        // Where the path leads as the requests see it: what is read.
        let asked = AskedPath::of(&path);
        let requests = asked.pinned(|| self.requests(&args, &ctx.directory, &ctx.worktree));
        ask_in_order(&requests, ctx).await?;
        let title = paths::relative(&ctx.worktree, &path);
        let offset = args.offset.unwrap_or(1);
        let limit = args.limit.unwrap_or(self.limits.default_lines);
        if offset == 0 {
            return Err(FileError::ZeroArgument("offset").into());
        }
        if limit == 0 {
            return Err(FileError::ZeroArgument("limit").into());
        }
        let metadata = match tokio::fs::metadata(&path).await {
            Ok(metadata) => metadata,
            Err(_) => {
                return Err(FileError::NotFound {
                    suggestions: suggestions(&asked).await,
                    path,
                }
                .into());
            }
        };
        let output = if metadata.is_dir() {
            read_dir(&asked, offset, limit, &self.limits, &ReadRules::of(ctx)).await?
        } else {
            let bytes = read_bounded(&asked, self.limits.max_file_bytes).await?;
            if ctx.accepts_images()
                && let Some(mime) = image_mime(&path, &bytes)
            {
                return read_image(&path, title, mime, &bytes);
            }
            if is_binary(&path, &bytes) {
                return Err(FileError::Binary(path).into());
            }
            read_text(
                &path,
                &String::from_utf8_lossy(&bytes),
                offset,
                limit,
                &self.limits,
            )?
        };
        Ok(ToolOutput::text(output.text)
            .with_title(title)
            .with_metadata(json!({
                "preview": output.preview,
                "truncated": output.truncated,
            })))
    }
}

/// An image for a model that accepts images: the text opencode returns
/// and the image as an attachment, at most [`MAX_IMAGE_BYTES`].
fn read_image(
    path: &Path,
    title: String,
    mime: &str,
    bytes: &[u8],
) -> Result<ToolOutput, ToolError> {
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_IMAGE_BYTES,
        }
        .into());
    }
    const READ: &str = "Image read successfully";
    Ok(ToolOutput::text(READ)
        .with_title(title)
        .with_metadata(json!({"preview": READ, "truncated": false, "mime": mime}))
        .with_attachment(FilePart::data(mime, bytes).with_filename(path.to_string_lossy())))
}

/// The content of the regular file at `asked`, refusing other kinds of
/// files (devices, FIFOs, sockets), files over `max_bytes`, and a file that
/// is no longer where the call asked about (see [`AskedPath`]); at most
/// that many bytes are ever read, even if the file grows meanwhile. What is
/// checked is the file opened, not the path before the open.
pub(crate) async fn read_bounded(asked: &AskedPath, max_bytes: u64) -> Result<Vec<u8>, FileError> {
    let asked = asked.clone();
    tokio::task::spawn_blocking(move || read_bounded_now(&asked, max_bytes))
        .await
        .map_err(|e| FileError::Read {
            path: PathBuf::new(),
            source: std::io::Error::other(e),
        })?
}

fn read_bounded_now(asked: &AskedPath, max_bytes: u64) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let path = asked.path();
    let fail = |source| FileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = asked.open_file()?;
    let metadata = file.metadata().map_err(fail)?;
    if !metadata.is_file() {
        return Err(FileError::NotRegular(path.to_path_buf()));
    }
    if metadata.len() > max_bytes {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            limit: max_bytes,
        });
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > max_bytes {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            limit: max_bytes,
        });
    }
    Ok(bytes)
}

struct Rendered {
    text: String,
    preview: String,
    truncated: bool,
}

/// Up to three entries of the path's folder whose names contain, or are
/// contained in, its file name (case-insensitively); read from the folder
/// the call asked about, or none.
async fn suggestions(asked: &AskedPath) -> Vec<PathBuf> {
    let path = asked.path();
    let (Some(dir), Some(base)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let base = base.to_string_lossy().to_lowercase();
    let listed = {
        let asked = asked.clone();
        tokio::task::spawn_blocking(move || asked.list_parent()).await
    };
    let Ok(Ok(listed)) = listed else {
        return Vec::new();
    };
    let mut names: Vec<String> = listed
        .iter()
        .map(|name| name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|name| {
            let lower = name.to_lowercase();
            lower.contains(&base) || base.contains(&lower)
        })
        .take(3)
        .map(|name| dir.join(name))
        .collect()
}

/// Whether `bytes` (the content of `path`) should be refused as binary:
/// a known binary extension, a NUL byte in the first 4 KB, or more than
/// 30 % control characters there.
pub fn is_binary(path: &Path, bytes: &[u8]) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if ext.is_some_and(|ext| BINARY_EXTENSIONS.contains(&ext.as_str())) {
        return true;
    }
    let head = &bytes[..bytes.len().min(4096)];
    if head.is_empty() {
        return false;
    }
    if head.contains(&0) {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 9 || (b > 13 && b < 32))
        .count();
    control * 10 > head.len() * 3
}

/// The entries of the directory `path`, leaving out those `read_rules` do
/// not allow (their number is said, not their names).
async fn read_dir(
    asked: &AskedPath,
    offset: usize,
    limit: usize,
    limits: &ReadLimits,
    read_rules: &ReadRules,
) -> Result<Rendered, FileError> {
    let path = asked.path();
    let listed = {
        let asked = asked.clone();
        tokio::task::spawn_blocking(move || asked.list_folder())
            .await
            .map_err(|e| FileError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other(e),
            })??
    };
    let mut entries = Vec::new();
    let mut hidden = 0usize;
    // A link to a folder lists as one.
    for (name, is_dir) in listed {
        if !read_rules.allows(&path.join(&name)) {
            hidden += 1;
            continue;
        }
        let name = name.to_string_lossy().into_owned();
        entries.push(if is_dir { format!("{name}/") } else { name });
    }
    entries.sort();
    let start = offset - 1;
    let mut shown: Vec<&String> = Vec::new();
    let mut bytes = 0;
    for entry in entries.iter().skip(start).take(limit) {
        if !shown.is_empty() && bytes + entry.len() + 1 > limits.max_output_bytes {
            break;
        }
        bytes += entry.len() + 1;
        shown.push(entry);
    }
    let truncated = start + shown.len() < entries.len();
    let listing: Vec<&str> = shown.iter().map(|s| s.as_str()).collect();
    let footer = if truncated {
        format!(
            "(Showing {} of {} entries. Use 'offset' parameter to read beyond entry {})",
            shown.len(),
            entries.len(),
            offset + shown.len()
        )
    } else {
        format!("({} entries)", entries.len())
    };
    let footer = if hidden > 0 {
        format!(
            "{footer}\n({hidden} entries are not shown: the read rules do not allow reading them)"
        )
    } else {
        footer
    };
    let text = format!(
        "<path>{}</path>\n<type>directory</type>\n<entries>\n{}\n\n{footer}\n</entries>",
        path.display(),
        listing.join("\n")
    );
    Ok(Rendered {
        text,
        preview: listing[..listing.len().min(20)].join("\n"),
        truncated,
    })
}

fn read_text(
    path: &Path,
    text: &str,
    offset: usize,
    limit: usize,
    limits: &ReadLimits,
) -> Result<Rendered, FileError> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let total = lines.len();
    if total < offset && !(total == 0 && offset == 1) {
        return Err(FileError::OffsetOutOfRange {
            offset,
            lines: total,
        });
    }
    let mut shown: Vec<String> = Vec::new();
    let mut bytes = 0;
    let mut capped = false;
    for line in lines.iter().skip(offset - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = if line.chars().count() > limits.max_line_chars {
            let cut: String = line.chars().take(limits.max_line_chars).collect();
            format!(
                "{cut}... (line truncated to {} chars)",
                limits.max_line_chars
            )
        } else {
            line.to_string()
        };
        let size = line.len() + usize::from(!shown.is_empty());
        if bytes + size > limits.max_output_bytes {
            capped = true;
            break;
        }
        bytes += size;
        shown.push(line);
    }
    let last = offset + shown.len() - 1;
    let more = capped || offset - 1 + shown.len() < total;
    let numbered: Vec<String> = shown
        .iter()
        .enumerate()
        .map(|(i, line)| format!("{}: {line}", offset + i))
        .collect();
    let footer = if capped {
        format!(
            "(Output capped at 50 KB. Showing lines {offset}-{last}. Use offset={} to continue.)",
            last + 1
        )
    } else if more {
        format!(
            "(Showing lines {offset}-{last} of {total}. Use offset={} to continue.)",
            last + 1
        )
    } else {
        format!("(End of file - total {total} lines)")
    };
    let text = format!(
        "<path>{}</path>\n<type>file</type>\n<content>\n{}\n\n{footer}\n</content>",
        path.display(),
        numbered.join("\n")
    );
    Ok(Rendered {
        text,
        preview: shown[..shown.len().min(20)].join("\n"),
        truncated: more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(is_binary(Path::new("a.zip"), b"text"));
        assert!(is_binary(Path::new("a"), b"ab\0cd"));
        assert!(!is_binary(Path::new("a.rs"), b"fn main() {}\n"));
        assert!(!is_binary(Path::new("empty"), b""));
        assert!(is_binary(Path::new("ctl"), &[1, 2, 3, b'a']));
    }

    #[test]
    fn offsets_and_hints() {
        let text = "a\nb\nc\n";
        let out = read_text(Path::new("/f"), text, 2, 1, &ReadLimits::default()).unwrap();
        assert!(
            out.text
                .contains("2: b\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)")
        );
        let out = read_text(Path::new("/f"), text, 1, 10, &ReadLimits::default()).unwrap();
        assert!(out.text.contains("3: c\n\n(End of file - total 3 lines)"));
        assert!(read_text(Path::new("/f"), text, 5, 10, &ReadLimits::default()).is_err());
        assert!(read_text(Path::new("/f"), "", 1, 10, &ReadLimits::default()).is_ok());
    }

    #[test]
    fn long_lines_and_byte_cap() {
        let long = "x".repeat(3000);
        let out = read_text(Path::new("/f"), &long, 1, 10, &ReadLimits::default()).unwrap();
        assert!(out.text.contains("... (line truncated to 2000 chars)"));
        let many = "y".repeat(100) + "\n";
        let text = many.repeat(1000);
        let out = read_text(Path::new("/f"), &text, 1, 2000, &ReadLimits::default()).unwrap();
        assert!(out.truncated);
        assert!(
            out.text
                .contains("(Output capped at 50 KB. Showing lines 1-")
        );
    }
}
