//! What the repository's own git configuration makes git execute or load,
//! derived from its files without running git: the paths inside the
//! project that the sandbox keeps read-only and the file tools ask
//! `protected_path` for, beside the fixed names
//! ([`PROTECTED_NAMES`](crate::PROTECTED_NAMES)).
//!
//! The configuration format is parsed here (`config`, public as
//! `agentgate_tools::git_config`), the files found as git finds them
//! (`repository`), and what each key names is data (`executed`). The
//! result is cached per project by the files' modification times: the
//! check is a `stat` of each file read.

pub mod config;
mod executed;
mod protected;
mod repository;

pub use protected::{ProtectedPath, git_protected, protected_paths};
