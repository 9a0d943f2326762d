//! Tool output truncation (§7.1): outputs longer than 2000 lines or 50 KB
//! are cut, and the full text is kept in a spill file the model is pointed to.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Default line limit.
pub const MAX_LINES: usize = 2000;
/// Default byte limit (50 KB).
pub const MAX_BYTES: usize = 50 * 1024;

/// How much output the model may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncationLimits {
    /// Maximum lines kept.
    pub max_lines: usize,
    /// Maximum bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationLimits {
    fn default() -> Self {
        TruncationLimits {
            max_lines: MAX_LINES,
            max_bytes: MAX_BYTES,
        }
    }
}

/// The head of a too-long output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The lines kept (whole lines from the start).
    pub kept: String,
    /// Lines not kept.
    pub removed_lines: usize,
    /// Bytes not kept.
    pub removed_bytes: usize,
}

/// Cuts `text` to whole lines from its start within `limits`; `None` when
/// it fits as is.
pub fn truncate(text: &str, limits: &TruncationLimits) -> Option<Truncated> {
    let total_lines = text.lines().count();
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return None;
    }
    let mut end = 0;
    let mut kept_lines = 0;
    for line in text.split_inclusive('\n') {
        if kept_lines == limits.max_lines || end + line.len() > limits.max_bytes {
            break;
        }
        end += line.len();
        kept_lines += 1;
    }
    let kept = text[..end].trim_end_matches('\n').to_string();
    Some(Truncated {
        kept,
        removed_lines: total_lines - kept_lines,
        removed_bytes: text.len() - end,
    })
}

/// Applies `truncate` (whole lines from the start, within the limits) to tool outputs and writes the full text of a cut
/// output to a spill directory, so the model can read or grep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncator {
    /// The limits.
    pub limits: TruncationLimits,
    /// Where full outputs are written (default: `<temp>/agent-sdk/tool-output`;
    /// an engine given agents or an environment uses the environment's
    /// [`spill_dir`](crate::AgentEnvironment::spill_dir), which every agent
    /// may read without an ask).
    pub spill_dir: PathBuf,
}

impl Default for Truncator {
    fn default() -> Self {
        Truncator {
            limits: TruncationLimits::default(),
            spill_dir: std::env::temp_dir().join("agent-sdk").join("tool-output"),
        }
    }
}

impl Truncator {
    /// Default limits, spilling to `spill_dir`.
    pub fn in_dir(spill_dir: impl Into<PathBuf>) -> Self {
        Truncator {
            limits: TruncationLimits::default(),
            spill_dir: spill_dir.into(),
        }
    }

    /// `output` as the model should see it: unchanged when it fits, else its
    /// head followed by a note saying how much was cut and where the full
    /// output was saved (`tool` names the spill file).
    pub async fn apply(&self, tool: &str, output: String) -> String {
        let Some(cut) = truncate(&output, &self.limits) else {
            return output;
        };
        let safe: String = tool
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = self
            .spill_dir
            .join(format!("{safe}_{}.txt", crate::ids::ascending("out")));
        let saved = match tokio::fs::create_dir_all(&self.spill_dir).await {
            Ok(()) => tokio::fs::write(&path, output.as_bytes()).await,
            Err(error) => Err(error),
        };
        cut.notice(saved.as_ref().map(|()| path.as_path()))
    }
}

impl Truncated {
    /// The text the model sees: the kept head, how much was cut, and where
    /// the full output was saved (`saved`), or why it could not be.
    pub fn notice(&self, saved: Result<&Path, &std::io::Error>) -> String {
        let hint = match saved {
            Ok(path) => format!(
                "The tool call succeeded but the output was truncated. Full output saved to: {}\nUse grep to search the full content or read with offset/limit to view specific sections.",
                path.display()
            ),
            Err(error) => format!(
                "The tool call succeeded but the output was truncated; the full output could not be saved ({error})."
            ),
        };
        let counts = format!(
            "\n\n...{} lines ({} bytes) truncated...\n\n",
            self.removed_lines, self.removed_bytes
        );
        // Sized exactly: the notice is kept as the call's output.
        let mut notice = String::with_capacity(self.kept.len() + counts.len() + hint.len());
        notice.push_str(&self.kept);
        notice.push_str(&counts);
        notice.push_str(&hint);
        notice
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits() {
        assert!(truncate("a\nb", &TruncationLimits::default()).is_none());
    }

    #[test]
    fn lines_and_bytes() {
        let text = "1\n2\n3\n4\n";
        let limits = TruncationLimits {
            max_lines: 2,
            max_bytes: 100,
        };
        let cut = truncate(text, &limits).unwrap();
        assert_eq!(cut.kept, "1\n2");
        assert_eq!(cut.removed_lines, 2);
        let limits = TruncationLimits {
            max_lines: 100,
            max_bytes: 5,
        };
        let cut = truncate(text, &limits).unwrap();
        assert_eq!(cut.kept, "1\n2");
        assert_eq!(cut.removed_bytes, 4);
    }

    #[tokio::test]
    async fn spills_full_output() {
        let dir = std::env::temp_dir().join(crate::ids::ascending("trunc-test"));
        let truncator = Truncator {
            limits: TruncationLimits {
                max_lines: 1,
                max_bytes: 1000,
            },
            spill_dir: dir.clone(),
        };
        let out = truncator.apply("bash", "a\nb\nc".into()).await;
        assert!(out.starts_with("a\n\n...2 lines"));
        let path = out
            .split("saved to: ")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "a\nb\nc");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
