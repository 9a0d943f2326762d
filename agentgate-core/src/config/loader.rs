//! opencode's configuration discovery and precedence (§3.3), as a library:
//! [`ConfigLoader::load`] reads every layer, lowest precedence first, and
//! gives a [`Config`].
//!
//! 1. the global directory (`$XDG_CONFIG_HOME/opencode`, else
//!    `~/.config/opencode`): `config.json`, `opencode.json`, `opencode.jsonc`;
//! 2. the file named by `OPENCODE_CONFIG`;
//! 3. `opencode.json` and `opencode.jsonc` in every directory from the
//!    worktree down to the working directory (the nearest directory wins,
//!    and in one directory the `.jsonc`);
//! 4. the config folders, in opencode's order: the global directory, every
//!    `.opencode` from the working directory *up* to the worktree (so the
//!    farthest wins), then `~/.opencode` — each `.opencode` with its
//!    `opencode.json` then `opencode.jsonc`, and each folder with its
//!    markdown agents (§9.4);
//! 5. the inline JSON of `OPENCODE_CONFIG_CONTENT`.
//!
//! Layers deep-merge (a later layer wins per key; `instructions` lists are
//! concatenated). Every file may use JSONC, `{env:VAR}` and `{file:path}`;
//! an empty file (nothing but whitespace or comments) is an empty layer.
//! Each file's V2 `agents` map is lowered into its `agent` map first
//! (`native_agents.rs`). Then the legacy `mode` map is folded into `agent`
//! (mode `primary`), `OPENCODE_PERMISSION` is merged over `permission`, and
//! the legacy top-level `tools` map goes under it. Unknown top-level keys
//! are warnings with a did-you-mean hint. Every file is checked on its own,
//! so an error names the file and the key path it is about, and every error
//! of every file is reported at once ([`ConfigErrors`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_permission::PermissionConfig;
use agentgate_permission::describe_value;
use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::checks::{check_layer, check_permission, parse_agent};
use super::error::{ConfigError, ConfigErrors, ConfigWarning};
use super::hooks::{HookConfig, LayeredHooks};
use super::jsonc::strip_jsonc;
use super::keys::{TOP_LEVEL_KEYS, unknown_keys};
use super::native_agents::lower_native_agents;
use super::provider::ProviderConfig;
use super::substitute::{substitute, substitute_within_project};
use super::trust::{RiskyPart, screen_agent, screen_project_layer};
use crate::agents::config::merge_value;
use crate::agents::{AgentConfig, MarkdownAgentError, merge_agent_config, scan_markdown_agents};

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
    trust_project: bool,
    keyed: Option<ProviderPredicate>,
}

/// Says whether a provider id's requests carry the user's key.
pub type ProviderPredicate = Arc<dyn Fn(&str) -> bool + Send + Sync>;

impl std::fmt::Debug for ConfigLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigLoader")
            .field("directory", &self.directory)
            .field("worktree", &self.worktree)
            .field("home", &self.home)
            .field("global_dir", &self.global_dir)
            .field("trust_project", &self.trust_project)
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
    /// The `hooks` key's commands, every layer's that may set them
    /// (`config/hooks.rs`: a project's only when the user trusts them).
    pub hooks: Vec<HookConfig>,
    /// What the project's layers set that trust enables (`config/trust.rs`),
    /// found whether or not the project is trusted; empty when trust would
    /// change nothing.
    pub project_risks: Vec<RiskyPart>,
    /// Whether the project's layers were loaded trusted
    /// ([`ConfigLoader::trust_project`]); when not, `project_risks` were set
    /// aside, each with a warning.
    pub project_trusted: bool,
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
            trust_project: false,
            keyed: None,
        }
    }

    /// Which provider ids read the user's key on their own (from the
    /// environment): an untrusted project may not redirect those, nor a
    /// provider a user layer gives a key. Unset, every provider counts
    /// (the facade sets the providers it knows).
    pub fn user_keyed_providers(
        mut self,
        keyed: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.keyed = Some(Arc::new(keyed));
        self
    }

    /// Whether [`user_keyed_providers`](Self::user_keyed_providers) was set.
    pub fn has_user_keyed_providers(&self) -> bool {
        self.keyed.is_some()
    }

    /// Whether the project's layers (`opencode.json(c)` from the worktree
    /// down, its `.opencode` folders) are trusted: loaded as opencode loads
    /// them. Untrusted (the default), each is screened first
    /// (`config/trust.rs`): it may not start processes, connect where it
    /// chooses, redirect a provider, substitute values from outside the
    /// project into a provider, or turn a rule into `allow`; what it set
    /// aside is in [`Config::project_risks`] and the warnings.
    pub fn trust_project(mut self, trusted: bool) -> Self {
        self.trust_project = trusted;
        self
    }

    /// Whether the project's layers are loaded trusted.
    pub fn project_is_trusted(&self) -> bool {
        self.trust_project
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

    /// The directory configuration is loaded for.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The home directory (`~`), as set or found.
    pub fn home_dir(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// An environment variable, looked up the way this loader looks them
    /// up (the process environment unless [`env`](Self::env) replaced it).
    pub fn env_var(&self, name: &str) -> Option<String> {
        (self.env)(name)
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

    /// Reads every layer (see the module documentation). A layer with an
    /// error does not stop the others from being read, so that every error
    /// is reported at once.
    pub fn load(&self) -> Result<Config, ConfigErrors> {
        let mut state = Merge {
            trusted: self.trust_project,
            keyed: self.keyed.clone(),
            ..Merge::default()
        };
        let global = self.resolved_global_dir();
        let worktree = self.resolved_worktree();
        if let Some(global) = &global {
            for name in ["config.json", "opencode.json", "opencode.jsonc"] {
                self.file_layer(&global.join(name), &mut state);
            }
        }
        if let Some(path) = (self.env)("OPENCODE_CONFIG").filter(|p| !p.is_empty()) {
            let path = PathBuf::from(path);
            if path.is_file() {
                self.file_layer(&path, &mut state);
            } else {
                state.errors.push(ConfigError::new(
                    &path.display().to_string(),
                    "OPENCODE_CONFIG",
                    "the file does not exist: fix or unset OPENCODE_CONFIG",
                ));
            }
        }
        // Nearest first, as opencode walks up from the working directory.
        let walk: Vec<PathBuf> = self
            .directory
            .ancestors()
            .take_while(|dir| dir.starts_with(&worktree))
            .map(Path::to_path_buf)
            .collect();
        // A project's files: a cloned repository controls them.
        state.project = true;
        for dir in walk.iter().rev() {
            for name in ["opencode.json", "opencode.jsonc"] {
                self.file_layer(&dir.join(name), &mut state);
            }
        }
        state.project = false;
        let mut candidates: Vec<PathBuf> = Vec::new();
        candidates.extend(global.clone());
        candidates.extend(walk.iter().map(|dir| dir.join(".opencode")));
        candidates.extend(self.home.as_ref().map(|h| h.join(".opencode")));
        let mut config_dirs: Vec<PathBuf> = Vec::new();
        for dir in candidates {
            if dir.is_dir() && !config_dirs.contains(&dir) {
                config_dirs.push(dir);
            }
        }
        for dir in &config_dirs {
            self.config_dir_layer(dir, Some(dir) == global.as_ref(), &walk, &mut state);
        }
        if let Some(text) = (self.env)("OPENCODE_CONFIG_CONTENT").filter(|t| !t.is_empty()) {
            match self.parse(&text, None, &self.directory, "OPENCODE_CONFIG_CONTENT") {
                Ok(value) => state.apply("OPENCODE_CONFIG_CONTENT", value),
                Err(error) => state.errors.push(error),
            }
        }
        let permission_override = (self.env)("OPENCODE_PERMISSION")
            .filter(|t| !t.is_empty())
            .and_then(|text| match serde_json::from_str::<Value>(&text) {
                Ok(value) => {
                    check_permission(&value, "OPENCODE_PERMISSION", &mut state.errors);
                    Some(value)
                }
                Err(e) => {
                    state.errors.push(ConfigError::new(
                        "OPENCODE_PERMISSION",
                        "permission",
                        format!("not valid JSON: {e}"),
                    ));
                    None
                }
            });
        state.finish(permission_override, config_dirs)
    }

    /// The layers of one config directory (`.opencode/`, or the global
    /// one): its `opencode.json(c)` unless it is the global directory
    /// (read already), then its markdown agents; a directory inside the
    /// project (one of `walk`, not `~/.opencode`) is the project's.
    fn config_dir_layer(&self, dir: &Path, is_global: bool, walk: &[PathBuf], state: &mut Merge) {
        let project_dir = walk.iter().any(|w| dir.starts_with(w))
            && self
                .home
                .as_ref()
                .is_none_or(|home| dir != home.join(".opencode"));
        if !is_global {
            state.project = project_dir;
            for name in ["opencode.json", "opencode.jsonc"] {
                self.file_layer(&dir.join(name), state);
            }
            state.project = false;
        }
        let (found, errors) = scan_markdown_agents(dir);
        state.warnings.extend(errors.iter().map(markdown_warning));
        for mut agent in found {
            if project_dir {
                state.screen_markdown_agent(&mut agent);
            }
            match state.agents.get_mut(&agent.name) {
                Some(base) => merge_agent_config(base, &agent.config),
                None => {
                    state.agents.insert(agent.name, agent.config);
                }
            }
        }
    }

    fn file_layer(&self, path: &Path, state: &mut Merge) {
        if !path.is_file() {
            return;
        }
        let shown = path.display().to_string();
        let text = match crate::bounded_read::read_text(path) {
            Ok(text) => text,
            Err(e) => {
                state.errors.push(ConfigError::new(
                    &shown,
                    "",
                    format!("cannot read the file: {e}"),
                ));
                return;
            }
        };
        let base = path.parent().unwrap_or(Path::new("."));
        match self.parse(&text, Some(path), base, &shown) {
            Ok(value) if state.project => {
                let root = self.resolved_worktree();
                let blanked =
                    substitute_within_project(&text, Some(path), base, self.home.as_deref(), &root)
                        .ok()
                        .and_then(|text| parse_config_text(&text, &shown).ok());
                state.apply_project(&shown, value, blanked);
            }
            Ok(value) => state.apply(&shown, value),
            Err(error) => state.errors.push(error),
        }
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

/// A markdown agent that could not be read, as a warning naming its file
/// and, for a wrong field, the field.
fn markdown_warning(error: &MarkdownAgentError) -> ConfigWarning {
    match error {
        MarkdownAgentError::Field { path, source } => ConfigWarning {
            file: path.display().to_string(),
            path: source.path.clone(),
            message: format!(
                "markdown agent skipped: expected {}, found {}",
                source.expected, source.found
            ),
        },
        other => ConfigWarning {
            file: other.path().display().to_string(),
            path: String::new(),
            message: format!("markdown agent skipped: {other}"),
        },
    }
}

/// Parses one config text (JSONC) into its top-level object; `name` (the
/// file) is used in error messages. A text with nothing but whitespace and
/// comments is an empty object: opencode reads a 0-byte file so, and a
/// public project ships one as `.opencode/opencode.json`.
pub fn parse_config_text(text: &str, name: &str) -> Result<Map<String, Value>, ConfigError> {
    let json = strip_jsonc(text).map_err(|e| ConfigError::new(name, "", e.to_string()))?;
    if json.trim().is_empty() {
        return Ok(Map::new());
    }
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
    /// Every error found so far, in load order.
    errors: Vec<ConfigError>,
    /// The layer being applied is a project's (for `hooks`).
    project: bool,
    /// Every layer's `hooks`.
    hooks: LayeredHooks,
    /// The project's layers are trusted.
    trusted: bool,
    /// What the project's layers set that trust enables.
    risks: Vec<RiskyPart>,
    /// The providers that read the user's key on their own.
    keyed: Option<ProviderPredicate>,
    /// Provider id → the last file that set its `options.apiKey`.
    key_files: IndexMap<String, String>,
}

impl Merge {
    /// A project's layer: screened (`config/trust.rs`) and, untrusted,
    /// applied without what was set aside, its rules only tightening.
    fn apply_project(
        &mut self,
        file: &str,
        mut layer: Map<String, Value>,
        blanked: Option<Map<String, Value>>,
    ) {
        let mut ignored = (Vec::new(), Vec::new());
        lower_native_agents(&mut layer, file, &mut self.warnings, &mut self.errors);
        let blanked = blanked.map(|mut blanked| {
            lower_native_agents(&mut blanked, file, &mut ignored.0, &mut ignored.1);
            blanked
        });
        let merged = &self.value;
        let keyed = self.keyed.clone();
        let user_keyed = |id: &str| {
            let user_key = merged
                .get("provider")
                .and_then(|p| p.get(id))
                .and_then(|p| p.get("options"))
                .and_then(|o| o.get("apiKey"))
                .is_some();
            user_key || keyed.as_ref().is_none_or(|keyed| keyed(id))
        };
        let screened = screen_project_layer(&layer, blanked.as_ref(), file, &user_keyed);
        if self.trusted {
            self.risks.extend(screened.risky);
            return self.apply(file, layer);
        }
        for part in &screened.risky {
            // hooks.rs warns about the hooks it leaves out itself.
            if part.key != "hooks" {
                self.warnings.push(part.warning());
            }
        }
        self.risks.extend(screened.risky);
        // Keys the loader does not know are dropped from an untrusted
        // layer before `apply` sees them; a typo still gets its warning.
        self.warnings.extend(
            unknown_keys(&layer, TOP_LEVEL_KEYS, file, "")
                .into_iter()
                .filter(|w| w.path != "permissions"),
        );
        let mut layer = screened.value;
        if let Some(permission) = layer.get("permission") {
            self.only_tighten(permission.clone());
        }
        self.apply(file, std::mem::take(&mut layer));
    }

    /// Before an untrusted project's `permission` (with no `allow` left) is
    /// merged: each permission it names that the layers so far give as one
    /// action (`"bash": "ask"`) becomes `{"*": action}`, so that the
    /// project's patterns are added after it instead of replacing it.
    fn only_tighten(&mut self, project: Value) {
        let Some(current) = self.value.get_mut("permission") else {
            return;
        };
        if let Value::String(action) = current {
            *current = serde_json::json!({ "*": action });
        }
        let (Value::Object(current), Value::Object(project)) = (current, project) else {
            return;
        };
        for (name, rules) in project {
            if let (Some(existing @ Value::String(_)), Value::Object(_)) =
                (current.get_mut(&name), &rules)
            {
                let action = existing.clone();
                *existing = serde_json::json!({ "*": action });
            }
        }
    }

    /// A markdown agent of a project's `.opencode` folder: its
    /// `permission` without `allow` unless the project is trusted.
    fn screen_markdown_agent(&mut self, agent: &mut crate::agents::MarkdownAgent) {
        let Ok(value) = serde_json::to_value(&agent.config) else {
            return;
        };
        let file = agent.path.display().to_string();
        let mut risky = Vec::new();
        let path = format!("agent.{}", agent.name);
        let screened = screen_agent(&value, &path, &file, &mut risky);
        if risky.is_empty() {
            return;
        }
        if !self.trusted {
            self.warnings.extend(risky.iter().map(RiskyPart::warning));
            let mut errors = Vec::new();
            if let Some(parsed) = parse_agent(&screened, &path, &file, &mut errors) {
                agent.config = parsed;
            }
        }
        self.risks.extend(risky);
    }

    /// Checks one layer on its own (so each error names this file) and
    /// merges what is valid.
    fn apply(&mut self, file: &str, mut layer: Map<String, Value>) {
        self.files.push(file.to_string());
        lower_native_agents(&mut layer, file, &mut self.warnings, &mut self.errors);
        self.warnings.extend(
            unknown_keys(&layer, TOP_LEVEL_KEYS, file, "")
                .into_iter()
                // An error of its own (native_agents.rs).
                .filter(|w| w.path != "permissions"),
        );
        check_layer(&layer, file, &mut self.warnings, &mut self.errors);
        if let Some(hooks) = layer.remove("hooks") {
            let untrusted = self.project && !self.trusted;
            self.hooks.add(&hooks, file, untrusted, &mut self.errors);
        }
        for (key, forced_primary) in [("agent", false), ("mode", true)] {
            match layer.remove(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(entries)) => {
                    for (name, entry) in entries {
                        let path = format!("{key}.{name}");
                        let Some(mut parsed) = parse_agent(&entry, &path, file, &mut self.errors)
                        else {
                            continue;
                        };
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
                Some(other) => self.errors.push(ConfigError::new(
                    file,
                    key,
                    format!(
                        "expected an object of agent name → agent config, found {}",
                        describe_value(&other)
                    ),
                )),
            }
        }
        self.merge_instructions(file, layer.remove("instructions"));
        self.note_key_files(file, &layer);
        let mut base = Value::Object(std::mem::take(&mut self.value));
        merge_value(&mut base, &Value::Object(layer));
        if let Value::Object(map) = base {
            self.value = map;
        }
    }

    /// Adds a layer's `instructions` entries (each once).
    fn merge_instructions(&mut self, file: &str, instructions: Option<Value>) {
        match instructions {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let Value::String(entry) = item else {
                        self.errors.push(ConfigError::new(
                            file,
                            format!("instructions[{index}]"),
                            format!(
                                "expected a path or glob string, found {}",
                                describe_value(item)
                            ),
                        ));
                        continue;
                    };
                    if !self.instructions.contains(entry) {
                        self.instructions.push(entry.clone());
                    }
                }
            }
            Some(other) => self.errors.push(ConfigError::new(
                file,
                "instructions",
                format!(
                    "expected a list of paths or globs, found {}",
                    describe_value(&other)
                ),
            )),
        }
    }

    /// Remembers which file set each provider's `options.apiKey`.
    fn note_key_files(&mut self, file: &str, layer: &Map<String, Value>) {
        let Some(Value::Object(providers)) = layer.get("provider") else {
            return;
        };
        for (id, entry) in providers {
            if entry.pointer("/options/apiKey").is_some() {
                self.key_files.insert(id.clone(), file.to_string());
            }
        }
    }

    /// The merged `permission`: the legacy `tools` under the explicit
    /// `permission` (explicit wins), with `OPENCODE_PERMISSION`
    /// (`permission_override`) merged over the explicit one first.
    fn permission(
        &mut self,
        permission_override: Option<Value>,
    ) -> Result<Option<PermissionConfig>, ConfigError> {
        if let Some(over) = &permission_override {
            let slot = self
                .value
                .entry("permission".to_string())
                .or_insert(Value::Object(Map::new()));
            merge_value(slot, over);
        }
        let legacy = self.value.get("tools").map(legacy_tools);
        let merged = match (legacy, self.value.get("permission")) {
            (None, None) => None,
            (Some(legacy), None) => Some(legacy),
            (None, Some(explicit)) => Some(explicit.clone()),
            (Some(mut legacy), Some(explicit)) => {
                merge_value(&mut legacy, explicit);
                Some(legacy)
            }
        };
        let Some(value) = merged else {
            return Ok(None);
        };
        PermissionConfig::from_value(&value, "permission")
            .map(Some)
            .map_err(|e| {
                ConfigError::new(
                    &self.files.join(", "),
                    e.path,
                    format!("expected {}, found {}", e.expected, e.found),
                )
            })
    }

    fn finish(
        mut self,
        permission_override: Option<Value>,
        config_dirs: Vec<PathBuf>,
    ) -> Result<Config, ConfigErrors> {
        if let Some(errors) = ConfigErrors::from_vec(std::mem::take(&mut self.errors)) {
            return Err(errors);
        }
        // Every layer was checked on its own; what follows only combines
        // valid values, so an error here means a check above is missing.
        let permission = self.permission(permission_override)?;
        let combined = || self.files.join(", ");
        let string = |key: &str| -> Option<String> {
            self.value
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let model = string("model");
        let small_model = string("small_model");
        let default_agent = string("default_agent");
        let mut providers = IndexMap::new();
        if let Some(Value::Object(entries)) = self.value.get("provider") {
            for (id, entry) in entries {
                let mut parsed = ProviderConfig::from_value(entry, &format!("provider.{id}"))
                    .map_err(|(path, message)| ConfigError::new(&combined(), path, message))?;
                parsed.api_key_file = self.key_files.get(id).cloned();
                providers.insert(id.clone(), parsed);
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
        let hooks = std::mem::take(&mut self.hooks).finish(&mut self.warnings);
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
            hooks,
            project_risks: self.risks,
            project_trusted: self.trusted,
        })
    }
}

/// `tools: {write: false}` → `{edit: "deny"}` (§3.3); the layers' checks
/// have made sure every value is a boolean.
fn legacy_tools(tools: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(tools) = tools {
        for (name, on) in tools {
            let Value::Bool(on) = on else {
                continue;
            };
            let key = match name.as_str() {
                "write" | "edit" | "patch" => "edit",
                other => other,
            };
            let action = if *on { "allow" } else { "deny" };
            out.insert(key.to_string(), Value::String(action.to_string()));
        }
    }
    Value::Object(out)
}
