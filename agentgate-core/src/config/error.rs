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

/// Every problem found while loading a configuration, in load order (at
/// least one). opencode lists all the problems of a file at once, so that a
/// user fixes them in one go instead of one run per mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors {
    errors: Vec<ConfigError>,
}

impl ConfigErrors {
    /// The errors in `errors`, or `None` when there are none.
    pub fn from_vec(errors: Vec<ConfigError>) -> Option<Self> {
        (!errors.is_empty()).then_some(ConfigErrors { errors })
    }

    /// The first error found.
    pub fn first(&self) -> &ConfigError {
        // Never empty: both constructors refuse an empty list.
        &self.errors[0]
    }

    /// Every error, in load order.
    pub fn errors(&self) -> &[ConfigError] {
        &self.errors
    }

    /// How many errors there are (at least one).
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always false: there is at least one error.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors one by one.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.errors.iter()
    }
}

impl From<ConfigError> for ConfigErrors {
    fn from(error: ConfigError) -> Self {
        ConfigErrors {
            errors: vec![error],
        }
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errors.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} configuration errors:", many.len())?;
                for error in many {
                    write!(f, "\n  - {error}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ConfigErrors {}
