//! [`McpError`]: why a server could not be used.

use std::time::Duration;

/// Why an MCP server failed to start or to answer. Every message names the
/// server, and carries the tail of its stderr when it is a local process,
/// so a user can see what went wrong without a debugger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The config entry is malformed.
    #[error("MCP server {server:?}: {message}")]
    Config {
        /// The server name.
        server: String,
        /// What is wrong with the entry.
        message: String,
    },
    /// The process could not be spawned or the connection not made.
    #[error("MCP server {server:?} failed to start: {message}{}", tail(.stderr))]
    Start {
        /// The server name.
        server: String,
        /// The underlying error.
        message: String,
        /// The last lines the process wrote to stderr.
        stderr: String,
    },
    /// The server did not answer within its time limit.
    #[error("MCP server {server:?} timed out after {} ms while {during}{}", .after.as_millis(), tail(.stderr))]
    Timeout {
        /// The server name.
        server: String,
        /// What the client was waiting for (`starting`, `calling echo` ...).
        during: String,
        /// The limit that passed.
        after: Duration,
        /// The last lines the process wrote to stderr.
        stderr: String,
    },
    /// The connection ended (the process exited, the stream closed).
    #[error("MCP server {server:?} is not running: {message}{}", tail(.stderr))]
    Closed {
        /// The server name.
        server: String,
        /// How it ended.
        message: String,
        /// The last lines the process wrote to stderr.
        stderr: String,
    },
    /// The server answered with a protocol error or something that is not
    /// MCP.
    #[error("MCP server {server:?} failed while {during}: {message}")]
    Protocol {
        /// The server name.
        server: String,
        /// What the client asked.
        during: String,
        /// The server's error or what was wrong with its answer.
        message: String,
    },
    /// The server had exited, and starting it again failed too.
    #[error("MCP server {server:?} exited ({exited}) and could not be restarted: {error}")]
    RestartFailed {
        /// The server name.
        server: String,
        /// How the earlier run ended.
        exited: String,
        /// Why the restart failed.
        error: Box<McpError>,
    },
    /// No server of that name is configured, enabled and connected.
    #[error("MCP server {server:?} is not connected: {status}")]
    NotConnected {
        /// The server name.
        server: String,
        /// Its status (`disabled`, `failed: ...`).
        status: String,
    },
}

impl McpError {
    /// The server the error is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::Config { server, .. }
            | McpError::Start { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Closed { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::RestartFailed { server, .. }
            | McpError::NotConnected { server, .. } => server,
        }
    }
}

fn tail(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\nstderr (last lines):\n{}", stderr.trim_end())
    }
}
