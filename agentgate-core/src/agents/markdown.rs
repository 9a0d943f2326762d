//! Markdown agents (opencode §9.4): agents defined as markdown files with a
//! YAML front-matter.
//!
//! ```text
//! .opencode/agent/review.md          → agent "review"
//! .opencode/agents/team/review.md    → agent "team/review"
//! .opencode/mode/focus.md            → agent "focus", forced to mode primary
//! ```
//!
//! A file is `---`, the front-matter, `---`, then the body. The front-matter
//! fields are the agent's config (the same fields as an `agent.<name>` entry
//! of `opencode.json`, normalised by [`AgentConfig::from_value`]: legacy
//! `tools`, `maxSteps`, unknown keys → `options`); the trimmed body becomes
//! the `prompt` (it replaces a `prompt` field of the front-matter, as in
//! opencode); an explicit `name` field overrides the name derived from the
//! path. Key order is kept throughout — the order of `permission` entries
//! decides which rule wins.
//!
//! Front-matter that is not valid YAML is parsed a second time after
//! [`sanitize_front_matter`] has rewritten top-level unquoted values that
//! contain a colon (`description: Reviews code: style and bugs`) as block
//! scalars, as opencode does for files written for other tools. A file that
//! still fails, cannot be read or has invalid fields is reported as a
//! [`MarkdownAgentError`] and skipped; the other files still load.
//!
//! ```
//! use agentgate_core::{agent_files::{MarkdownKind, parse_markdown_agent}};
//! use agentgate_core::permission::{Action, PermissionConfig};
//!
//! let text = "---\ndescription: Reviews code: style and bugs\nmode: subagent\ntools:\n  write: false\n---\nYou review code.\n";
//! let agent = parse_markdown_agent("agent/review.md", text, MarkdownKind::Agent).unwrap();
//! assert_eq!(agent.name, "review");
//! assert!(agent.recovered); // the colon in the description needed the retry
//! assert_eq!(agent.config.description.as_deref(), Some("Reviews code: style and bugs"));
//! assert_eq!(agent.config.prompt.as_deref(), Some("You review code."));
//! let expected: PermissionConfig = serde_json::from_str(r#"{"edit": "deny"}"#).unwrap();
//! assert_eq!(agent.config.permission, Some(expected));
//! ```

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

use super::config::{AgentConfig, merge_agent_config};
use agentgate_permission::ConfigError;

/// The subdirectories of a config directory scanned recursively for agent
/// files (`{agent,agents}/**/*.md`).
pub const AGENT_DIRS: [&str; 2] = ["agent", "agents"];

/// The subdirectories of a config directory whose `*.md` files (not
/// recursive) are agents forced to `mode: primary` (`{mode,modes}/*.md`).
pub const MODE_DIRS: [&str; 2] = ["mode", "modes"];

/// Where a markdown agent file was found, which decides its name prefix and
/// whether its mode is forced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkdownKind {
    /// `agent/` or `agents/` (recursive): fields as written.
    Agent,
    /// `mode/` or `modes/` (legacy): `mode` is forced to `primary`.
    Mode,
}

impl MarkdownKind {
    fn prefixes(self) -> [&'static str; 2] {
        match self {
            MarkdownKind::Agent => ["agent/", "agents/"],
            MarkdownKind::Mode => ["mode/", "modes/"],
        }
    }
}

/// A markdown document split into its front-matter and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkdownDocument {
    /// The front-matter fields in file order (empty without front-matter).
    pub front_matter: Map<String, Value>,
    /// Everything after the closing `---` line (the whole text when there is
    /// no front-matter), untrimmed.
    pub body: String,
    /// Whether the front-matter only parsed after [`sanitize_front_matter`].
    pub recovered: bool,
}

/// Front-matter that is not valid YAML, or not a mapping, even after the
/// colon retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FrontMatterError {
    /// What is wrong and where, with the line number in the file.
    pub message: String,
}

/// Why a markdown agent file was skipped. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MarkdownAgentError {
    /// The file or a directory could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The front-matter is not valid YAML, also after quoting values that
    /// contain a colon, or is not a mapping.
    #[error(
        "{path}: invalid YAML front-matter: {source}; quote values that contain `: ` or `#`, and indent nested fields consistently"
    )]
    FrontMatter {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: FrontMatterError,
    },
    /// A front-matter field has the wrong type or value.
    #[error("{path}: {}: expected {}, found {}", source.path, source.expected, source.found)]
    Field {
        /// The file.
        path: PathBuf,
        /// The field, the expected form and what was found.
        source: ConfigError,
    },
}

impl MarkdownAgentError {
    /// The file (or directory) the error is about.
    pub fn path(&self) -> &Path {
        match self {
            MarkdownAgentError::Read { path, .. }
            | MarkdownAgentError::FrontMatter { path, .. }
            | MarkdownAgentError::Field { path, .. } => path,
        }
    }
}

/// One parsed markdown agent file.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkdownAgent {
    /// The agent's name: the front-matter's `name`, else derived from the
    /// path (`agents/team/review.md` → `team/review`).
    pub name: String,
    /// The file; relative to the scanned directory when it came from
    /// [`parse_markdown_agent`], joined to it when it came from a scan.
    pub path: PathBuf,
    /// The normalised config (body as `prompt`, `name` always set).
    pub config: AgentConfig,
    /// Whether the front-matter only parsed after the colon retry.
    pub recovered: bool,
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

/// Splits `text` into front-matter and body as gray-matter does: the text
/// must start with a `---` line (not `----`), and the front-matter ends at
/// the next line that is `---`; without a closing line everything after the
/// opening line is front-matter. `None` when there is no front-matter.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.starts_with("---") || text.starts_with("----") {
        return None;
    }
    let Some(first_end) = text.find('\n') else {
        // `---` alone: empty front-matter, empty body.
        return Some(("", ""));
    };
    let start = first_end + 1;
    let mut pos = start;
    while pos <= text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = &text[pos..end];
        if line.trim_end() == "---" {
            let body_start = (end + 1).min(text.len());
            return Some((&text[start..pos], &text[body_start..]));
        }
        pos = end + 1;
    }
    Some((&text[start..], ""))
}

/// opencode's fallback for front-matter written for more permissive tools:
/// every top-level `key: value` line whose value is unquoted, not a block
/// scalar indicator (`|`, `>`) and contains a colon becomes `key: |-`
/// followed by the value indented on the next line. Comments, blank lines
/// and indented lines are kept as they are. `yaml` is the front-matter text
/// without the `---` lines.
pub fn sanitize_front_matter(yaml: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in yaml.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trimmed = line.trim();
        let keep = trimmed.is_empty()
            || trimmed.starts_with('#')
            || line.starts_with(|c: char| c.is_whitespace());
        let rewritten = if keep { None } else { colon_value(line) };
        match rewritten {
            Some((key, value)) => {
                out.push(format!("{key}: |-"));
                out.push(format!("  {value}"));
            }
            None => out.push(line.to_string()),
        }
    }
    out.join("\n")
}

/// `Some((key, value))` when `line` is `identifier: value` (spaces allowed
/// before the colon) and the value needs the block-scalar rewrite.
fn colon_value(line: &str) -> Option<(&str, &str)> {
    let key_end = line
        .char_indices()
        .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
        .map_or(line.len(), |(i, _)| i);
    if key_end == 0 {
        return None;
    }
    let (key, rest) = line.split_at(key_end);
    let value = rest.trim_start().strip_prefix(':')?.trim();
    let skip = value.is_empty()
        || value == "|"
        || value == ">"
        || value.starts_with('"')
        || value.starts_with('\'');
    (!skip && value.contains(':')).then_some((key, value))
}

/// Parses YAML front-matter text into a JSON object, keeping key order.
/// `first_line` is the file line of the front-matter's first line, for
/// error messages.
fn parse_yaml(yaml: &str, first_line: usize) -> Result<Map<String, Value>, FrontMatterError> {
    check_nesting(yaml, first_line)?;
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| {
        let mark = e.marker();
        FrontMatterError {
            message: format!(
                "{} at line {} column {}",
                e.info(),
                mark.line() + first_line - 1,
                mark.col() + 1
            ),
        }
    })?;
    let Some(doc) = docs.into_iter().next() else {
        return Ok(Map::new());
    };
    match yaml_to_json(&doc)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(FrontMatterError {
            message: format!(
                "expected `field: value` lines, found {}",
                match other {
                    Value::Array(_) => "a list".to_string(),
                    other => format!("the scalar {other}"),
                }
            ),
        }),
    }
}

/// How deeply front matter may nest lists and mappings. An agent needs
/// three or four levels (`permission: bash: "git *": allow`); the tree is
/// built, converted and dropped recursively, so a few kilobytes of nesting
/// (`a: {a: {a: …`) would overflow the stack in every run of the project.
pub const MAX_FRONT_MATTER_DEPTH: usize = 32;

/// Refuses front matter nested deeper than [`MAX_FRONT_MATTER_DEPTH`],
/// counted on the parser's events (no tree is built).
fn check_nesting(yaml: &str, first_line: usize) -> Result<(), FrontMatterError> {
    use yaml_rust2::parser::{Event, Parser};
    let mut parser = Parser::new_from_str(yaml);
    let mut depth = 0usize;
    loop {
        // A syntax error is left to the loader, which reports it fully.
        let Ok((event, mark)) = parser.next_token() else {
            return Ok(());
        };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_FRONT_MATTER_DEPTH {
                    return Err(FrontMatterError {
                        message: format!(
                            "nested more than {MAX_FRONT_MATTER_DEPTH} levels deep at line {} column {}",
                            mark.line() + first_line - 1,
                            mark.col() + 1
                        ),
                    });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            Event::StreamEnd => return Ok(()),
            _ => {}
        }
    }
}

/// Converts a YAML node to JSON: integers and floats become numbers (a
/// float JSON cannot hold, like `.inf`, becomes null), mapping keys become
/// strings (`1: x` → `"1"`), order is kept. Private so that the YAML crate
/// stays out of the public API.
fn yaml_to_json(yaml: &Yaml) -> Result<Value, FrontMatterError> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Integer(i) => Value::Number((*i).into()),
        Yaml::Real(_) => yaml
            .as_f64()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Array(items) => {
            Value::Array(items.iter().map(yaml_to_json).collect::<Result<_, _>>()?)
        }
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let key = match key {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => "null".to_string(),
                    _ => {
                        return Err(FrontMatterError {
                            message: "a mapping key is a list or a mapping; keys must be plain words or strings".to_string(),
                        });
                    }
                };
                map.insert(key, yaml_to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(FrontMatterError {
                message: "unresolved alias or invalid value".to_string(),
            });
        }
    })
}

/// Splits a markdown text into front-matter and body and parses the
/// front-matter as YAML, retrying once after [`sanitize_front_matter`] when
/// the first parse fails. The error reports the first parse's failure (its
/// line numbers refer to the file as written).
pub fn parse_markdown(text: &str) -> Result<MarkdownDocument, FrontMatterError> {
    let Some((yaml, body)) = split_front_matter(text) else {
        return Ok(MarkdownDocument {
            front_matter: Map::new(),
            body: text.to_string(),
            recovered: false,
        });
    };
    let first_line = 2;
    match parse_yaml(yaml, first_line) {
        Ok(front_matter) => Ok(MarkdownDocument {
            front_matter,
            body: body.to_string(),
            recovered: false,
        }),
        Err(first) => {
            let sanitized = sanitize_front_matter(yaml);
            match parse_yaml(&sanitized, first_line) {
                Ok(front_matter) if sanitized != yaml => Ok(MarkdownDocument {
                    front_matter,
                    body: body.to_string(),
                    recovered: true,
                }),
                _ => Err(first),
            }
        }
    }
}

/// Parses one markdown agent file. `relative_path` is the file's path
/// relative to the scanned config directory (`agents/team/review.md`); it
/// gives the default name. For [`MarkdownKind::Mode`] the mode is forced to
/// `primary`.
pub fn parse_markdown_agent(
    relative_path: &str,
    text: &str,
    kind: MarkdownKind,
) -> Result<MarkdownAgent, MarkdownAgentError> {
    let path = PathBuf::from(relative_path);
    let doc = parse_markdown(text).map_err(|source| MarkdownAgentError::FrontMatter {
        path: path.clone(),
        source,
    })?;
    let derived = agent_name_from_path(relative_path, &kind.prefixes());
    // opencode: `{name, ...frontMatter, prompt: body.trim()}`.
    let mut object = Map::new();
    object.insert("name".to_string(), Value::String(derived.clone()));
    object.extend(doc.front_matter);
    object.insert(
        "prompt".to_string(),
        Value::String(doc.body.trim().to_string()),
    );
    if kind == MarkdownKind::Mode {
        object.insert("mode".to_string(), Value::String("primary".to_string()));
    }
    let config =
        AgentConfig::from_value(&Value::Object(object), "front-matter").map_err(|source| {
            MarkdownAgentError::Field {
                path: path.clone(),
                source,
            }
        })?;
    let name = config.name.clone().unwrap_or(derived);
    Ok(MarkdownAgent {
        name,
        path,
        config,
        recovered: doc.recovered,
    })
}

/// Collects `*.md` files under `dir` (recursively when `recursive`), sorted
/// by path within each directory, dotfiles included, symlinks followed
/// (each real directory visited once). `relative` is `dir`'s path relative
/// to the scanned config directory, with `/` separators.
fn collect_markdown(
    dir: &Path,
    relative: &str,
    recursive: bool,
    visited: &mut HashSet<PathBuf>,
    files: &mut Vec<(PathBuf, String)>,
    errors: &mut Vec<MarkdownAgentError>,
) {
    if let Ok(real) = std::fs::canonicalize(dir)
        && !visited.insert(real)
    {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            errors.push(MarkdownAgentError::Read {
                path: dir.to_path_buf(),
                source,
            });
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    let mut subdirs = Vec::new();
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{relative}/{name}");
        // `metadata` follows symlinks; a dangling link is skipped.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if recursive {
                subdirs.push((path, rel));
            }
        } else if meta.is_file() && name.ends_with(".md") {
            files.push((path, rel));
        }
    }
    for (path, rel) in subdirs {
        collect_markdown(&path, &rel, recursive, visited, files, errors);
    }
}

/// Parses every markdown agent of one config directory (`dir` is e.g.
/// `.opencode`): `{agent,agents}/**/*.md`, then `{mode,modes}/*.md`, each in
/// path order. Files that fail are returned as errors; a missing
/// subdirectory is not an error.
pub fn scan_markdown_agents(dir: &Path) -> (Vec<MarkdownAgent>, Vec<MarkdownAgentError>) {
    let mut agents = Vec::new();
    let mut errors = Vec::new();
    let groups = [
        (AGENT_DIRS, MarkdownKind::Agent, true),
        (MODE_DIRS, MarkdownKind::Mode, false),
    ];
    for (subdirs, kind, recursive) in groups {
        let mut files = Vec::new();
        let mut visited = HashSet::new();
        for sub in subdirs {
            let path = dir.join(sub);
            if path.is_dir() {
                collect_markdown(&path, sub, recursive, &mut visited, &mut files, &mut errors);
            }
        }
        for (path, relative) in files {
            let text = match crate::bounded_read::read_text(&path) {
                Ok(text) => text,
                Err(source) => {
                    errors.push(MarkdownAgentError::Read { path, source });
                    continue;
                }
            };
            match parse_markdown_agent(&relative, &text, kind) {
                Ok(mut agent) => {
                    agent.path = path;
                    agents.push(agent);
                }
                Err(mut error) => {
                    set_path(&mut error, path);
                    errors.push(error);
                }
            }
        }
    }
    (agents, errors)
}

fn set_path(error: &mut MarkdownAgentError, new: PathBuf) {
    match error {
        MarkdownAgentError::Read { path, .. }
        | MarkdownAgentError::FrontMatter { path, .. }
        | MarkdownAgentError::Field { path, .. } => *path = new,
    }
}

/// The markdown agents of one config directory, merged by name with
/// [`merge_agent_config`] in scan order, ready for
/// [`Agents::from_config`](crate::agents::Agents::from_config); plus the files
/// that were skipped.
pub fn load_markdown_agents(
    dir: &Path,
) -> (IndexMap<String, AgentConfig>, Vec<MarkdownAgentError>) {
    load_markdown_agents_from(&[dir])
}

/// [`load_markdown_agents`] over several config directories, lowest
/// precedence first: the agents are deep-merged directory by directory, so a
/// later directory wins per field (per entry inside `permission` and
/// `options`), and a name first seen in an earlier directory keeps its
/// position. Within one directory, agent files come before mode files and a
/// name that occurs twice is merged the same way.
pub fn load_markdown_agents_from<P: AsRef<Path>>(
    dirs: &[P],
) -> (IndexMap<String, AgentConfig>, Vec<MarkdownAgentError>) {
    let mut merged: IndexMap<String, AgentConfig> = IndexMap::new();
    let mut errors = Vec::new();
    for dir in dirs {
        let (agents, errs) = scan_markdown_agents(dir.as_ref());
        errors.extend(errs);
        for agent in agents {
            match merged.get_mut(&agent.name) {
                Some(base) => merge_agent_config(base, &agent.config),
                None => {
                    merged.insert(agent.name, agent.config);
                }
            }
        }
    }
    (merged, errors)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::agent::AgentMode;
    use super::*;
    use agentgate_permission::Action;
    use agentgate_permission::PermissionConfig;

    #[test]
    fn deep_front_matter_is_refused_not_a_stack_overflow() {
        let block = {
            let mut text = String::from("---\n");
            for i in 0..1000 {
                text.push_str(&" ".repeat(i));
                text.push_str("a:\n");
            }
            text + "---\nBody."
        };
        for text in [
            format!(
                "---\na: {}{}\n---\nBody.",
                "[".repeat(3000),
                "]".repeat(3000)
            ),
            format!(
                "---\na:\n  - {}1{}\n---\nBody.",
                "{a: ".repeat(1500),
                "}".repeat(1500)
            ),
            block,
        ] {
            let error = parse_markdown(&text).expect_err("refused");
            assert!(
                error.message.contains("levels deep") || error.message.contains("recursion"),
                "{error:?}"
            );
        }
        // Ordinary nesting still parses.
        let fine = "---\npermission:\n  bash:\n    \"git *\": allow\n---\nBody.";
        assert!(parse_markdown(fine).is_ok());
    }

    fn agent(path: &str, text: &str) -> MarkdownAgent {
        parse_markdown_agent(path, text, MarkdownKind::Agent).unwrap()
    }

    fn permission_json(config: &AgentConfig) -> String {
        serde_json::to_string(config.permission.as_ref().unwrap()).unwrap()
    }

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentgate-core-md-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
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
    fn nested_permission_maps_keep_their_order() {
        let a = agent(
            "agent/review.md",
            "---\npermission:\n  \"*\": ask\n  edit: deny\n  bash:\n    \"*\": ask\n    \"git status*\": allow\n    \"git *\": deny\n  read: allow\n---\nbody\n",
        );
        assert_eq!(
            permission_json(&a.config),
            r#"{"*":"ask","edit":"deny","bash":{"*":"ask","git status*":"allow","git *":"deny"},"read":"allow"}"#
        );
        let rules = agentgate_permission::from_config(a.config.permission.as_ref().unwrap());
        let order: Vec<_> = rules
            .iter()
            .map(|r| format!("{} {}", r.permission, r.pattern))
            .collect();
        assert_eq!(
            order,
            [
                "* *",
                "edit *",
                "bash *",
                "bash git status*",
                "bash git *",
                "read *"
            ]
        );
    }

    #[test]
    fn legacy_tools_write_false_becomes_edit_deny() {
        let a = agent(
            "agent/r.md",
            "---\ntools:\n  write: false\n  bash: true\nmaxSteps: 7\nreasoningEffort: high\n---\n",
        );
        assert_eq!(
            permission_json(&a.config),
            r#"{"edit":"deny","bash":"allow"}"#
        );
        assert_eq!(a.config.steps, Some(7));
        assert_eq!(a.config.options["reasoningEffort"], "high");
        // An empty body is an empty prompt, as in opencode.
        assert_eq!(a.config.prompt.as_deref(), Some(""));
    }

    #[test]
    fn colon_in_value_is_recovered_by_the_retry() {
        let text =
            "---\ndescription: Use when: reviewing code\nmode: subagent\n---\n\n  Review it.\n\n";
        let a = agent("agents/review.md", text);
        assert!(a.recovered);
        assert_eq!(
            a.config.description.as_deref(),
            Some("Use when: reviewing code")
        );
        assert_eq!(a.config.mode, Some(AgentMode::Subagent));
        assert_eq!(a.config.prompt.as_deref(), Some("Review it."));
        // Valid YAML does not need the retry.
        let b = agent("agent/b.md", "---\ndescription: \"a: b\"\n---\nx");
        assert!(!b.recovered);
        assert_eq!(b.config.description.as_deref(), Some("a: b"));
    }

    #[test]
    fn sanitize_rewrites_only_top_level_unquoted_values_with_a_colon() {
        let input = "# c: d\na: b: c\nq: \"x: y\"\nblock: |\n  k: v\nplain: word\nkey : x:y\n";
        assert_eq!(
            sanitize_front_matter(input),
            "# c: d\na: |-\n  b: c\nq: \"x: y\"\nblock: |\n  k: v\nplain: word\nkey: |-\n  x:y\n"
        );
    }

    #[test]
    fn broken_front_matter_is_reported_with_file_and_line() {
        let err = parse_markdown_agent(
            "agent/bad.md",
            "---\ndescription: ok\npermission:\n  edit: deny\n bash: [unclosed\n---\nx",
            MarkdownKind::Agent,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("agent/bad.md: invalid YAML front-matter"),
            "{text}"
        );
        assert!(text.contains("line "), "{text}");
        assert!(matches!(err, MarkdownAgentError::FrontMatter { .. }));
    }

    #[test]
    fn bad_field_is_reported_with_its_name() {
        let err = parse_markdown_agent(
            "agent/bad.md",
            "---\nsteps: ten\n---\n",
            MarkdownKind::Agent,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("agent/bad.md") && text.contains("front-matter.steps"),
            "{text}"
        );
        let err =
            parse_markdown_agent("agent/list.md", "---\n- a\n- b\n---\n", MarkdownKind::Agent)
                .unwrap_err();
        assert!(err.to_string().contains("found a list"), "{err}");
    }

    #[test]
    fn explicit_name_overrides_and_prompt_comes_from_the_body() {
        let a = agent(
            "agents/x.md",
            "---\nname: reviewer\nprompt: ignored\n---\nfrom the body",
        );
        assert_eq!(a.name, "reviewer");
        assert_eq!(a.config.name.as_deref(), Some("reviewer"));
        assert_eq!(a.config.prompt.as_deref(), Some("from the body"));
    }

    #[test]
    fn files_without_front_matter_and_edge_delimiters() {
        let d = parse_markdown("just a prompt").unwrap();
        assert!(d.front_matter.is_empty());
        assert_eq!(d.body, "just a prompt");
        let d = parse_markdown("---\n---\nbody").unwrap();
        assert!(d.front_matter.is_empty());
        assert_eq!(d.body, "body");
        let d = parse_markdown("---\r\nmode: primary\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(d.front_matter["mode"], "primary");
        assert_eq!(d.body.trim(), "body");
        let d = parse_markdown("----\nnot front matter").unwrap();
        assert_eq!(d.body, "----\nnot front matter");
        let d =
            parse_markdown("---\ntemperature: 0.25\nsteps: 3\nhidden: true\nx: ~\n---").unwrap();
        assert_eq!(d.front_matter["temperature"], 0.25);
        assert_eq!(d.front_matter["steps"], 3);
        assert_eq!(d.front_matter["hidden"], true);
        assert_eq!(d.front_matter["x"], Value::Null);
        assert_eq!(d.body, "");
    }

    #[test]
    fn mode_files_are_forced_primary() {
        let a = parse_markdown_agent(
            "modes/focus.md",
            "---\nmode: subagent\n---\nFocus.",
            MarkdownKind::Mode,
        )
        .unwrap();
        assert_eq!(a.name, "focus");
        assert_eq!(a.config.mode, Some(AgentMode::Primary));
    }

    #[test]
    fn scan_names_nested_folders_and_reports_broken_files() {
        let dir = scratch("scan");
        write(
            &dir,
            "agents/team/review.md",
            "---\nmode: subagent\n---\nTeam review.",
        );
        write(
            &dir,
            "agent/review.md",
            "---\ndescription: Reviews\n---\nReview.",
        );
        write(&dir, "agent/.hidden.md", "Hidden file agent.");
        write(&dir, "agent/broken.md", "---\na: [\n---\n");
        write(&dir, "agent/notes.txt", "not an agent");
        write(&dir, "mode/focus.md", "Focus.");
        write(&dir, "mode/deep/ignored.md", "modes are not recursive");
        let (agents, errors) = load_markdown_agents(&dir);
        let names: Vec<&str> = agents.keys().map(String::as_str).collect();
        assert_eq!(names, [".hidden", "review", "team/review", "focus"]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].path().ends_with("agent/broken.md"));
        assert!(errors[0].to_string().contains("broken.md"));
        assert_eq!(agents["focus"].mode, Some(AgentMode::Primary));
        assert_eq!(agents["team/review"].mode, Some(AgentMode::Subagent));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_followed_once() {
        let dir = scratch("links");
        write(&dir, "shared/lint.md", "Lint.");
        write(&dir, "agents/a.md", "A.");
        std::os::unix::fs::symlink(dir.join("shared"), dir.join("agents/shared")).unwrap();
        std::os::unix::fs::symlink(dir.join("agents"), dir.join("agents/loop")).unwrap();
        let (agents, errors) = load_markdown_agents(&dir);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = agents.keys().map(String::as_str).collect();
        assert_eq!(names, ["a", "shared/lint"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn later_directories_win_per_key() {
        let global = scratch("global");
        let project = scratch("project");
        write(
            &global,
            "agent/review.md",
            "---\ndescription: global\ntemperature: 0.1\npermission:\n  edit: deny\n  bash:\n    \"*\": ask\n    \"git *\": allow\n---\nGlobal prompt.",
        );
        write(
            &project,
            "agent/review.md",
            "---\ndescription: project\npermission:\n  bash:\n    \"*\": deny\n  webfetch: allow\n---\nProject prompt.",
        );
        let (agents, errors) = load_markdown_agents_from(&[&global, &project]);
        assert!(errors.is_empty(), "{errors:?}");
        let review = &agents["review"];
        assert_eq!(review.description.as_deref(), Some("project"));
        assert_eq!(review.temperature, Some(0.1));
        assert_eq!(review.prompt.as_deref(), Some("Project prompt."));
        assert_eq!(
            permission_json(review),
            r#"{"edit":"deny","bash":{"*":"deny","git *":"allow"},"webfetch":"allow"}"#
        );
        let _ = std::fs::remove_dir_all(&global);
        let _ = std::fs::remove_dir_all(&project);
    }

    #[test]
    fn markdown_agents_feed_agents_from_config() {
        let a = agent(
            "agent/review.md",
            "---\nmode: subagent\ntools:\n  write: false\n---\nReview.",
        );
        let env = crate::agents::AgentEnvironment::new("/d", "/t", "/w");
        let mut config = IndexMap::new();
        config.insert(a.name.clone(), a.config);
        let agents =
            crate::agents::Agents::from_config(&env, &PermissionConfig::default(), &config, None);
        let review = agents.get("review").unwrap();
        assert_eq!(review.decide("edit", "a.rs"), Action::Deny);
        assert_eq!(review.mode, AgentMode::Subagent);
        assert_eq!(review.prompt.as_deref(), Some("Review."));
        assert!(!review.native);
    }

    #[test]
    fn yaml_keys_and_numbers() {
        let d =
            parse_markdown("---\noptions:\n  1: one\n  true: yes\n  big: 1.5e3\n---\n").unwrap();
        assert_eq!(
            serde_json::to_string(&d.front_matter).unwrap(),
            r#"{"options":{"1":"one","true":"yes","big":1500.0}}"#
        );
    }
}
