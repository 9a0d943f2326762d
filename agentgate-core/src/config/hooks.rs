//! The `hooks` key: shell-command hooks in Claude Code's layout. Not an
//! opencode key (opencode has plugins instead); this SDK's extension,
//! documented in `docs/hooks.md`.
//!
//! ```json
//! {"hooks": {
//!   "trust_project": false,
//!   "PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 10}]}]
//! }}
//! ```
//!
//! Hooks are commands that run without an ask, so where they come from
//! matters: the user's layers (the global directory, `OPENCODE_CONFIG`,
//! `~/.opencode`, `OPENCODE_CONFIG_CONTENT`) always count; a project's
//! layers (`opencode.json` from the worktree down, its `.opencode`
//! folders) — which a cloned repository controls — count only when a user
//! layer sets `hooks.trust_project: true`, and are otherwise left out
//! with a warning. Every layer's hooks add up (none replaces another's).

use std::time::Duration;

use agentgate_permission::describe_value;
use serde_json::Value;

use super::error::{ConfigError, ConfigWarning};
use crate::hooks::{HookEventName, ShellHook, ToolMatcher};

/// One command of the `hooks` key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookConfig {
    /// The event it runs at.
    pub event: HookEventName,
    /// Its matcher (tool events), as written.
    pub matcher: Option<String>,
    /// The shell command.
    pub command: String,
    /// Its time limit (`timeout`, seconds), if set.
    pub timeout: Option<Duration>,
    /// The file it came from.
    pub file: String,
}

impl HookConfig {
    /// The hook that runs it.
    pub fn to_hook(&self) -> ShellHook {
        let mut hook = ShellHook::new(self.event, self.command.clone());
        if let Some(matcher) = &self.matcher {
            hook = hook.matcher(ToolMatcher::new(matcher));
        }
        if let Some(timeout) = self.timeout {
            hook = hook.timeout(timeout);
        }
        hook
    }
}

/// The `hooks` of every layer read so far, with where they came from.
#[derive(Debug, Default)]
pub(super) struct LayeredHooks {
    /// (from a project layer, the hooks).
    entries: Vec<(bool, HookConfig)>,
    /// A user layer set `trust_project: true`.
    trust_project: bool,
}

impl LayeredHooks {
    /// Reads the `hooks` value of `file` (a project layer when `project`).
    pub(super) fn add(
        &mut self,
        value: &Value,
        file: &str,
        project: bool,
        errors: &mut Vec<ConfigError>,
    ) {
        let Value::Object(events) = value else {
            errors.push(ConfigError::new(
                file,
                "hooks",
                format!(
                    "expected an object of event name → list of hook entries, found {}",
                    describe_value(value)
                ),
            ));
            return;
        };
        for (key, entries) in events {
            if key == "trust_project" {
                match entries {
                    Value::Bool(trust) => {
                        // A project cannot vouch for itself.
                        if !project {
                            self.trust_project |= *trust;
                        }
                    }
                    other => errors.push(ConfigError::new(
                        file,
                        "hooks.trust_project",
                        format!("expected true or false, found {}", describe_value(other)),
                    )),
                }
                continue;
            }
            let Some(event) = HookEventName::parse(key) else {
                let known: Vec<&str> = HookEventName::ALL.iter().map(|e| e.as_str()).collect();
                errors.push(ConfigError::new(
                    file,
                    format!("hooks.{key}"),
                    format!(
                        "not a hook event this engine has: use one of {}, or trust_project",
                        known.join(", ")
                    ),
                ));
                continue;
            };
            let Value::Array(entries) = entries else {
                errors.push(ConfigError::new(
                    file,
                    format!("hooks.{key}"),
                    format!(
                        "expected a list of {{\"matcher\", \"hooks\"}} entries, found {}",
                        describe_value(entries)
                    ),
                ));
                continue;
            };
            for (index, entry) in entries.iter().enumerate() {
                let path = format!("hooks.{key}[{index}]");
                for hook in parse_entry(event, entry, &path, file, errors) {
                    self.entries.push((project, hook));
                }
            }
        }
    }

    /// The hooks that count, and a warning per project file left out.
    pub(super) fn finish(self, warnings: &mut Vec<ConfigWarning>) -> Vec<HookConfig> {
        let mut left_out: Vec<String> = Vec::new();
        let mut hooks = Vec::new();
        for (project, hook) in self.entries {
            if project && !self.trust_project {
                if !left_out.contains(&hook.file) {
                    left_out.push(hook.file.clone());
                }
            } else {
                hooks.push(hook);
            }
        }
        for file in left_out {
            warnings.push(ConfigWarning {
                file,
                path: "hooks".into(),
                message: "not run: a project's hooks are commands that would run without an \
                          ask and the project is not trusted; `agent trust` enables them (or set \
                          \"hooks\": {\"trust_project\": true} in your user config, \
                          ~/.config/opencode/opencode.json)"
                    .into(),
            });
        }
        hooks
    }
}

/// The commands of one `{"matcher", "hooks"}` entry.
fn parse_entry(
    event: HookEventName,
    entry: &Value,
    path: &str,
    file: &str,
    errors: &mut Vec<ConfigError>,
) -> Vec<HookConfig> {
    let Value::Object(entry) = entry else {
        errors.push(ConfigError::new(
            file,
            path,
            format!(
                "expected {{\"matcher\": …, \"hooks\": [...]}}, found {}",
                describe_value(entry)
            ),
        ));
        return Vec::new();
    };
    for key in entry.keys() {
        if key != "matcher" && key != "hooks" {
            errors.push(ConfigError::new(
                file,
                format!("{path}.{key}"),
                "unknown key: an entry has `matcher` and `hooks`",
            ));
        }
    }
    let matcher = match entry.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => {
            errors.push(ConfigError::new(
                file,
                format!("{path}.matcher"),
                format!(
                    "expected tool names such as \"bash|edit\", found {}",
                    describe_value(other)
                ),
            ));
            return Vec::new();
        }
    };
    let Some(Value::Array(commands)) = entry.get("hooks") else {
        errors.push(ConfigError::new(
            file,
            format!("{path}.hooks"),
            "expected a list of {\"type\": \"command\", \"command\": …} objects",
        ));
        return Vec::new();
    };
    commands
        .iter()
        .enumerate()
        .filter_map(|(index, command)| {
            let path = format!("{path}.hooks[{index}]");
            parse_command(event, matcher.as_deref(), command, &path, file, errors)
        })
        .collect()
}

/// One command of an entry's `hooks` list (`path`), with the entry's
/// `matcher`; `None`, with the reason in `errors`, when it is not a
/// command hook.
fn parse_command(
    event: HookEventName,
    matcher: Option<&str>,
    command: &Value,
    path: &str,
    file: &str,
    errors: &mut Vec<ConfigError>,
) -> Option<HookConfig> {
    let Value::Object(command) = command else {
        errors.push(ConfigError::new(
            file,
            path,
            format!(
                "expected {{\"type\": \"command\", \"command\": …}}, found {}",
                describe_value(command)
            ),
        ));
        return None;
    };
    match command.get("type") {
        None => {}
        Some(Value::String(t)) if t == "command" => {}
        Some(other) => {
            errors.push(ConfigError::new(
                file,
                format!("{path}.type"),
                format!(
                    "only \"command\" hooks are supported, found {}",
                    describe_value(other)
                ),
            ));
            return None;
        }
    }
    for key in command.keys() {
        if !["type", "command", "timeout"].contains(&key.as_str()) {
            errors.push(ConfigError::new(
                file,
                format!("{path}.{key}"),
                "unknown key: a hook has `type`, `command` and `timeout` (seconds)",
            ));
        }
    }
    let Some(Value::String(text)) = command
        .get("command")
        .filter(|c| c.as_str().is_some_and(|c| !c.trim().is_empty()))
    else {
        errors.push(ConfigError::new(
            file,
            format!("{path}.command"),
            "expected the shell command to run, as a non-empty string",
        ));
        return None;
    };
    let timeout = match command.get("timeout") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_f64().filter(|s| *s > 0.0 && s.is_finite()) {
            Some(seconds) => Some(Duration::from_secs_f64(seconds.min(86_400.0))),
            None => {
                errors.push(ConfigError::new(
                    file,
                    format!("{path}.timeout"),
                    format!(
                        "expected a number of seconds above 0, found {}",
                        describe_value(value)
                    ),
                ));
                return None;
            }
        },
    };
    Some(HookConfig {
        event,
        matcher: matcher.map(str::to_string),
        command: text.clone(),
        timeout,
        file: file.to_string(),
    })
}
