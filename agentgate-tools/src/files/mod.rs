//! The file tools (read, write, edit, apply_patch) and what they share: path handling,
//! the permission requests every file tool makes (`requests`), the
//! external-directory and protected-path checks, atomic writes, the
//! replacer cascade of edit and the diff an approver is shown.

// Lexical paths, public as `agentgate_tools::paths`.
pub mod paths;

// The tools.
pub(crate) mod apply_patch;
pub(crate) mod edit;
pub(crate) mod read;
pub(crate) mod write;

// What a file tool asks, in order, and how it asks it.
pub(crate) mod external;
pub(crate) mod protected;
pub(crate) mod request;
pub(crate) mod requests;

// Changing files: atomic writes, the edit cascade, the diff, the errors.
pub(crate) mod asked_path;
pub(crate) mod atomic;
pub(crate) mod diff;
pub(crate) mod error;
pub(crate) mod patch;
pub(crate) mod replace;
