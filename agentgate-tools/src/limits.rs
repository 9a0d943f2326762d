//! The tuning limits of the built-in tools, one struct per tool family.
//! Each default is opencode's value (or, where opencode has none, the
//! bound this SDK chose, documented on the field), so a registry built with
//! the defaults behaves as opencode's tools do.
//!
//! The structs are `#[non_exhaustive]`: start from `default()` and set the
//! fields to change. The tool descriptions the model reads name the
//! default values.
//!
//! ```
//! use agentgate_tools::{ReadLimits, ReadTool};
//! let mut limits = ReadLimits::default();
//! limits.max_output_bytes = 200 * 1024;
//! let read = ReadTool::default().with_limits(limits);
//! assert_eq!(read.limits().max_output_bytes, 200 * 1024);
//! assert_eq!(read.limits().default_lines, 2000);
//! ```

use std::time::Duration;

/// Limits of the bash tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashLimits {
    /// Timeout when the call gives none (§8.4: 2 minutes).
    pub default_timeout: Duration,
    /// Longest timeout a call may ask for (10 minutes); larger ones are
    /// lowered to it.
    pub max_timeout: Duration,
    /// How long a process group gets between SIGTERM and SIGKILL (§8.4: 3 s).
    pub kill_grace: Duration,
    /// At most this much output is kept in memory (8 MiB); the rest is
    /// dropped with a note (the model sees a truncated head anyway).
    pub max_capture_bytes: usize,
    /// At most this much of the output's tail goes into each live metadata
    /// update (30,000 bytes).
    pub metadata_output_bytes: usize,
}

impl Default for BashLimits {
    fn default() -> Self {
        BashLimits {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(3),
            max_capture_bytes: 8 * 1024 * 1024,
            metadata_output_bytes: 30_000,
        }
    }
}

/// Limits of the read tool (§19).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadLimits {
    /// Lines (or folder entries) returned when the call gives no `limit`
    /// (2000).
    pub default_lines: usize,
    /// Longer lines are cut to this many characters (2000).
    pub max_line_chars: usize,
    /// At most this many bytes of content are returned per call (50 KB).
    pub max_output_bytes: usize,
    /// Largest file read (64 MiB). Only regular files are read, so a link
    /// to `/dev/zero` or a FIFO cannot exhaust memory or hang.
    pub max_file_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            default_lines: 2000,
            max_line_chars: 2000,
            max_output_bytes: 50 * 1024,
            max_file_bytes: MAX_FILE_BYTES,
        }
    }
}

/// Largest file edit and write read back (for the diff and the
/// replacement): the read tool's default.
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Limits of the search tools: glob, grep and list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchLimits {
    /// Results shown: paths for glob and list, matches for grep (100).
    pub max_results: usize,
    /// At most this many bytes of grep's match lines are shown (50 KB).
    pub max_output_bytes: usize,
    /// Longer grep match lines are cut to this many characters (2000).
    pub max_line_chars: usize,
    /// Memory grep may keep between searches, for the whole process
    /// (32 MiB): a filter of the trigrams of each small text file it has
    /// read (about one bit per byte), so that a later search reads only
    /// the files that may match and `lstat`s the others. 0: grep keeps
    /// nothing and reads every file.
    pub grep_index_bytes: usize,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            max_results: 100,
            max_output_bytes: 50 * 1024,
            max_line_chars: 2000,
            grep_index_bytes: 32 * 1024 * 1024,
        }
    }
}

/// Limits of the webfetch tool (§7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebFetchLimits {
    /// Timeout when the call gives none (30 s).
    pub default_timeout: Duration,
    /// Longest timeout a call may ask for (120 s).
    pub max_timeout: Duration,
    /// Largest response body (5 MiB).
    pub max_response_bytes: usize,
    /// Redirects followed, each asked before it is followed (10).
    pub max_redirects: usize,
}

impl Default for WebFetchLimits {
    fn default() -> Self {
        WebFetchLimits {
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(120),
            max_response_bytes: 5 * 1024 * 1024,
            max_redirects: 10,
        }
    }
}
