//! Checkpoints on the file system ([`FsCheckpoints`]): what each step of a
//! session changed in the project, so it can be taken back and put back.
//! The mechanism and what it captures are in `docs/checkpoints.md`.

// The implementation of agentgate-core's `Checkpoints`, and its options.
pub(crate) mod fs_checkpoints;

// Where contents are kept: the content-addressed object store.
pub(crate) mod objects;

// What is known of a project root, and comparing a scope with it.
pub(crate) mod known;
pub(crate) mod scan;
pub(crate) mod walk;

// Project scopes that look only at what changed: the inotify watcher.
pub(crate) mod changed;
pub(crate) mod descent;
#[cfg(test)]
mod descent_tests;
pub(crate) mod rules;
pub(crate) mod watch;

// Reading one path: its key and state.
pub(crate) mod observe;

// Moving paths back and forth (revert, unrevert).
pub(crate) mod apply;

// Paths: checking recorded ones, reaching them without following links.
pub(crate) mod dir_fd;
pub(crate) mod rel_path;
