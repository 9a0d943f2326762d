//! # agentgate-tools
//!
//! Built-in tools for the agent SDK (read, write, edit, apply_patch, bash,
//! grep, glob, list, webfetch, todo). Each tool builds its permission request before any
//! side effect. Modules are private except the namespaces listed below;
//! everything else is re-exported here, grouped by tool.
//!
//! ```
//! use agentgate_tools::core::permission::wildcard;
//! assert!(wildcard::matches("src/main.rs", "src/*"));
//! ```
//!
//! The bash tool asks for each command of a command line ([`bash_scan::scan`], §8.1):
//! one pattern per command, "always" patterns from the arity table, and
//! `cd` commands only for their directory.
//!
//! ```
//! let scan = agentgate_tools::bash_scan::scan("cd sub && npm run build -- --watch | tee log").unwrap();
//! assert_eq!(scan.patterns, ["npm run build -- --watch", "tee log"]);
//! assert_eq!(scan.always, ["npm run build *", "tee *"]);
//! assert_eq!(scan.path_args, ["sub", "log"]);
//! ```
//!
//! The scan judges what bash will execute, not how the line is spelled:
//! quotes, escapes, braces, wrappers and `bash -c` scripts are seen through,
//! and what cannot be seen through is asked as [`bash_scan::BASH_OPAQUE`]. What the
//! rules guarantee, and what they cannot see, is in the repository's
//! `docs/security.md`.
//!
//! ```
//! let scan = agentgate_tools::bash_scan::scan("sudo env FOO=1 /bin/r'm' -f x").unwrap();
//! assert!(scan.patterns.contains(&"rm -f x".to_string()));
//! assert!(agentgate_tools::bash_scan::scan("$CMD -f x").unwrap().opaque.len() == 1);
//! ```
//!
//! The file tools ([`ReadTool`], [`WriteTool`], [`EditTool`], [`GlobTool`],
//! [`GrepTool`], [`ListTool`]) resolve paths against the context's directory,
//! ask `external_directory` for paths outside the project (§7.3), then their
//! own permission with a worktree-relative pattern; writes are atomic. Each
//! exposes `requests(args, directory, worktree)`: what a call would ask,
//! without running it. Here an edit found by the replacer cascade ([`replace`])
//! despite different spacing:
//!
//! ```
//! use std::sync::Arc;
//! use agentgate_tools::core::permission::{AllowAll, PermissionGate};
//! use agentgate_tools::core::{Tool, ToolContext};
//! use agentgate_tools::{EditTool, ReadTool};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("agentgate-tools-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("main.rs"), "fn main() {\n    let x = 1;\n}\n").unwrap();
//! let permissions = PermissionGate::new();
//! permissions.set_approver(Arc::new(AllowAll));
//! let ctx = ToolContext::new("ses_1", "msg_1", "call_1", permissions)
//!     .with_directories(dir.clone(), dir.clone());
//!
//! let edit = serde_json::json!({"filePath": "main.rs", "oldString": "x  =  1", "newString": "x = 2"});
//! EditTool.execute(edit, &ctx).await.unwrap();
//! let read = ReadTool::default().execute(serde_json::json!({"filePath": "main.rs"}), &ctx).await.unwrap();
//! assert!(read.output.contains("2:     let x = 2;"));
//! assert_eq!(read.title, "main.rs");
//! std::fs::remove_dir_all(&dir).unwrap();
//! # });
//! ```

//! [`ApplyPatchTool`] applies a multi-file patch in the envelope GPT and
//! codex-family models write, all or nothing. It asks `protected_path` and
//! `external_directory` for the files that need them, then one `edit` for
//! every file the patch touches (worktree-relative, approving `*`), with
//! the diffs in metadata, before it writes anything; [`parse_patch`] is its
//! parser, a pure function:
//!
//! ```
//! use agentgate_tools::{ApplyPatchArgs, ApplyPatchTool, PatchOp, parse_patch};
//! let text = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Delete File: b.txt\n*** End Patch";
//! assert_eq!(parse_patch(text).unwrap()[1], PatchOp::Delete { path: "b.txt".into() });
//! let args = ApplyPatchArgs { patch_text: text.into() };
//! let dir = std::path::Path::new("/project");
//! let requests = ApplyPatchTool.requests(&args, dir, dir).unwrap();
//! assert_eq!(requests.len(), 1);
//! assert_eq!(requests[0].patterns, ["a.txt", "b.txt"]);
//! ```

/// agentgate-core, re-exported so a host needs one dependency for the tools and
/// the contracts they implement.
pub use agentgate_core as core;

// The tools by area; each folder's `mod.rs` lists what it holds.
mod builtin;
mod changes;
#[cfg(unix)]
mod checkpoint;
mod files;
mod git;
mod limits;
mod sandbox;
mod search;
mod shell;
mod skill;
mod spill;
mod todo;
mod web;

// Namespaces users call into directly.
pub use files::paths;
pub use git::config as git_config;
pub use shell::bash_scan;
pub use web::html;

// The `skill` tool: a project's SKILL.md files loaded on demand.
pub use skill::{SkillArgs, SkillTool};

// Every built-in tool in one registry.
pub use builtin::builtin;

// The tools' tuning limits, opencode's values by default.
pub use limits::{BashLimits, ReadLimits, SearchLimits, WebFetchLimits};

// Permission requests: what a call would ask ([`ToolRequest`]) and the
// external-directory check every file tool makes first (§7.3).
pub use files::external::{
    EXTERNAL_DIRECTORY, ExternalMetadata, ExternalRequest, ask_external_directory,
    external_request, is_inside,
};
pub use files::request::ToolRequest;
pub use files::requests::file_requests;
// Protected paths (`.git`, `opencode.json`, `.opencode` …): the file tools
// ask `protected_path` before changing them.
pub use files::protected::{
    PROTECTED_NAMES, PROTECTED_PATH, protected_entry, protected_folders, protected_roots,
};
// What is protected besides those names: fixed names at the project's top
// (each with why), and what the repository's git configuration makes git
// execute or load inside the project (hooks, drivers, includes, commands),
// derived from its files (`git_config` parses them).
pub use git::{ProtectedPath, git_protected, protected_paths};
pub use sandbox::{PROTECTED_AT_ANY_DEPTH, ProtectedName, TOP_LEVEL_NAMES};

// The bash tool (§8); its command-line scanner is the `bash_scan`
// namespace.
pub use shell::bash::{BASH, BashArgs, BashError, BashTool, bash_requests};

// The OS sandbox under spawned commands (Landlock, namespaces, the reaper,
// the environment filter) and its policy, the `sandbox` config key.
pub use sandbox::{
    CORE_VARIABLES, CallScope, Ceiling, CommandOutput, DEFAULT_EXCLUDES, DEFAULT_KEEP,
    DEFAULT_MEMORY_SHARE, DEFAULT_PROCESSES, DenialKind, EnvFilter, EnvInherit, Guard,
    InvalidLimit, LimitReached, OnUnsupported, PreparedCommand, ProtectedChange, SECRET_PATHS,
    Sandbox, SandboxDenial, SandboxError, SandboxLimits, SandboxMode, SandboxPolicy, SandboxStatus,
    SandboxedChild, UnknownSandboxMode, approved_directories, parse_memory, parse_processes,
};

// Reading files and folders (§19).
pub use files::read::{ReadArgs, ReadTool, is_binary};

// Writing and editing files: the tools, the replacer cascade (§17), atomic
// writes with per-file locks, and the diff shown to the approver.
pub use files::atomic::{FileLock, WriteError, lock_file, write_atomic};
pub use files::diff::{FileDiff, unified_diff};
pub use files::edit::{EditArgs, EditTool};
pub use files::replace::{EditError, replace};
pub use files::write::{WriteArgs, WriteTool};

// Multi-file patches in the envelope GPT and codex-family models write
// (`*** Begin Patch` ...): the tool, its parser and its hunk application.
pub use files::apply_patch::{ApplyPatchArgs, ApplyPatchTool};
pub use files::patch::{ApplyError, Chunk, PatchError, PatchOp, apply_chunks, parse_patch};

// Why a file tool failed (other than a permission answer).
pub use files::error::FileError;

// Searching and listing: glob, grep, list, and the ripgrep-style glob they
// share.
pub use search::glob::{GlobArgs, GlobTool};
pub use search::grep::{GrepArgs, GrepTool};
pub use search::list::{DEFAULT_IGNORED_DIRS, ListArgs, ListTool};
pub use search::walk::PathGlob;

// Checkpoints on the file system: what each step changed, to revert and
// unrevert it (issue 44, `docs/checkpoints.md`).
#[cfg(unix)]
pub use checkpoint::fs_checkpoints::{DEFAULT_MAX_BYTES, FsCheckpoints, FsCheckpointsBuilder};

// Fetching web pages (converted with [`html`]).
pub use web::webfetch::{
    FetchFormat, WEBFETCH, WebFetchArgs, WebFetchError, WebFetchTool, url_patterns,
};

// The todo list tools and their per-session store.
pub use todo::{
    TODOREAD, TODOWRITE, Todo, TodoPriority, TodoReadArgs, TodoReadTool, TodoStatus, TodoStore,
    TodoWriteArgs, TodoWriteTool,
};

// MCP servers as tools (feature `mcp`, on by default): the `mcp` namespace.
#[cfg(feature = "mcp")]
pub mod mcp;
