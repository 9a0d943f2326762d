//! Agents: the built-in table and the merge order of opencode §9.
//!
//! An [`Agent`] is a named configuration (mode, prompt, model, sampling,
//! step limit) with its own permission ruleset. The built-in agents are
//! `build` and `plan` (primary), `general` and `explore` (sub-agents), and the
//! hidden system agents `compaction`, `title` and `summary`. Each built-in
//! ruleset is a concatenation, in this order: the shared defaults, the
//! agent's own rules, the user's `permission` config; per-agent config is
//! appended after that, and finally every agent may read the tool-output
//! spill directory (unless a rule denies exactly that).
//!
//! Files: `agent.rs` (the definition), `environment.rs` (the directories
//! rules mention), `builtin.rs` (the built-in table and rules), `config.rs`
//! (per-agent configuration and the one deep merge of config layers),
//! `markdown.rs` (agents from markdown files), `catalog.rs` ([`Agents`]).
//!
//! ```
//! use agentgate_core::{AgentEnvironment, Agents};
//! use agentgate_core::permission::{Action, PermissionConfig};
//!
//! let env = AgentEnvironment::new("/home/u/.local/share/app", "/tmp/app", "/home/u/proj");
//! let user: PermissionConfig = serde_json::from_str(r#"{"bash": {"git push *": "deny"}}"#).unwrap();
//! let agents = Agents::builtin(&env, &user);
//! let plan = agents.get("plan").unwrap();
//! assert_eq!(plan.decide("edit", "src/main.rs"), Action::Deny);
//! assert_eq!(plan.decide("bash", "git push origin"), Action::Deny);
//! assert_eq!(agents.get("build").unwrap().decide("edit", "src/main.rs"), Action::Allow);
//! assert_eq!(agents.default_agent().unwrap().name, "build");
//! ```

mod agent;
mod builtin;
mod catalog;
pub(crate) mod config;
mod environment;
mod markdown;

pub use agent::{Agent, AgentMode};
pub use builtin::{builtin_prompt, default_permission, relative_path};
pub use catalog::{AgentError, Agents};
pub use config::{AgentConfig, merge_agent_config, merge_value};
pub use environment::AgentEnvironment;
pub use markdown::{
    AGENT_DIRS, FrontMatterError, MODE_DIRS, MarkdownAgent, MarkdownAgentError, MarkdownDocument,
    MarkdownKind, agent_name_from_path, load_markdown_agents, load_markdown_agents_from,
    parse_markdown, parse_markdown_agent, sanitize_front_matter, scan_markdown_agents,
};
