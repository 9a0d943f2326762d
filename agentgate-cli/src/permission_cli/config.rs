//! Reading opencode-format configuration files (`opencode.json`,
//! `opencode.jsonc`) for the `agent permission` commands.
//!
//! Every error names the file, the key path and the form that was expected,
//! so the user can fix the file without reading source code.

use std::fmt;
use std::path::{Path, PathBuf};

use agentgate_permission::PermissionConfig;
use agentgate_permission::describe_value;
use serde_json::{Map, Value};

/// The file names looked up in the current directory when no `--config`
/// is given, in opencode's load order (later files win on conflicting keys).
pub const DEFAULT_FILES: [&str; 2] = ["opencode.jsonc", "opencode.json"];

/// An error reading the project (its configuration files, agents and
/// rules) the user can act on: the message says what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectError(pub String);

impl fmt::Display for ProjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProjectError {}

impl From<String> for ProjectError {
    fn from(message: String) -> Self {
        ProjectError(message)
    }
}

/// One loaded configuration: the decoded JSON object and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFile {
    /// The files read, in load order (one, or both default files).
    pub paths: Vec<PathBuf>,
    /// The decoded top-level object (both default files deep-merged).
    pub value: Map<String, Value>,
}

impl ConfigFile {
    /// The file names joined with `+`, as used in layer names
    /// (`user:opencode.json`).
    pub fn display_name(&self) -> String {
        self.paths
            .iter()
            .map(|p| file_name(p))
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The paths as given, joined with `, `, for the layer's `source`.
    pub fn source(&self) -> String {
        self.paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The user's `permission` config, with opencode's legacy top-level
    /// `tools: {name: bool}` folded in underneath it (§3.3); `None` when
    /// the file has neither key.
    pub fn permission(&self) -> Result<Option<PermissionConfig>, ProjectError> {
        self.permission_at(&self.value, "permission")
    }

    fn permission_at(
        &self,
        object: &Map<String, Value>,
        path: &str,
    ) -> Result<Option<PermissionConfig>, ProjectError> {
        let tools_path = match path.strip_suffix("permission") {
            Some(parent) => format!("{parent}tools"),
            None => "tools".to_string(),
        };
        let legacy = match object.get("tools") {
            Some(tools) => Some(self.legacy_tools(tools, &tools_path)?),
            None => None,
        };
        let explicit = object.get("permission");
        let merged = match (legacy, explicit) {
            (None, None) => return Ok(None),
            (Some(legacy), None) => legacy,
            (None, Some(explicit)) => explicit.clone(),
            (Some(mut legacy), Some(explicit)) => {
                merge_deep(&mut legacy, explicit);
                legacy
            }
        };
        PermissionConfig::from_value(&merged, path)
            .map(Some)
            .map_err(|e| ProjectError(format!("{}: {e}", self.source())))
    }

    /// `tools: {write: false}` → `{edit: "deny"}` (§3.3).
    fn legacy_tools(&self, tools: &Value, path: &str) -> Result<Value, ProjectError> {
        let Value::Object(tools) = tools else {
            return Err(self.error(path, "an object of tool name → true/false", tools));
        };
        let mut out = Map::new();
        for (name, on) in tools {
            let Value::Bool(on) = on else {
                return Err(self.error(&format!("{path}.{name}"), "true or false", on));
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

    fn error(&self, path: &str, expected: &str, found: &Value) -> ProjectError {
        ProjectError(format!(
            "{}: invalid config at {path}: expected {expected}, found {}",
            self.source(),
            describe_value(found)
        ))
    }
}

/// The last component of a path, or the whole path when it has none.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// remeda's `mergeDeep` as opencode uses it (§3.3): agentgate-core's
/// [`merge_value`](agentgate_core::agent_defaults::merge_value).
pub fn merge_deep(base: &mut Value, over: &Value) {
    agentgate_core::agent_defaults::merge_value(base, over);
}

/// Reads and decodes one config file (JSON with optional comments and
/// trailing commas).
pub fn read_file(path: &Path) -> Result<Map<String, Value>, ProjectError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ProjectError(format!("{shown}: cannot read the config file: {e}")))?;
    parse_text(&text, &shown.to_string())
}

/// Decodes config text (JSONC) with agentgate-core's
/// [`parse_config_text`](agentgate_core::config_text::parse_config_text); `name` is used in
/// error messages.
pub fn parse_text(text: &str, name: &str) -> Result<Map<String, Value>, ProjectError> {
    agentgate_core::config_text::parse_config_text(text, name)
        .map_err(|e| ProjectError(e.to_string()))
}

/// Loads `--config FILE` when given; otherwise `opencode.jsonc` and
/// `opencode.json` from `dir` (deep-merged, `opencode.json` last, as
/// opencode does); `None` when there is nothing to load.
pub fn load(explicit: Option<&Path>, dir: &Path) -> Result<Option<ConfigFile>, ProjectError> {
    if let Some(path) = explicit {
        return Ok(Some(ConfigFile {
            paths: vec![path.to_path_buf()],
            value: read_file(path)?,
        }));
    }
    let mut paths = Vec::new();
    let mut merged = Value::Object(Map::new());
    for name in DEFAULT_FILES {
        let path = dir.join(name);
        if path.is_file() {
            let value = read_file(&path)?;
            merge_deep(&mut merged, &Value::Object(value));
            paths.push(PathBuf::from(name));
        }
    }
    if paths.is_empty() {
        return Ok(None);
    }
    let value = match merged {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Ok(Some(ConfigFile { paths, value }))
}

/// The home directory used for `~` / `$HOME` expansion, or an error that
/// says how to set it.
pub fn home() -> Result<String, ProjectError> {
    agentgate_permission::home_dir().ok_or_else(|| {
        ProjectError(
            "cannot expand ~ in permission patterns: set the HOME environment variable".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentgate_permission::{Action, from_config_with_home};

    fn config(text: &str) -> ConfigFile {
        ConfigFile {
            paths: vec![PathBuf::from("opencode.json")],
            value: parse_text(text, "opencode.json").unwrap(),
        }
    }

    #[test]
    fn legacy_tools_go_under_permission() {
        let c =
            config(r#"{"tools": {"write": false, "bash": true}, "permission": {"bash": "ask"}}"#);
        let rules = from_config_with_home(&c.permission().unwrap().unwrap(), "/h");
        let got: Vec<_> = rules
            .iter()
            .map(|r| (r.permission.as_str(), r.action))
            .collect();
        assert_eq!(got, [("edit", Action::Deny), ("bash", Action::Ask)]);
    }

    #[test]
    fn errors_name_file_path_and_form() {
        let c = config(r#"{"permission": {"bash": {"rm *": "nope"}}}"#);
        let err = c.permission().unwrap_err().0;
        assert!(err.starts_with("opencode.json: "), "{err}");
        assert!(err.contains("permission.bash[\"rm *\"]"), "{err}");
        assert!(err.contains("\"allow\", \"deny\" or \"ask\""), "{err}");
        let c = config(r#"{"tools": {"bash": "yes"}}"#);
        let err = c.permission().unwrap_err().0;
        assert!(err.contains("tools.bash: expected true or false"), "{err}");
        let err = parse_text("[1]", "x.json").unwrap_err().0;
        assert!(err.contains("x.json") && err.contains("top level"), "{err}");
        let err = parse_text("{\"a\": }", "x.json").unwrap_err().0;
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn merge_deep_keeps_positions() {
        let mut a: Value = serde_json::from_str(r#"{"x": {"a": 1, "b": 2}, "y": 1}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"z": 0, "x": {"b": 3, "c": 4}}"#).unwrap();
        merge_deep(&mut a, &b);
        assert_eq!(a.to_string(), r#"{"x":{"a":1,"b":3,"c":4},"y":1,"z":0}"#);
    }
}
