//! Searching and listing the project: glob, grep and list over one
//! ripgrep-style walk, with the `read` rules applied to each file shown.

pub(crate) mod file_filters;
pub(crate) mod glob;
pub(crate) mod grep;
pub(crate) mod list;
pub(crate) mod open_folder;
pub(crate) mod read_rules;
pub(crate) mod trigrams;
pub(crate) mod walk;
