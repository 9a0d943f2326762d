//! System prompt assembly (§15): the agent's own prompt, else the prompt of
//! the model's provider family; then the environment block and the
//! instruction files. At most two system parts are sent, the stable head
//! first, so providers can cache it.

mod environment;
mod instructions;
mod provider;

use std::path::{Path, PathBuf};

pub use environment::{environment_block, is_git_repository, today};
pub use instructions::{PROJECT_FILES, instruction_files, read_instructions};
pub use provider::{PromptFamily, family_prompt};

use agentgate_permission::Ruleset;

use crate::model::ModelInfo;
use crate::skills::{Skills, skills_section};

/// How an engine assembles the system prompt of each turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemPrompts {
    /// Assemble prompts at all (off: only the agent's own sections are sent).
    pub enabled: bool,
    /// The global config directory holding a global `AGENTS.md`
    /// (default: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`).
    pub global_dir: Option<PathBuf>,
    /// The home directory for `~/.claude/CLAUDE.md` and `~/` in entries.
    pub home: Option<PathBuf>,
    /// The config's `instructions` entries (paths or globs).
    pub instructions: Vec<String>,
    /// Host sections appended to the second system part, after the
    /// instruction files (MCP servers' `<mcp_instructions>` block, §15).
    pub sections: Vec<String>,
    /// The skills listed (to the agents whose rules leave the `skill`
    /// tool on) after the host sections.
    pub skills: Skills,
}

impl Default for SystemPrompts {
    /// Enabled, with the global directory and home of the current user.
    fn default() -> Self {
        let home = agentgate_permission::home_dir().map(PathBuf::from);
        let config_root = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        SystemPrompts {
            enabled: true,
            global_dir: config_root.map(|root| root.join("opencode")),
            home,
            instructions: Vec::new(),
            sections: Vec::new(),
            skills: Skills::new(),
        }
    }
}

impl SystemPrompts {
    /// No assembly: the request carries the agent's sections only.
    pub fn disabled() -> Self {
        SystemPrompts {
            enabled: false,
            global_dir: None,
            home: None,
            instructions: Vec::new(),
            sections: Vec::new(),
            skills: Skills::new(),
        }
    }

    /// Sets the global config directory.
    pub fn with_global_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.global_dir = Some(dir.into());
        self
    }

    /// Sets the home directory.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Sets the configured `instructions` entries.
    pub fn with_instructions(mut self, entries: Vec<String>) -> Self {
        self.instructions = entries;
        self
    }

    /// Appends a host section (for example MCP servers' instructions) to
    /// the second system part, after the instruction files.
    pub fn with_section(mut self, section: impl Into<String>) -> Self {
        self.sections.push(section.into());
        self
    }

    /// Sets the skills listed in the prompt.
    pub fn with_skills(mut self, skills: Skills) -> Self {
        self.skills = skills;
        self
    }

    /// The system parts for a turn of an agent whose own sections are
    /// `agent_system`, on `model`, in `directory` under `worktree`: the head
    /// (the agent's sections joined, else the family prompt), then one part
    /// with the environment block, the instruction files, the host sections
    /// and the skills an agent with rules `skills_for` may load (none when
    /// `None`, as for an agent without the `skill` tool, or when the rules
    /// disable it).
    pub fn assemble(
        &self,
        agent_system: &[String],
        skills_for: Option<&Ruleset>,
        model: &ModelInfo,
        directory: &Path,
        worktree: &Path,
    ) -> Vec<String> {
        if !self.enabled {
            return agent_system.to_vec();
        }
        let head = if agent_system.is_empty() {
            family_prompt(PromptFamily::of(&model.id))
        } else {
            agent_system.join("\n")
        };
        let mut rest = vec![environment_block(model, directory, worktree, &today())];
        let files = instruction_files(
            directory,
            worktree,
            self.global_dir.as_deref(),
            self.home.as_deref(),
            &self.instructions,
        );
        rest.extend(read_instructions(&files));
        rest.extend(self.sections.iter().cloned());
        if let Some(permission) = skills_for {
            rest.extend(skills_section(&self.skills, permission));
        }
        vec![head, rest.join("\n\n")]
    }
}
