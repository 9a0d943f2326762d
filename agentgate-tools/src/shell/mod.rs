//! The bash tool and the analysis of the command lines it runs: the
//! scanner (`bash_scan`, public), bash's words, expansions and sources as
//! the scanner models them, and what it knows about programs.

// The scanner's public face: what a command line asks.
pub mod bash_scan;

// The tool.
pub(crate) mod bash;

// What the scanner models of bash, one layer each: programs as data, the
// walk of a command, variable evaluation, bash's own variables and options
// as data, `source`d and `-c` scripts, backtick substitutions, words.
pub(crate) mod programs;
pub(crate) mod shell_backticks;
pub(crate) mod shell_command;
pub(crate) mod shell_eval;
pub(crate) mod shell_settings;
pub(crate) mod shell_source;
pub(crate) mod shell_word;
