//! The `grep` tool (§7.2): lines matching a regular expression, grouped by
//! file, files newest first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::files::error::FileError;
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_in_order, external_requests};
use crate::limits::SearchLimits;
use crate::search::read_rules::{ReadRules, WalkedFolders};
use crate::search::walk::{PathGlob, Walked, walk_parallel};

/// Arguments of [`GrepTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust `regex` syntax, as ripgrep).
    pub pattern: String,
    /// The folder or file to search (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob (`*.rs`, `*.{ts,tsx}`).
    #[serde(default)]
    pub include: Option<String>,
}

/// Searches file contents with ripgrep's engine (§7.2).
///
/// Asks `grep` with the pattern first, then `external_directory` for a
/// search path outside the project (as a folder or a file, as it exists).
/// Files ignored by `.gitignore` and binary files are skipped. Matches are
/// grouped by file, files newest first (then by path), lines in file order;
/// at most 100 (and about 50 KB) are shown, with a notice of how many were
/// hidden.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool {
    limits: SearchLimits,
}

impl GrepTool {
    /// The same tool with other limits.
    pub fn with_limits(mut self, limits: SearchLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits calls run with.
    pub fn limits(&self) -> &SearchLimits {
        &self.limits
    }

    /// The permission requests a call makes, in order. Only looks at the
    /// file system (whether the path is a folder); changes nothing.
    pub fn requests(&self, args: &GrepArgs, directory: &Path, worktree: &Path) -> Vec<ToolRequest> {
        let search = paths::resolve(directory, Path::new(args.path.as_deref().unwrap_or(".")));
        let is_dir = std::fs::metadata(&search).is_ok_and(|m| m.is_dir());
        let mut requests = vec![
            ToolRequest::new("grep", args.pattern.clone(), "*").with_metadata(
                json!({"pattern": args.pattern, "path": args.path, "include": args.include}),
            ),
        ];
        requests.extend(external_requests(&search, is_dir, directory, worktree));
        requests
    }

    /// The listing of `found` within the limits: the matches grouped under
    /// their file, long lines cut; and how many matches it shows.
    fn listing(&self, found: &[FileMatches]) -> (Vec<String>, usize) {
        let mut body: Vec<String> = Vec::new();
        let mut bytes = 0;
        let mut shown = 0;
        let mut current: Option<&Path> = None;
        let matches = found.iter().flat_map(|file| {
            file.lines
                .iter()
                .map(move |(line, text)| (file.path.as_path(), *line, text))
        });
        for (path, line, text) in matches.take(self.limits.max_results) {
            let mut entry = Vec::new();
            if current != Some(path) {
                if current.is_some() {
                    entry.push(String::new());
                }
                entry.push(format!("{}:", path.display()));
            }
            let text = if text.chars().count() > self.limits.max_line_chars {
                let cut: String = text.chars().take(self.limits.max_line_chars).collect();
                format!("{cut}...")
            } else {
                text.clone()
            };
            entry.push(format!("  Line {line}: {text}"));
            let size: usize = entry.iter().map(|l| l.len() + 1).sum();
            // Stay under the loop's output cap, which does not apply to
            // outputs that say whether they were truncated.
            if shown > 0 && bytes + size > self.limits.max_output_bytes {
                break;
            }
            bytes += size;
            shown += 1;
            current = Some(path);
            body.extend(entry);
        }
        (body, shown)
    }
}

/// The matching lines of one file.
struct FileMatches {
    path: PathBuf,
    modified: SystemTime,
    /// Line numbers and lines (without their line ending), in file order.
    lines: Vec<(u64, String)>,
}

/// One walker thread's searcher and findings.
struct Searching {
    searcher: Searcher,
    matcher: RegexMatcher,
    folders: WalkedFolders,
    found: Vec<FileMatches>,
    hidden: usize,
    errors: bool,
}

/// The files under `root` (or `root` itself) with lines matching
/// `matcher`, files newest first (then by path); whether some paths could
/// not be read; and how many files the read rules kept from being
/// searched. Files are walked and searched on the walker's threads; a file
/// the read rules do not allow is never opened, decided before searching
/// so the answer never depends on its content. Only files with matches
/// are stat'ed for their modification time.
fn search_tree(
    root: &Path,
    matcher: &RegexMatcher,
    include: Option<&PathGlob>,
    read_rules: &ReadRules,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> (Vec<FileMatches>, bool, usize) {
    let start = || Searching {
        searcher: SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build(),
        matcher: matcher.clone(),
        folders: WalkedFolders::default(),
        found: Vec::new(),
        hidden: 0,
        errors: false,
    };
    let visit = |thread: &mut Searching, file: &Walked<'_>| {
        if include.is_some_and(|include| !include.is_match(file.relative)) {
            return;
        }
        if !read_rules.allows_walked(file.path, file.may_be_link(), &mut thread.folders) {
            thread.hidden += 1;
            return;
        }
        let mut lines = Vec::new();
        let result = thread.searcher.search_path(
            &thread.matcher,
            file.path,
            UTF8(|line, text| {
                lines.push((line, text.trim_end_matches(['\n', '\r']).to_string()));
                Ok(true)
            }),
        );
        thread.errors |= result.is_err();
        if !lines.is_empty() {
            thread.found.push(FileMatches {
                path: file.path.to_path_buf(),
                modified: file.modified(),
                lines,
            });
        }
    };
    let (threads, mut errors) = walk_parallel(root, cancelled, start, visit);
    let mut found = Vec::new();
    let mut hidden = 0;
    for thread in threads {
        found.extend(thread.found);
        hidden += thread.hidden;
        errors |= thread.errors;
    }
    found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    (found, errors, hidden)
}

#[async_trait::async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;

    fn id(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Searches file contents with a regular expression (ripgrep syntax), skipping files ignored by .gitignore and binary files. Use include to filter files by glob (`*.rs`). Returns matching lines with their line numbers, grouped by file, most recently modified files first, at most 100."
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.pattern.is_empty() {
            return Err(ToolError::failed("pattern is required"));
        }
        ask_in_order(&self.requests(&args, &ctx.directory, &ctx.worktree), ctx).await?;
        let search = paths::resolve(
            &ctx.directory,
            Path::new(args.path.as_deref().unwrap_or(".")),
        );
        if tokio::fs::metadata(&search).await.is_err() {
            return Err(FileError::NotFound {
                path: search,
                suggestions: Vec::new(),
            }
            .into());
        }
        let matcher = RegexMatcher::new(&args.pattern).map_err(|e| FileError::Pattern {
            pattern: args.pattern.clone(),
            reason: e.to_string(),
        })?;
        let include = args.include.as_deref().map(PathGlob::new).transpose()?;
        let cancel = ctx.cancel.clone();
        let read_rules = ReadRules::of(ctx);
        let (found, errors, hidden) = tokio::task::spawn_blocking(move || {
            search_tree(&search, &matcher, include.as_ref(), &read_rules, &|| {
                cancel.is_cancelled()
            })
        })
        .await
        .map_err(|e| ToolError::failed(format!("The search stopped unexpectedly: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let title = args.pattern.clone();
        let total: usize = found.iter().map(|file| file.lines.len()).sum();
        if total == 0 {
            let text = if hidden > 0 {
                format!(
                    "No files found ({hidden} files in the search path were not searched: the read rules do not allow reading them)"
                )
            } else {
                "No files found".to_string()
            };
            return Ok(ToolOutput::text(text)
                .with_title(title)
                .with_metadata(json!({"matches": 0, "truncated": false})));
        }
        let (body, shown) = self.listing(&found);
        let truncated = shown < total;
        let mut lines = vec![if truncated {
            format!("Found {total} matches (showing first {shown})")
        } else {
            format!("Found {total} matches")
        }];
        lines.extend(body);
        if truncated {
            lines.push(String::new());
            lines.push(format!(
                "(Results truncated: showing {shown} of {total} matches ({} hidden). Consider using a more specific path or pattern.)",
                total - shown
            ));
        }
        if hidden > 0 {
            lines.push(String::new());
            lines.push(format!(
                "({hidden} files in the search path were not searched: the read rules do not allow reading them)"
            ));
        }
        if errors {
            lines.push(String::new());
            lines.push("(Some paths were inaccessible and skipped)".to_string());
        }
        Ok(ToolOutput::text(lines.join("\n"))
            .with_title(title)
            .with_metadata(json!({"matches": total, "truncated": truncated})))
    }
}
