//! [`AgentEnvironment`]: the directories the built-in rules mention.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use agentgate_permission::{PermissionConfig, Ruleset, from_config_with_home};

/// The directories the built-in rules mention (§9.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentEnvironment {
    /// The SDK's data directory; tool output spills to `<data>/tool-output`.
    pub data_dir: String,
    /// The SDK's temporary directory (opencode: `<os tmp>/opencode`).
    pub tmp_dir: String,
    /// The project's worktree (git root, or the project directory).
    pub worktree: String,
    /// Skill directories, readable without asking.
    #[serde(default)]
    pub skill_dirs: Vec<String>,
    /// Configured reference directories, readable without asking.
    #[serde(default)]
    pub reference_dirs: Vec<String>,
    /// Home directory for `~` and `$HOME` in configs (default: `$HOME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
}

impl AgentEnvironment {
    /// An environment with no skill or reference directories.
    pub fn new(
        data_dir: impl Into<String>,
        tmp_dir: impl Into<String>,
        worktree: impl Into<String>,
    ) -> Self {
        AgentEnvironment {
            data_dir: data_dir.into(),
            tmp_dir: tmp_dir.into(),
            worktree: worktree.into(),
            skill_dirs: Vec::new(),
            reference_dirs: Vec::new(),
            home: None,
        }
    }

    /// The usual locations for an application called `app`: data in
    /// `$XDG_DATA_HOME/<app>` (else `~/.local/share/<app>`), temporary files
    /// in `<os temp dir>/<app>`.
    pub fn detect(app: &str, worktree: impl Into<String>) -> Self {
        let home = agentgate_permission::home_dir();
        let data_root = std::env::var("XDG_DATA_HOME")
            .ok()
            .filter(|d| !d.is_empty())
            .or_else(|| home.as_ref().map(|h| format!("{h}/.local/share")))
            .unwrap_or_else(|| ".".to_string());
        let tmp = std::env::temp_dir();
        let tmp = tmp.to_string_lossy();
        let mut env = AgentEnvironment::new(
            format!("{}/{app}", data_root.trim_end_matches('/')),
            format!("{}/{app}", tmp.trim_end_matches('/')),
            worktree,
        );
        env.home = home;
        env
    }

    /// Where truncated tool output is spilled: `<data>/tool-output`. Every
    /// agent may read it without an ask (§9.2), and an engine given these
    /// agents spills there.
    pub fn spill_dir(&self) -> PathBuf {
        Path::new(&self.data_dir).join("tool-output")
    }

    /// `Truncate.GLOB`: the pattern of the tool-output spill directory.
    pub fn truncate_glob(&self) -> String {
        format!("{}/tool-output/*", self.data_dir)
    }

    pub(super) fn expand(&self, config: &PermissionConfig) -> Ruleset {
        match &self.home {
            Some(home) => from_config_with_home(config, home),
            None => agentgate_permission::from_config(config),
        }
    }

    /// `external_directory` patterns every agent may use without asking.
    pub(super) fn whitelist(&self) -> Vec<String> {
        let mut dirs = vec![self.truncate_glob(), format!("{}/*", self.tmp_dir)];
        dirs.extend(self.skill_dirs.iter().map(|d| format!("{d}/*")));
        dirs.extend(self.reference_dirs.iter().map(|d| format!("{d}/*")));
        dirs
    }
}
