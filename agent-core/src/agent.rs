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
//! ```
//! use agent_core::agent::{AgentEnvironment, Agents};
//! use agent_core::permission::{Action, PermissionConfig};
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

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use agent_permission::{
    Action, ConfigError, PermissionConfig, PermissionValue, Rule, Ruleset, decide,
    from_config_with_home,
};

/// Where an agent can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentMode {
    /// Selectable by the user as the session's agent.
    Primary,
    /// Only callable through the task tool.
    Subagent,
    /// Both.
    All,
}

/// A `provider/model` reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelRef {
    /// Provider id, e.g. `anthropic`.
    pub provider_id: String,
    /// Model id within the provider, e.g. `claude-sonnet-4-5`.
    pub model_id: String,
}

impl ModelRef {
    /// Parses `provider/model` (the model id may itself contain `/`).
    /// `None` when there is no `/` or either side is empty.
    pub fn parse(text: &str) -> Option<Self> {
        let (provider, model) = text.split_once('/')?;
        if provider.is_empty() || model.is_empty() {
            return None;
        }
        Some(ModelRef {
            provider_id: provider.to_string(),
            model_id: model.to_string(),
        })
    }
}

impl std::fmt::Display for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider_id, self.model_id)
    }
}

/// An agent: a named configuration with its own permission rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    /// Unique name (`build`, `plan`, `team/reviewer` ...).
    pub name: String,
    /// What the agent is for; shown to the model in the task tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the agent can be used.
    pub mode: AgentMode,
    /// Whether the agent is built in.
    pub native: bool,
    /// Hidden agents are not offered to users.
    #[serde(default)]
    pub hidden: bool,
    /// The agent's permission rules (last match wins).
    pub permission: Ruleset,
    /// The model to use; `None` inherits the caller's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Model variant (reasoning effort and similar), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The agent's own system prompt; `None` uses the provider prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// UI color.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Step limit for one prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// Provider options passed through unchanged.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

impl Agent {
    fn native(name: &str, mode: AgentMode, description: Option<&str>, permission: Ruleset) -> Self {
        Agent {
            name: name.to_string(),
            description: description.map(str::to_string),
            mode,
            native: true,
            hidden: false,
            permission,
            model: None,
            variant: None,
            prompt: None,
            temperature: None,
            top_p: None,
            color: None,
            steps: None,
            options: Map::new(),
        }
    }

    /// What this agent's own rules decide for `permission` and `pattern`
    /// (session rules and approvals not included).
    pub fn decide(&self, permission: &str, pattern: &str) -> Action {
        decide(permission, pattern, &[&self.permission])
    }
}

impl From<&Agent> for crate::step_loop::AgentSpec {
    /// The part of an agent the loop needs: name, rules, step limit, prompt
    /// and sampling.
    fn from(agent: &Agent) -> Self {
        crate::step_loop::AgentSpec {
            name: agent.name.clone(),
            permission: agent.permission.clone(),
            steps: agent.steps,
            system: agent.prompt.iter().cloned().collect(),
            temperature: agent.temperature.map(|t| t as f32),
            top_p: agent.top_p.map(|t| t as f32),
        }
    }
}

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
        let home = agent_permission::home_dir();
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

    /// `Truncate.GLOB`: the pattern of the tool-output spill directory.
    pub fn truncate_glob(&self) -> String {
        format!("{}/tool-output/*", self.data_dir)
    }

    fn expand(&self, config: &PermissionConfig) -> Ruleset {
        match &self.home {
            Some(home) => from_config_with_home(config, home),
            None => agent_permission::from_config(config),
        }
    }

    /// `external_directory` patterns every agent may use without asking.
    fn whitelist(&self) -> Vec<String> {
        let mut dirs = vec![self.truncate_glob(), format!("{}/*", self.tmp_dir)];
        dirs.extend(self.skill_dirs.iter().map(|d| format!("{d}/*")));
        dirs.extend(self.reference_dirs.iter().map(|d| format!("{d}/*")));
        dirs
    }
}

fn rule(permission: &str, pattern: &str, action: Action) -> Rule {
    Rule::new(permission, pattern, action)
}

/// The shared defaults every built-in agent starts from (§9.1), in order.
pub fn default_permission(env: &AgentEnvironment) -> Ruleset {
    let mut rules = vec![
        rule("*", "*", Action::Allow),
        rule("doom_loop", "*", Action::Ask),
        rule("external_directory", "*", Action::Ask),
    ];
    rules.extend(
        env.whitelist()
            .iter()
            .map(|d| rule("external_directory", d, Action::Allow)),
    );
    rules.extend([
        rule("question", "*", Action::Deny),
        rule("plan_enter", "*", Action::Deny),
        rule("plan_exit", "*", Action::Deny),
        rule("read", "*", Action::Allow),
        rule("read", "*.env", Action::Ask),
        rule("read", "*.env.*", Action::Ask),
        rule("read", "*.env.example", Action::Allow),
    ]);
    Ruleset::from(rules)
}

/// `path.relative(from, to)` for absolute POSIX-style paths.
pub fn relative_path(from: &str, to: &str) -> String {
    let parts = |p: &str| -> Vec<String> {
        p.replace('\\', "/")
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_string)
            .collect()
    };
    let (from, to) = (parts(from), parts(to));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(to[common..].iter().map(String::as_str));
    out.join("/")
}

fn own_rules(name: &str, env: &AgentEnvironment) -> Ruleset {
    let rules = match name {
        "build" => vec![
            rule("question", "*", Action::Allow),
            rule("plan_enter", "*", Action::Allow),
        ],
        "plan" => {
            let plans = format!("{}/plans", env.data_dir);
            vec![
                rule("question", "*", Action::Allow),
                rule("plan_exit", "*", Action::Allow),
                rule("task", "general", Action::Deny),
                rule("external_directory", &format!("{plans}/*"), Action::Allow),
                rule("edit", "*", Action::Deny),
                rule("edit", ".opencode/plans/*.md", Action::Allow),
                rule(
                    "edit",
                    &relative_path(&env.worktree, &format!("{plans}/*.md")),
                    Action::Allow,
                ),
            ]
        }
        "general" => vec![rule("todowrite", "*", Action::Deny)],
        "explore" => {
            let mut rules = vec![rule("*", "*", Action::Deny)];
            rules.extend(
                [
                    "grep",
                    "glob",
                    "list",
                    "bash",
                    "webfetch",
                    "websearch",
                    "read",
                ]
                .map(|p| rule(p, "*", Action::Allow)),
            );
            rules.push(rule("external_directory", "*", Action::Ask));
            rules.extend(
                env.whitelist()
                    .iter()
                    .map(|d| rule("external_directory", d, Action::Allow)),
            );
            rules
        }
        _ => vec![rule("*", "*", Action::Deny)],
    };
    Ruleset::from(rules)
}

const BUILTIN: &[(&str, AgentMode, bool, &str)] = &[
    (
        "build",
        AgentMode::Primary,
        false,
        "The default agent. Executes tools based on configured permissions.",
    ),
    (
        "plan",
        AgentMode::Primary,
        false,
        "Plan mode. Disallows all edit tools.",
    ),
    (
        "general",
        AgentMode::Subagent,
        false,
        "General-purpose agent for researching complex questions and executing multi-step tasks. Use this agent to execute multiple units of work in parallel.",
    ),
    (
        "explore",
        AgentMode::Subagent,
        false,
        "Fast agent specialized for exploring codebases. Use this when you need to quickly find files by patterns, search code for keywords, or answer questions about the codebase.",
    ),
    ("compaction", AgentMode::Primary, true, ""),
    ("title", AgentMode::Primary, true, ""),
    ("summary", AgentMode::Primary, true, ""),
];

/// Appends the tool-output allow rule unless an `external_directory` deny
/// rule names exactly that pattern (§9.2, last paragraph).
fn finish_permission(permission: &mut Ruleset, env: &AgentEnvironment) {
    let glob = env.truncate_glob();
    let denied = permission.iter().any(|r| {
        r.permission == "external_directory" && r.pattern == glob && r.action == Action::Deny
    });
    if !denied {
        permission.push(rule("external_directory", &glob, Action::Allow));
    }
}

/// Per-agent configuration (`agent.<name>` in opencode.json, or a markdown
/// agent's front-matter), after normalisation of legacy fields (§3.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentConfig {
    /// `model` as `provider/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// System prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Top-p.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// UI color.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Hidden flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Display name override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Step limit (`maxSteps` is accepted as an alias; `steps` wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// `disable: true` removes the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// Permission rules appended to the agent's ruleset (legacy `tools`
    /// entries folded in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionConfig>,
    /// Options, including every unknown key.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

fn err(path: &str, expected: &str, found: &Value) -> ConfigError {
    ConfigError {
        path: path.to_string(),
        expected: expected.to_string(),
        found: agent_permission::describe_value(found),
    }
}

impl AgentConfig {
    /// Parses and normalises one agent's config object: legacy `tools`
    /// (`true` → allow, `false` → deny; `write`/`edit`/`patch` → `edit`)
    /// become permissions under the explicit `permission` object (explicit
    /// values win, a key first seen in `tools` keeps its position);
    /// `maxSteps` is an alias for `steps`; unknown keys move to `options`.
    /// `path` names the object in error messages (e.g. `agent.review`).
    pub fn from_value(value: &Value, path: &str) -> Result<Self, ConfigError> {
        let Value::Object(map) = value else {
            return Err(err(path, "an object", value));
        };
        let mut config = AgentConfig::default();
        let string = |key: &str, v: &Value| -> Result<String, ConfigError> {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| err(&format!("{path}.{key}"), "a string", v))
        };
        let number = |key: &str, v: &Value| -> Result<f64, ConfigError> {
            v.as_f64()
                .ok_or_else(|| err(&format!("{path}.{key}"), "a number", v))
        };
        let count = |key: &str, v: &Value| -> Result<u32, ConfigError> {
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| err(&format!("{path}.{key}"), "a positive whole number", v))
        };
        let flag = |key: &str, v: &Value| -> Result<bool, ConfigError> {
            v.as_bool()
                .ok_or_else(|| err(&format!("{path}.{key}"), "true or false", v))
        };
        let mut max_steps = None;
        let mut tools: IndexMap<String, PermissionValue> = IndexMap::new();
        let mut explicit = None;
        for (key, v) in map {
            match key.as_str() {
                "model" => config.model = Some(string(key, v)?),
                "variant" => config.variant = Some(string(key, v)?),
                "prompt" => config.prompt = Some(string(key, v)?),
                "description" => config.description = Some(string(key, v)?),
                "color" => config.color = Some(string(key, v)?),
                "name" => config.name = Some(string(key, v)?),
                "temperature" => config.temperature = Some(number(key, v)?),
                "top_p" => config.top_p = Some(number(key, v)?),
                "steps" => config.steps = Some(count(key, v)?),
                "maxSteps" => max_steps = Some(count(key, v)?),
                "hidden" => config.hidden = Some(flag(key, v)?),
                "disable" => config.disable = Some(flag(key, v)?),
                "mode" => {
                    config.mode = Some(serde_json::from_value(v.clone()).map_err(|_| {
                        err(
                            &format!("{path}.mode"),
                            "\"primary\", \"subagent\" or \"all\"",
                            v,
                        )
                    })?)
                }
                "options" => match v {
                    Value::Object(o) => config.options.extend(o.clone()),
                    other => return Err(err(&format!("{path}.options"), "an object", other)),
                },
                "tools" => {
                    let Value::Object(t) = v else {
                        return Err(err(
                            &format!("{path}.tools"),
                            "an object of tool → true/false",
                            v,
                        ));
                    };
                    for (tool, enabled) in t {
                        let enabled = flag(&format!("tools.{tool}"), enabled)?;
                        let permission = match tool.as_str() {
                            "write" | "edit" | "patch" => "edit",
                            other => other,
                        };
                        let action = if enabled { Action::Allow } else { Action::Deny };
                        tools.insert(permission.to_string(), PermissionValue::Action(action));
                    }
                }
                "permission" => {
                    explicit = Some(PermissionConfig::from_value(
                        v,
                        &format!("{path}.permission"),
                    )?)
                }
                _ => {
                    config.options.insert(key.clone(), v.clone());
                }
            }
        }
        if config.steps.is_none() {
            config.steps = max_steps;
        }
        config.permission = match (tools.is_empty(), explicit) {
            (true, explicit) => explicit,
            (false, None) => Some(PermissionConfig::Map(tools)),
            (false, Some(PermissionConfig::Map(explicit))) => {
                for (k, v) in explicit {
                    tools.insert(k, v);
                }
                Some(PermissionConfig::Map(tools))
            }
            (false, Some(PermissionConfig::Action(action))) => {
                tools.insert("*".to_string(), PermissionValue::Action(action));
                Some(PermissionConfig::Map(tools))
            }
        };
        Ok(config)
    }
}

/// Errors choosing the default agent (§9.3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The configured default agent does not exist.
    #[error("default agent {0:?} not found")]
    NotFound(String),
    /// The configured default agent is a sub-agent.
    #[error("default agent {0:?} is a subagent")]
    Subagent(String),
    /// The configured default agent is hidden.
    #[error("default agent {0:?} is hidden")]
    Hidden(String),
    /// No agent can be the default.
    #[error("no primary visible agent found")]
    NoPrimary,
}

/// The agents of a project, in insertion order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agents {
    agents: Vec<Agent>,
    default_agent: Option<String>,
}

impl Agents {
    /// The built-in agents (§9.2), each ruleset = defaults + own rules + `user`.
    pub fn builtin(env: &AgentEnvironment, user: &PermissionConfig) -> Self {
        Agents::from_config(env, user, &IndexMap::new(), None)
    }

    /// Built-in agents, then the agents of `config` (`agent.<name>` entries,
    /// already normalised) applied as §9.2 describes; `default_agent` as in
    /// opencode's `default_agent` setting.
    pub fn from_config(
        env: &AgentEnvironment,
        user: &PermissionConfig,
        config: &IndexMap<String, AgentConfig>,
        default_agent: Option<String>,
    ) -> Self {
        let defaults = default_permission(env);
        let user = env.expand(user);
        let mut agents: Vec<Agent> = BUILTIN
            .iter()
            .map(|(name, mode, hidden, description)| {
                let description = (!description.is_empty()).then_some(*description);
                let permission: Ruleset = defaults
                    .iter()
                    .chain(own_rules(name, env).iter())
                    .chain(user.iter())
                    .cloned()
                    .collect();
                let mut agent = Agent::native(name, *mode, description, permission);
                agent.hidden = *hidden;
                if *name == "title" {
                    agent.temperature = Some(0.5);
                }
                agent
            })
            .collect();
        for (name, cfg) in config {
            if cfg.disable == Some(true) {
                agents.retain(|a| &a.name != name);
                continue;
            }
            let position = match agents.iter().position(|a| &a.name == name) {
                Some(p) => p,
                None => {
                    let permission: Ruleset = defaults.iter().chain(user.iter()).cloned().collect();
                    let mut agent = Agent::native(name, AgentMode::All, None, permission);
                    agent.native = false;
                    agents.push(agent);
                    agents.len() - 1
                }
            };
            let agent = &mut agents[position];
            if let Some(model) = cfg.model.as_deref().and_then(ModelRef::parse) {
                agent.model = Some(model);
            }
            macro_rules! set {
                ($($field:ident),*) => {$(
                    if let Some(v) = &cfg.$field { agent.$field = Some(v.clone()); }
                )*};
            }
            set!(
                variant,
                prompt,
                description,
                temperature,
                top_p,
                color,
                steps
            );
            if let Some(mode) = cfg.mode {
                agent.mode = mode;
            }
            if let Some(hidden) = cfg.hidden {
                agent.hidden = hidden;
            }
            if let Some(display) = &cfg.name {
                agent.name.clone_from(display);
            }
            for (k, v) in &cfg.options {
                deep_merge(agent.options.entry(k.clone()).or_insert(Value::Null), v);
            }
            if let Some(permission) = &cfg.permission {
                agent.permission.extend(env.expand(permission));
            }
        }
        for agent in &mut agents {
            finish_permission(&mut agent.permission, env);
        }
        Agents {
            agents,
            default_agent,
        }
    }

    /// The agent called `name`.
    pub fn get(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Agents in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &Agent> {
        self.agents.iter()
    }

    /// opencode's `list()`: the default agent (configured, else `build`)
    /// first, the rest sorted by name.
    pub fn list(&self) -> Vec<&Agent> {
        let first = self.default_agent.as_deref().unwrap_or("build");
        let mut rest: Vec<&Agent> = self.agents.iter().filter(|a| a.name != first).collect();
        rest.sort_by(|a, b| a.name.cmp(&b.name));
        self.get(first).into_iter().chain(rest).collect()
    }

    /// opencode's `defaultInfo()` (§9.3).
    pub fn default_agent(&self) -> Result<&Agent, AgentError> {
        if let Some(name) = &self.default_agent {
            let agent = self
                .get(name)
                .ok_or_else(|| AgentError::NotFound(name.clone()))?;
            if agent.mode == AgentMode::Subagent {
                return Err(AgentError::Subagent(name.clone()));
            }
            if agent.hidden {
                return Err(AgentError::Hidden(name.clone()));
            }
            return Ok(agent);
        }
        self.agents
            .iter()
            .find(|a| a.mode != AgentMode::Subagent && !a.hidden)
            .ok_or(AgentError::NoPrimary)
    }

    /// The sub-agents the task tool may offer a caller whose rules are
    /// `caller`: mode not `primary` and `task` not denied for their name,
    /// sorted by name (§10.2).
    pub fn callable_subagents(&self, caller: &Ruleset) -> Vec<&Agent> {
        let mut out: Vec<&Agent> = self
            .agents
            .iter()
            .filter(|a| a.mode != AgentMode::Primary)
            .filter(|a| decide("task", &a.name, &[caller]) != Action::Deny)
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

fn deep_merge(target: &mut Value, source: &Value) {
    match (target, source) {
        (Value::Object(t), Value::Object(s)) => {
            for (k, v) in s {
                deep_merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (target, source) => *target = source.clone(),
    }
}

/// The agent name for a markdown file at `relative_path` (relative to the
/// scanned config directory): backslashes become `/`, the first matching
/// prefix of `prefixes` (e.g. `agent/`, `agents/`) and the extension are
/// removed; subfolders are kept (`agents/team/build.md` → `team/build`).
pub fn agent_name_from_path(relative_path: &str, prefixes: &[&str]) -> String {
    let path = relative_path.replace('\\', "/");
    let path = prefixes
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .unwrap_or(&path);
    let file_start = path.rfind('/').map_or(0, |i| i + 1);
    match path[file_start..].rfind('.') {
        Some(dot) if dot > 0 => path[..file_start + dot].to_string(),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_becomes_a_loop_spec() {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let agents = Agents::builtin(&env, &PermissionConfig::default());
        let title = agents.get("title").unwrap();
        let spec = crate::step_loop::AgentSpec::from(title);
        assert_eq!(spec.name, "title");
        assert_eq!(spec.permission, title.permission);
        assert_eq!(spec.temperature, Some(0.5));
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path("/home/u/proj", "/home/u/.local/share/x/plans/*.md"),
            "../.local/share/x/plans/*.md"
        );
        assert_eq!(relative_path("/a/b", "/a/b/c"), "c");
    }

    #[test]
    fn names_from_paths() {
        let p = ["agent/", "agents/"];
        assert_eq!(
            agent_name_from_path("agents/team/build.md", &p),
            "team/build"
        );
        assert_eq!(
            agent_name_from_path("agents\\team\\build.md", &p),
            "team/build"
        );
        assert_eq!(agent_name_from_path("orphaned.md", &p), "orphaned");
    }

    #[test]
    fn config_normalisation() {
        let v: Value = serde_json::from_str(
            r#"{"tools": {"patch": true, "edit": false}, "maxSteps": 9, "x": 1}"#,
        )
        .unwrap();
        let c = AgentConfig::from_value(&v, "agent.a").unwrap();
        assert_eq!(c.steps, Some(9));
        assert_eq!(c.options["x"], 1);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["permission"], serde_json::json!({"edit": "deny"}));
        let bad: Value = serde_json::from_str(r#"{"steps": "ten"}"#).unwrap();
        let e = AgentConfig::from_value(&bad, "agent.a").unwrap_err();
        assert_eq!(e.path, "agent.a.steps");
    }

    #[test]
    fn user_config_comes_after_builtin_rules_and_agent_config_after_that() {
        let env = AgentEnvironment::new("/d", "/t", "/w");
        let user: PermissionConfig = serde_json::from_str(r#"{"edit": "allow"}"#).unwrap();
        let mut config = IndexMap::new();
        let review: Value = serde_json::from_str(
            r#"{"permission": {"edit": "deny"}, "mode": "subagent", "description": "r"}"#,
        )
        .unwrap();
        config.insert(
            "review".to_string(),
            AgentConfig::from_value(&review, "agent.review").unwrap(),
        );
        let agents = Agents::from_config(&env, &user, &config, None);
        // A global edit allow re-enables editing in plan (opencode pitfall §9.2).
        assert_eq!(
            agents.get("plan").unwrap().decide("edit", "a.rs"),
            Action::Allow
        );
        let review = agents.get("review").unwrap();
        assert_eq!(review.decide("edit", "a.rs"), Action::Deny);
        assert!(!review.native);
        assert_eq!(
            review.permission.last().unwrap().pattern,
            "/d/tool-output/*"
        );
        let names: Vec<_> = agents
            .callable_subagents(&agents.get("build").unwrap().permission)
            .iter()
            .map(|a| a.name.clone())
            .collect();
        assert_eq!(names, ["explore", "general", "review"]);
    }
}
