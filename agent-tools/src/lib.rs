//! # agent-tools
//!
//! Built-in tools for the agent SDK (read, write, edit, bash, grep, glob,
//! list, webfetch, todo). Each tool builds its permission request before any
//! side effect. This crate is filled by a later milestone; for now it
//! re-exports the crates it builds on.
//!
//! ```
//! use agent_tools::core::permission::wildcard;
//! assert!(wildcard::matches("src/main.rs", "src/*"));
//! ```
//!
//! The bash tool asks for each command of a command line ([`scan`], §8.1):
//! one pattern per command, "always" patterns from the arity table, and
//! `cd` commands only for their directory.
//!
//! ```
//! let scan = agent_tools::scan("cd sub && npm run build -- --watch | tee log").unwrap();
//! assert_eq!(scan.patterns, ["npm run build -- --watch", "tee log"]);
//! assert_eq!(scan.always, ["npm run build *", "tee *"]);
//! assert_eq!(scan.path_args, ["sub"]);
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
//! use agent_tools::core::permission::{AllowAll, Permissions};
//! use agent_tools::core::{Tool, ToolContext};
//! use agent_tools::{EditTool, ReadTool};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("agent-tools-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("main.rs"), "fn main() {\n    let x = 1;\n}\n").unwrap();
//! let permissions = Permissions::new();
//! permissions.set_approver(Arc::new(AllowAll));
//! let ctx = ToolContext::new("ses_1", "msg_1", "call_1", permissions)
//!     .with_directories(dir.clone(), dir.clone());
//!
//! let edit = serde_json::json!({"filePath": "main.rs", "oldString": "x  =  1", "newString": "x = 2"});
//! EditTool.execute(edit, &ctx).await.unwrap();
//! let read = ReadTool.execute(serde_json::json!({"filePath": "main.rs"}), &ctx).await.unwrap();
//! assert!(read.output.contains("2:     let x = 2;"));
//! assert_eq!(read.title, "main.rs");
//! std::fs::remove_dir_all(&dir).unwrap();
//! # });
//! ```

pub use agent_core as core;

pub mod bash_scan;
pub use bash_scan::{BashScan, ScanError, plan_requests, scan};

pub mod bash;
pub use bash::{BashArgs, BashError, BashTool};

pub mod html;

pub mod webfetch;
pub use webfetch::{FetchFormat, WebFetchArgs, WebFetchError, WebFetchTool};

pub mod todo;
pub use todo::{
    Todo, TodoPriority, TodoReadArgs, TodoReadTool, TodoStatus, TodoStore, TodoWriteArgs,
    TodoWriteTool,
};

pub mod external;
pub mod paths;
pub mod replace;
pub mod request;
pub use external::{
    EXTERNAL_DIRECTORY, ExternalMetadata, ExternalRequest, ask_external_directory,
    external_request, is_inside,
};
pub use replace::{EditError, replace};
pub use request::ToolRequest;

pub mod atomic;
pub mod diff;
pub mod edit;
pub mod error;
pub mod read;
pub mod write;
pub use atomic::{FileLock, WriteError, lock_file, write_atomic};
pub use diff::{FileDiff, unified_diff};
pub use edit::{EditArgs, EditTool};
pub use error::FileError;
pub use read::{ReadArgs, ReadTool};
pub use write::{WriteArgs, WriteTool};

pub mod glob;
pub mod grep;
pub mod list;
pub mod walk;
pub use glob::{GlobArgs, GlobTool};
pub use grep::{GrepArgs, GrepTool};
pub use list::{ListArgs, ListTool};
pub use walk::PathGlob;

#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mcp")]
pub use mcp::{McpConfig, McpError, McpManager, McpServerConfig, McpStatus, McpTool};
