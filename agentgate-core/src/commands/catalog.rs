//! [`Commands`]: the custom commands of a configuration, as opencode finds
//! them: the config's `command` map, then the markdown files
//! `{command,commands}/**/*.md` of every config folder (the global one and
//! each `.opencode`, in [`Config::config_dirs`] order; a later definition
//! of a name wins). A file's name relative to its folder, without `.md`,
//! is the command's name (`commands/team/review.md` is `team/review`); its
//! front matter holds `description`, `agent`, `model` and `subtask`, its
//! trimmed body the template.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::agents::parse_markdown;
use crate::config::{Config, ConfigWarning};
use crate::skills::Skills;

/// The folders of a config directory that hold command files.
pub const COMMAND_DIRS: [&str; 2] = ["command", "commands"];

/// Where a command was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandSource {
    /// The configuration's `command` map.
    Config,
    /// A markdown file.
    File(PathBuf),
    /// A skill (its `SKILL.md`), offered as a command of its name.
    Skill(PathBuf),
}

/// One custom command: a named prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Command {
    /// The name typed after `/`.
    pub name: String,
    /// The prompt template (`$ARGUMENTS`, `$1`…, `` !`cmd` ``, `@file`).
    pub template: String,
    /// Shown in listings.
    pub description: Option<String>,
    /// The agent that runs it (else the session's).
    pub agent: Option<String>,
    /// The model that runs it, as `provider/model`.
    pub model: Option<String>,
    /// `true`: run as a sub-agent (the `task` tool); `false`: in the
    /// session even for a sub-agent; unset: as a sub-agent only when the
    /// agent is one.
    pub subtask: Option<bool>,
    /// Where it was defined.
    pub source: CommandSource,
}

impl Command {
    /// A command of `name` with `template` and nothing else set.
    pub fn new(name: impl Into<String>, template: impl Into<String>) -> Self {
        Command {
            name: name.into(),
            template: template.into(),
            description: None,
            agent: None,
            model: None,
            subtask: None,
            source: CommandSource::Config,
        }
    }

    /// Reads one command from a JSON object (a `command` entry, or a
    /// markdown file's front matter with `template` from its body); `path`
    /// names the entry in errors.
    fn from_object(
        name: &str,
        object: &Map<String, Value>,
        source: CommandSource,
    ) -> Result<Self, String> {
        let text = |key: &str| -> Result<Option<String>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "{key}: expected a string, found {}",
                    agentgate_permission::describe_value(other)
                )),
            }
        };
        let template = text("template")?
            .ok_or_else(|| "template: missing (the prompt the command sends)".to_string())?;
        let subtask = match object.get("subtask") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(format!(
                    "subtask: expected true or false, found {}",
                    agentgate_permission::describe_value(other)
                ));
            }
        };
        Ok(Command {
            name: name.to_string(),
            template,
            description: text("description")?,
            agent: text("agent")?,
            model: text("model")?,
            subtask,
            source,
        })
    }
}

/// The custom commands of a configuration, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    entries: IndexMap<String, Command>,
}

impl Commands {
    /// No commands.
    pub fn new() -> Self {
        Commands::default()
    }

    /// The commands of `config`: its `command` map, then the markdown
    /// files of its config folders. What cannot be read is a warning naming
    /// the file (and the entry), and is left out.
    pub fn from_config(config: &Config) -> (Commands, Vec<ConfigWarning>) {
        let mut commands = Commands::new();
        let mut warnings = Vec::new();
        let shown = config.files.join(", ");
        if let Some(entries) = config.value.get("command") {
            match entries {
                Value::Object(entries) => {
                    for (name, entry) in entries {
                        let parsed = match entry {
                            Value::Object(object) => {
                                Command::from_object(name, object, CommandSource::Config)
                            }
                            other => Err(format!(
                                "expected an object with a template, found {}",
                                agentgate_permission::describe_value(other)
                            )),
                        };
                        match parsed {
                            Ok(command) => commands.insert(command),
                            Err(message) => warnings.push(ConfigWarning {
                                file: shown.clone(),
                                path: format!("command.{name}"),
                                message: format!("command skipped: {message}"),
                            }),
                        }
                    }
                }
                other => warnings.push(ConfigWarning {
                    file: shown.clone(),
                    path: "command".to_string(),
                    message: format!(
                        "expected an object of command name → {{template, ...}}, found {}",
                        agentgate_permission::describe_value(other)
                    ),
                }),
            }
        }
        for dir in &config.config_dirs {
            commands.scan_dir(dir, &mut warnings);
        }
        (commands, warnings)
    }

    /// Adds the markdown commands of one config folder (`dir` is e.g.
    /// `.opencode`), a later file of a name replacing an earlier one.
    pub fn scan_dir(&mut self, dir: &Path, warnings: &mut Vec<ConfigWarning>) {
        let mut files = Vec::new();
        let mut visited = HashSet::new();
        for sub in COMMAND_DIRS {
            let path = dir.join(sub);
            if path.is_dir() {
                collect(&path, "", &mut visited, &mut files);
            }
        }
        for (path, name) in files {
            match read_command_file(&path, &name) {
                Ok(command) => self.insert(command),
                Err(message) => warnings.push(ConfigWarning {
                    file: path.display().to_string(),
                    path: String::new(),
                    message: format!("command skipped: {message}"),
                }),
            }
        }
    }

    /// Adds each skill as a command of its name (its content the template)
    /// unless a command already has that name, as opencode does.
    pub fn add_skills(&mut self, skills: &Skills) {
        for skill in skills.iter() {
            if self.entries.contains_key(&skill.name) {
                continue;
            }
            let mut command = Command::new(&skill.name, skill.command_template());
            command.description = Some(skill.description.clone());
            command.source = CommandSource::Skill(skill.location.clone());
            self.insert(command);
        }
    }

    /// Adds (or replaces) a command.
    pub fn insert(&mut self, command: Command) {
        self.entries.insert(command.name.clone(), command);
    }

    /// The command `name`.
    pub fn get(&self, name: &str) -> Option<&Command> {
        self.entries.get(name)
    }

    /// Every command, sorted by name.
    pub fn sorted(&self) -> Vec<&Command> {
        let mut all: Vec<&Command> = self.entries.values().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The number of commands.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Collects `*.md` files under `dir` recursively, sorted within each
/// folder, links followed (each real folder once); `prefix` is `dir`'s
/// name relative to the command folder.
fn collect(
    dir: &Path,
    prefix: &str,
    visited: &mut HashSet<PathBuf>,
    files: &mut Vec<(PathBuf, String)>,
) {
    if let Ok(real) = std::fs::canonicalize(dir)
        && !visited.insert(real)
    {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(&path, &format!("{prefix}{name}/"), visited, files);
        } else if meta.is_file()
            && let Some(stem) = name.strip_suffix(".md")
        {
            files.push((path, format!("{prefix}{stem}")));
        }
    }
}

/// One markdown command file.
fn read_command_file(path: &Path, name: &str) -> Result<Command, String> {
    let text = crate::bounded_read::read_text(path).map_err(|e| format!("cannot read: {e}"))?;
    let document = parse_markdown(&text).map_err(|e| e.to_string())?;
    let mut object = document.front_matter;
    object.insert(
        "template".to_string(),
        Value::String(document.body.trim().to_string()),
    );
    Command::from_object(name, &object, CommandSource::File(path.to_path_buf()))
}
