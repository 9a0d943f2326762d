//! Custom commands (opencode's `/name` prompts): the catalog of a
//! configuration ([`Commands`], from the `command` map and
//! `.opencode/command(s)/**/*.md`) and the template expansion as plain
//! functions. Running one is the host's: expand the arguments, run each
//! `` !`cmd` `` through the `bash` tool and read each `@file` through the
//! `read` tool, both with [`Engine::run_tool`](crate::Engine::run_tool) so
//! the permission gate decides, then prompt the session.
//!
//! Files: `catalog.rs` ([`Command`], [`Commands`]), `template.rs` (the
//! expansion steps).
//!
//! ```
//! use agentgate_core::commands::{expand_arguments, file_references, shell_expansions};
//!
//! let template = "Review $1 against !`git diff $2` and @CONTRIBUTING.md";
//! let text = expand_arguments(template, "src/lib.rs main");
//! assert_eq!(text, "Review src/lib.rs against !`git diff main` and @CONTRIBUTING.md");
//! assert_eq!(shell_expansions(&text)[0].command, "git diff main");
//! assert_eq!(file_references(&text), ["CONTRIBUTING.md"]);
//! ```

mod catalog;
mod template;

pub use catalog::{COMMAND_DIRS, Command, CommandSource, Commands};
pub use template::{
    ShellExpansion, expand_arguments, file_references, replace_expansions, shell_expansions,
    split_arguments, template_hints,
};
