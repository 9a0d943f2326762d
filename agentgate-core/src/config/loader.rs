//! opencode's configuration discovery and precedence (§3.3), as a library:
//! [`ConfigLoader::load`] reads every layer, lowest precedence first, and
//! gives a [`Config`].
//!
//! 1. the global directory (`$XDG_CONFIG_HOME/opencode`, else
//!    `~/.config/opencode`): `config.json`, `opencode.json`, `opencode.jsonc`;
//! 2. the file named by `OPENCODE_CONFIG`;
//! 3. `opencode.jsonc` and `opencode.json` in every directory from the
//!    worktree down to the working directory (the nearest wins);
//! 4. the `.opencode/` folders — the global directory, `~/.opencode`, then
//!    every `.opencode` from the worktree down to the working directory —
//!    each with its `opencode.json{,c}` and its markdown agents (§9.4);
//! 5. the inline JSON of `OPENCODE_CONFIG_CONTENT`.
//!
//! Layers deep-merge (a later layer wins per key; `instructions` lists are
//! concatenated). Every file may use JSONC, `{env:VAR}` and `{file:path}`.
//! Then the legacy `mode` map is folded into `agent` (mode `primary`),
//! `OPENCODE_PERMISSION` is merged over `permission`, and the legacy
//! top-level `tools` map goes under it. Unknown top-level keys are warnings
//! with a did-you-mean hint; errors name the file and the key path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_permission::PermissionConfig;
use agentgate_permission::describe_value;
use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::error::{ConfigError, ConfigWarning};
use super::jsonc::strip_jsonc;
use super::keys::{PROVIDER_KEYS, TOP_LEVEL_KEYS, unknown_keys};
use super::provider::ProviderConfig;
use super::substitute::substitute;
use crate::agents::config::merge_value;
use crate::agents::{AgentConfig, merge_agent_config, scan_markdown_agents};

/// Looks a variable up in the environment.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where to look for configuration.
#[derive(Clone)]
pub struct ConfigLoader {
    directory: PathBuf,
    worktree: Option<PathBuf>,
    home: Option<PathBuf>,
    global_dir: Option<PathBuf>,
    env: EnvLookup,
}

impl std::fmt::Debug for ConfigLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigLoader")
            .field("directory", &self.directory)
            .field("worktree", &self.worktree)
            .field("home", &self.home)
            .field("global_dir", &self.global_dir)
            .finish_non_exhaustive()
    }
}

/// The configuration of a directory, all layers applied.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// The merged JSON (after the `mode` fold and the permission merges).
    pub value: Map<String, Value>,
    /// The files read, in load order (and `OPENCODE_CONFIG_CONTENT`).
    pub files: Vec<String>,
    /// The `.opencode` (and global) directories scanned for markdown agents.
    pub config_dirs: Vec<PathBuf>,
    /// `model` (`provider/model`).
    pub model: Option<String>,
    /// `small_model`.
    pub small_model: Option<String>,
    /// `default_agent`.
    pub default_agent: Option<String>,
    /// The agent configs: `agent` and `mode` maps and markdown agents.
    pub agents: IndexMap<String, AgentConfig>,
    /// The user's permission config (legacy `tools` folded in).
    pub permission: Option<PermissionConfig>,
    /// `instructions` entries (paths and globs), every layer's.
    pub instructions: Vec<String>,
    /// `provider` entries.
    pub providers: IndexMap<String, ProviderConfig>,
    /// What was ignored, with hints.
    pub warnings: Vec<ConfigWarning>,
}

impl ConfigLoader {
    /// A loader for `directory`, with the process environment: `$HOME`,
    /// the worktree found as the nearest parent with `.git` (else the
    /// directory itself).
    pub fn new(directory: impl Into<PathBuf>) -> Self {
        ConfigLoader {
            directory: directory.into(),
            worktree: None,
            home: agentgate_permission::home_dir().map(PathBuf::from),
            global_dir: None,
            env: Arc::new(|name| std::env::var(name).ok()),
        }
    }

    /// Sets the worktree (the walk up stops there).
    pub fn worktree(mut self, worktree: impl Into<PathBuf>) -> Self {
        self.worktree = Some(worktree.into());
        self
    }

    /// Sets the home directory (`~`, `~/.config/opencode`, `~/.opencode`).
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Sets the global config directory.
    pub fn global_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.global_dir = Some(dir.into());
        self
    }

    /// Sets how environment variables are looked up (tests pass a map).
    pub fn env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// The worktree: as set, else the nearest parent with `.git`, else the
    /// directory.
    pub fn resolved_worktree(&self) -> PathBuf {
        self.worktree.clone().unwrap_or_else(|| {
            self.directory
                .ancestors()
                .find(|dir| dir.join(".git").exists())
                .unwrap_or(&self.directory)
                .to_path_buf()
        })
    }

    /// The global config directory: as set, else
    /// `$XDG_CONFIG_HOME/opencode`, else `<home>/.config/opencode`.
    pub fn resolved_global_dir(&self) -> Option<PathBuf> {
        self.global_dir.clone().or_else(|| {
            (self.env)("XDG_CONFIG_HOME")
                .filter(|d| !d.is_empty())
                .map(|d| PathBuf::from(d).join("opencode"))
                .or_else(|| {
                    self.home
                        .as_ref()
                        .map(|h| h.join(".config").join("opencode"))
                })
        })
    }

    /// Reads every layer (see the module documentation).
    pub fn load(&self) -> Result<Config, ConfigError> {
        let mut state = Merge::default();
        let global = self.resolved_global_dir();
        let worktree = self.resolved_worktree();
        if let Some(global) = &global {
            for name in ["config.json", "opencode.json", "opencode.jsonc"] {
                self.file_layer(&global.join(name), &mut state)?;
            }
        }
        if let Some(path) = (self.env)("OPENCODE_CONFIG").filter(|p| !p.is_empty()) {
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(ConfigError::new(
                    &path.display().to_string(),
                    "OPENCODE_CONFIG",
                    "the file does not exist: fix or unset OPENCODE_CONFIG",
                ));
            }
            self.file_layer(&path, &mut state)?;
        }
        let mut walk: Vec<PathBuf> = self
            .directory
            .ancestors()
            .take_while(|dir| dir.starts_with(&worktree))
            .map(Path::to_path_buf)
            .collect();
        walk.reverse();
        for dir in &walk {
            for name in ["opencode.jsonc", "opencode.json"] {
                self.file_layer(&dir.join(name), &mut state)?;
            }
        }
        let mut config_dirs: Vec<PathBuf> = Vec::new();
        config_dirs.extend(global.clone());
        config_dirs.extend(self.home.as_ref().map(|h| h.join(".opencode")));
        config_dirs.extend(walk.iter().map(|dir| dir.join(".opencode")));
        config_dirs.retain(|d| d.is_dir());
        config_dirs.dedup();
        for dir in &config_dirs {
            if Some(dir) != global.as_ref() {
                for name in ["opencode.jsonc", "opencode.json"] {
                    self.file_layer(&dir.join(name), &mut state)?;
                }
            }
            let (found, errors) = scan_markdown_agents(dir);
            state.warnings.extend(errors.iter().map(|e| ConfigWarning {
                file: e.path().display().to_string(),
                path: String::new(),
                message: format!("markdown agent skipped: {e}"),
            }));
            for agent in found {
                match state.agents.get_mut(&agent.name) {
                    Some(base) => merge_agent_config(base, &agent.config),
                    None => {
                        state.agents.insert(agent.name, agent.config);
                    }
                }
            }
        }
        if let Some(text) = (self.env)("OPENCODE_CONFIG_CONTENT").filter(|t| !t.is_empty()) {
            let value = self.parse(&text, None, &self.directory, "OPENCODE_CONFIG_CONTENT")?;
            state.apply("OPENCODE_CONFIG_CONTENT", value)?;
        }
        let permission_override = match (self.env)("OPENCODE_PERMISSION").filter(|t| !t.is_empty())
        {
            Some(text) => Some(serde_json::from_str::<Value>(&text).map_err(|e| {
                ConfigError::new(
                    "OPENCODE_PERMISSION",
                    "permission",
                    format!("not valid JSON: {e}"),
                )
            })?),
            None => None,
        };
        state.finish(permission_override, config_dirs)
    }

    fn file_layer(&self, path: &Path, state: &mut Merge) -> Result<(), ConfigError> {
        if !path.is_file() {
            return Ok(());
        }
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(&shown, "", format!("cannot read the file: {e}")))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let value = self.parse(&text, Some(path), base, &shown)?;
        state.apply(&shown, value)
    }

    fn parse(
        &self,
        text: &str,
        file: Option<&Path>,
        base: &Path,
        shown: &str,
    ) -> Result<Map<String, Value>, ConfigError> {
        let text = substitute(text, file, base, self.home.as_deref(), &*self.env)?;
        parse_config_text(&text, shown)
    }
}

/// Parses one config text (JSONC) into its top-level object; `name` (the
/// file) is used in error messages.
pub fn parse_config_text(text: &str, name: &str) -> Result<Map<String, Value>, ConfigError> {
    let json = strip_jsonc(text).map_err(|e| ConfigError::new(name, "", e.to_string()))?;
    let value: Value = serde_json::from_str(&json)
        .map_err(|e| ConfigError::new(name, "", format!("not valid JSON(C): {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ConfigError::new(
            name,
            "(top level)",
            format!(
                "expected an object such as {{\"permission\": {{...}}}}, found {}",
                describe_value(&other)
            ),
        )),
    }
}

/// The layers merged so far.
#[derive(Default)]
struct Merge {
    value: Map<String, Value>,
    files: Vec<String>,
    agents: IndexMap<String, AgentConfig>,
    instructions: Vec<String>,
    warnings: Vec<ConfigWarning>,
    /// The file that last set `permission` or `tools`, for error messages.
    permission_file: Option<String>,
}

impl Merge {
    fn apply(&mut self, file: &str, mut layer: Map<String, Value>) -> Result<(), ConfigError> {
        self.files.push(file.to_string());
        self.warnings
            .extend(unknown_keys(&layer, TOP_LEVEL_KEYS, file, ""));
        if let Some(Value::Object(providers)) = layer.get("provider") {
            for (id, entry) in providers {
                if let Value::Object(entry) = entry {
                    self.warnings.extend(unknown_keys(
                        entry,
                        PROVIDER_KEYS,
                        file,
                        &format!("provider.{id}"),
                    ));
                }
            }
        }
        for (key, forced_primary) in [("agent", false), ("mode", true)] {
            match layer.remove(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(entries)) => {
                    for (name, entry) in entries {
                        let path = format!("{key}.{name}");
                        let mut parsed = AgentConfig::from_value(&entry, &path).map_err(|e| {
                            ConfigError::new(
                                file,
                                e.path.clone(),
                                format!("expected {}, found {}", e.expected, e.found),
                            )
                        })?;
                        if forced_primary {
                            parsed.mode = Some(crate::agents::AgentMode::Primary);
                        }
                        match self.agents.get_mut(&name) {
                            Some(base) => merge_agent_config(base, &parsed),
                            None => {
                                self.agents.insert(name, parsed);
                            }
                        }
                    }
                }
                Some(other) => {
                    return Err(ConfigError::new(
                        file,
                        key,
                        format!(
                            "expected an object of agent name → agent config, found {}",
                            describe_value(&other)
                        ),
                    ));
                }
            }
        }
        match layer.remove("instructions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let Value::String(entry) = item else {
                        return Err(ConfigError::new(
                            file,
                            format!("instructions[{index}]"),
                            format!(
                                "expected a path or glob string, found {}",
                                describe_value(item)
                            ),
                        ));
                    };
                    if !self.instructions.contains(entry) {
                        self.instructions.push(entry.clone());
                    }
                }
            }
            Some(other) => {
                return Err(ConfigError::new(
                    file,
                    "instructions",
                    format!(
                        "expected a list of paths or globs, found {}",
                        describe_value(&other)
                    ),
                ));
            }
        }
        if layer.contains_key("permission") || layer.contains_key("tools") {
            self.permission_file = Some(file.to_string());
        }
        let mut base = Value::Object(std::mem::take(&mut self.value));
        merge_value(&mut base, &Value::Object(layer));
        if let Value::Object(map) = base {
            self.value = map;
        }
        Ok(())
    }

    fn finish(
        mut self,
        permission_override: Option<Value>,
        config_dirs: Vec<PathBuf>,
    ) -> Result<Config, ConfigError> {
        let file = self
            .permission_file
            .clone()
            .unwrap_or_else(|| self.files.join(", "));
        if let Some(over) = &permission_override {
            let slot = self
                .value
                .entry("permission".to_string())
                .or_insert(Value::Object(Map::new()));
            merge_value(slot, over);
        }
        let legacy = match self.value.get("tools") {
            Some(tools) => Some(legacy_tools(tools, &file)?),
            None => None,
        };
        let merged = match (legacy, self.value.get("permission")) {
            (None, None) => None,
            (Some(legacy), None) => Some(legacy),
            (None, Some(explicit)) => Some(explicit.clone()),
            (Some(mut legacy), Some(explicit)) => {
                merge_value(&mut legacy, explicit);
                Some(legacy)
            }
        };
        let permission = match merged {
            Some(value) => {
                let file = if permission_override.is_some() {
                    format!("{file} + OPENCODE_PERMISSION")
                } else {
                    file
                };
                Some(
                    PermissionConfig::from_value(&value, "permission").map_err(|e| {
                        ConfigError::new(
                            &file,
                            e.path,
                            format!("expected {}, found {}", e.expected, e.found),
                        )
                    })?,
                )
            }
            None => None,
        };
        let string = |key: &str| -> Result<Option<String>, ConfigError> {
            match self.value.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(ConfigError::new(
                    &self.files.join(", "),
                    key,
                    format!("expected a string, found {}", describe_value(other)),
                )),
            }
        };
        let model = string("model")?;
        let small_model = string("small_model")?;
        let default_agent = string("default_agent")?;
        let mut providers = IndexMap::new();
        match self.value.get("provider") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (id, entry) in entries {
                    let parsed = ProviderConfig::from_value(entry, &format!("provider.{id}"))
                        .map_err(|(path, message)| {
                            ConfigError::new(&self.files.join(", "), path, message)
                        })?;
                    providers.insert(id.clone(), parsed);
                }
            }
            Some(other) => {
                return Err(ConfigError::new(
                    &self.files.join(", "),
                    "provider",
                    format!(
                        "expected an object of provider id → settings, found {}",
                        describe_value(other)
                    ),
                ));
            }
        }
        let mut agents_value = Map::new();
        for (name, agent) in &self.agents {
            agents_value.insert(
                name.clone(),
                serde_json::to_value(agent).unwrap_or(Value::Null),
            );
        }
        self.value
            .insert("agent".into(), Value::Object(agents_value));
        Ok(Config {
            value: self.value,
            files: self.files,
            config_dirs,
            model,
            small_model,
            default_agent,
            agents: self.agents,
            permission,
            instructions: self.instructions,
            providers,
            warnings: self.warnings,
        })
    }
}

/// `tools: {write: false}` → `{edit: "deny"}` (§3.3).
fn legacy_tools(tools: &Value, file: &str) -> Result<Value, ConfigError> {
    let Value::Object(tools) = tools else {
        return Err(ConfigError::new(
            file,
            "tools",
            format!(
                "expected an object of tool name → true/false, found {}",
                describe_value(tools)
            ),
        ));
    };
    let mut out = Map::new();
    for (name, on) in tools {
        let Value::Bool(on) = on else {
            return Err(ConfigError::new(
                file,
                format!("tools.{name}"),
                format!("expected true or false, found {}", describe_value(on)),
            ));
        };
        let key = match name.as_str() {
            "write" | "edit" | "patch" => "edit",
            other => other,
        };
        let action = if *on { "allow" } else { "deny" };
        out.insert(key.to_string(), Value::String(action.to_string()));
    }
    Ok(Value::Object(out))
}
