//! The `grep` tool (§7.2): lines matching a regular expression, grouped by
//! file, files newest first.

use std::path::{Path, PathBuf};

use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::files::error::FileError;
use crate::files::paths;
use crate::files::request::ToolRequest;
use crate::files::requests::{ask_in_order, external_requests};
use crate::limits::SearchLimits;
use crate::search::read_rules::ReadRules;
use crate::search::walk::{PathGlob, sort_newest_first, walk_files};

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
}

struct Match {
    path: PathBuf,
    line: u64,
    text: String,
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
        let (matches, errors, hidden) = tokio::task::spawn_blocking(move || {
            let (mut files, mut errors) =
                walk_files(&search, std::sync::Arc::new(|_: &Path| true), &|| {
                    cancel.is_cancelled()
                });
            if let Some(include) = &include {
                files.retain(|f| include.is_match(&f.relative));
            }
            // Only files the read rules allow are searched, decided before
            // searching so the answer never depends on their content.
            let before = files.len();
            files.retain(|f| read_rules.allows(&f.path));
            let hidden = before - files.len();
            sort_newest_first(&mut files);
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .build();
            let mut matches = Vec::new();
            for file in files {
                if cancel.is_cancelled() {
                    break;
                }
                let result = searcher.search_path(
                    &matcher,
                    &file.path,
                    UTF8(|line, text| {
                        matches.push(Match {
                            path: file.path.clone(),
                            line,
                            text: text.trim_end_matches(['\n', '\r']).to_string(),
                        });
                        Ok(true)
                    }),
                );
                if result.is_err() {
                    errors = true;
                }
            }
            (matches, errors, hidden)
        })
        .await
        .map_err(|e| ToolError::failed(format!("The search stopped unexpectedly: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let title = args.pattern.clone();
        if matches.is_empty() {
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
        let total = matches.len();
        let mut body: Vec<String> = Vec::new();
        let mut bytes = 0;
        let mut shown = 0;
        let mut current: Option<&Path> = None;
        for found in matches.iter().take(self.limits.max_results) {
            let mut entry = Vec::new();
            if current != Some(found.path.as_path()) {
                if current.is_some() {
                    entry.push(String::new());
                }
                entry.push(format!("{}:", found.path.display()));
            }
            let text = if found.text.chars().count() > self.limits.max_line_chars {
                let cut: String = found
                    .text
                    .chars()
                    .take(self.limits.max_line_chars)
                    .collect();
                format!("{cut}...")
            } else {
                found.text.clone()
            };
            entry.push(format!("  Line {}: {text}", found.line));
            let size: usize = entry.iter().map(|l| l.len() + 1).sum();
            // Stay under the loop's output cap, which does not apply to
            // outputs that say whether they were truncated.
            if shown > 0 && bytes + size > self.limits.max_output_bytes {
                break;
            }
            bytes += size;
            shown += 1;
            current = Some(found.path.as_path());
            body.extend(entry);
        }
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
