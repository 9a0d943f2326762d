//! [`ConfigError`] and [`ConfigWarning`]: every problem names the file and
//! the key path.

use std::fmt;

/// A configuration that cannot be used, with the file and key path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {}{message}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
pub struct ConfigError {
    /// The file (or `OPENCODE_CONFIG_CONTENT`, `OPENCODE_PERMISSION`).
    pub file: String,
    /// The key path (`agent.build.temperature`), or a line.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl ConfigError {
    /// An error about `path` in `file`.
    pub fn new(file: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_string(),
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Something in a configuration that was ignored (an unknown key, a
/// markdown agent that could not be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The file.
    pub file: String,
    /// The key path, if the warning is about a key.
    pub path: String,
    /// What was ignored, with a hint.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.path, self.message)
        }
    }
}
