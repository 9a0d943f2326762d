//! Everything the commands read from disk, loaded once: without `--config`,
//! the whole configuration stack through agentgate-core's `ConfigLoader` (the
//! loader `agent run` uses); with `--config FILE`, that file and the markdown
//! agents of the `.opencode` directories beside it and in the working
//! directory, merged into one `agent` map as opencode merges its config layers
//! (§3.3, §9.4).

use std::path::{Path, PathBuf};

use agentgate_core::{AgentConfig, ConfigLoader, config_text::parse_config_text};
use agentgate_core::{agent_defaults::merge_agent_config, agent_files::scan_markdown_agents};
use indexmap::IndexMap;
use serde_json::Value;

use super::config::{self, ConfigFile};
use super::{Context, ProjectError};

/// The loaded configuration of one invocation.
#[derive(Debug, Clone)]
pub struct Project {
    /// Where it was loaded from.
    pub ctx: Context,
    /// `opencode.json(c)` or `--config FILE`, if any.
    pub config: Option<ConfigFile>,
    /// The config directories scanned for markdown agents, lowest precedence
    /// first (see [`markdown_dirs`]).
    pub markdown_dirs: Vec<PathBuf>,
    /// The agent configs by name: the config file's `agent` map, then each
    /// markdown directory's agents deep-merged over it.
    pub agents: IndexMap<String, AgentConfig>,
    /// For each agent config, the files it came from (config file names,
    /// markdown paths relative to the working directory when possible).
    pub agent_sources: IndexMap<String, Vec<String>>,
    /// The config's `default_agent`, if set.
    pub default_agent: Option<String>,
    /// Markdown agent files that were skipped, one message each (file, what
    /// is wrong); the commands still run without them.
    pub warnings: Vec<String>,
    /// The project's rules set aside because the project is not trusted
    /// (its `allow`s), one line each: key, what it would do, file.
    pub set_aside: Vec<String>,
}

/// The directories scanned for markdown agents (`agent(s)/**/*.md`,
/// `mode(s)/*.md`), lowest precedence first: `.opencode` in the working
/// directory, then the `--config` file's directory's `.opencode` (or that
/// directory itself when it is called `.opencode`). Directories that do not
/// exist are left out; one reached twice is scanned once.
pub fn markdown_dirs(explicit: Option<&Path>, dir: &Path) -> Vec<PathBuf> {
    let mut candidates = vec![dir.join(".opencode")];
    if let Some(file) = explicit {
        let parent = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let parent = if parent.is_absolute() {
            parent
        } else {
            dir.join(parent)
        };
        if parent.file_name().is_some_and(|n| n == ".opencode") {
            candidates.push(parent);
        } else {
            candidates.push(parent.join(".opencode"));
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for candidate in candidates {
        if !candidate.is_dir() {
            continue;
        }
        let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
        if !seen.contains(&real) {
            seen.push(real);
            out.push(candidate);
        }
    }
    out
}

impl Project {
    /// Loads the config file(s) and the markdown agents of
    /// [`markdown_dirs`] for `ctx`. A config file that cannot be read or
    /// parsed, or whose `agent` map is invalid, is an error; a markdown agent
    /// file with a problem becomes a warning.
    pub fn load(ctx: &Context) -> Result<Project, ProjectError> {
        if ctx.config.is_none() {
            return Project::load_stack(ctx);
        }
        let config = config::load(ctx.config.as_deref(), &ctx.dir)?;
        let mut project = Project::from_config(ctx, config)?;
        for dir in markdown_dirs(ctx.config.as_deref(), &ctx.dir) {
            project.add_markdown_dir(&dir);
        }
        Ok(project)
    }

    /// The whole configuration stack of `ctx.dir`, read by the same loader
    /// `agent run` uses (global config, `OPENCODE_CONFIG`, the project
    /// walk-up, `.opencode/`, `OPENCODE_CONFIG_CONTENT`,
    /// `OPENCODE_PERMISSION`, markdown agents), so `check` answers what
    /// `run` does.
    fn load_stack(ctx: &Context) -> Result<Project, ProjectError> {
        // The stack `agent run` and the library read (the Workspace).
        let workspace = agentgate::Workspace::with_loader(
            &ctx.dir,
            ConfigLoader::new(&ctx.dir).home(&ctx.home),
        )
        .map_err(|e| ProjectError(e.to_string()))?;
        let loaded = workspace.config();
        let config = (!loaded.files.is_empty()).then(|| ConfigFile {
            paths: loaded
                .files
                .iter()
                .map(|file| PathBuf::from(shown_path(Path::new(file), &ctx.dir)))
                .collect(),
            value: loaded.value.clone(),
        });
        let mut agent_sources: IndexMap<String, Vec<String>> = IndexMap::new();
        // Which files name each agent: the JSON layers' `agent` maps, then
        // the markdown files, in load order.
        for file in &loaded.files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            let Ok(value) = parse_config_text(&text, file) else {
                continue;
            };
            if let Some(Value::Object(agents)) = value.get("agent") {
                for name in agents.keys() {
                    agent_sources
                        .entry(name.clone())
                        .or_default()
                        .push(shown_path(Path::new(file), &ctx.dir));
                }
            }
        }
        for dir in &loaded.config_dirs {
            for agent in scan_markdown_agents(dir).0 {
                agent_sources
                    .entry(agent.name.clone())
                    .or_default()
                    .push(shown_path(&agent.path, &ctx.dir));
            }
        }
        Ok(Project {
            ctx: ctx.clone(),
            config,
            markdown_dirs: loaded.config_dirs.clone(),
            agents: loaded.agents.clone(),
            agent_sources,
            default_agent: loaded.default_agent.clone(),
            warnings: loaded.warnings.iter().map(ToString::to_string).collect(),
            set_aside: if loaded.project_trusted {
                Vec::new()
            } else {
                loaded
                    .project_risks
                    .iter()
                    .filter(|p| p.kind == agentgate_core::project_trust::RiskKind::LooserRule)
                    .map(|p| {
                        format!(
                            "{} ({})",
                            p.describe(),
                            shown_path(Path::new(&p.file), &ctx.dir)
                        )
                    })
                    .collect()
            },
        })
    }

    /// A project from an already loaded config file and no markdown agents.
    pub fn from_config(ctx: &Context, config: Option<ConfigFile>) -> Result<Project, ProjectError> {
        let mut agents = IndexMap::new();
        let mut agent_sources: IndexMap<String, Vec<String>> = IndexMap::new();
        let mut default_agent = None;
        if let Some(config) = &config {
            for (name, parsed) in json_agents(config)? {
                agent_sources
                    .entry(name.clone())
                    .or_default()
                    .push(config.display_name());
                agents.insert(name, parsed);
            }
            default_agent = match config.value.get("default_agent") {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => Some(name.clone()),
                Some(other) => {
                    return Err(ProjectError(format!(
                        "{}: invalid config at default_agent: expected an agent name, found {other}",
                        config.source()
                    )));
                }
            };
        }
        Ok(Project {
            ctx: ctx.clone(),
            config,
            markdown_dirs: Vec::new(),
            agents,
            agent_sources,
            default_agent,
            warnings: Vec::new(),
            set_aside: Vec::new(),
        })
    }

    /// Scans one more config directory for markdown agents and deep-merges
    /// them over the agents loaded so far (later directories win per field).
    pub fn add_markdown_dir(&mut self, dir: &Path) {
        let (found, errors) = scan_markdown_agents(dir);
        let base = &self.ctx.dir;
        self.warnings.extend(errors.iter().map(|e| {
            let text = e.to_string();
            let full = e.path().display().to_string();
            match text.strip_prefix(&full) {
                Some(rest) => format!("skipped {}{rest}", shown_path(e.path(), base)),
                None => format!("skipped: {text}"),
            }
        }));
        for agent in found {
            self.agent_sources
                .entry(agent.name.clone())
                .or_default()
                .push(shown_path(&agent.path, base));
            match self.agents.get_mut(&agent.name) {
                Some(existing) => merge_agent_config(existing, &agent.config),
                None => {
                    self.agents.insert(agent.name, agent.config);
                }
            }
        }
        self.markdown_dirs.push(dir.to_path_buf());
    }

    /// The files agent `name`'s config came from, joined with `+` (empty
    /// when no file configures it).
    pub fn agent_source_names(&self, name: &str) -> String {
        self.agent_sources
            .get(name)
            .map(|s| s.join("+"))
            .unwrap_or_default()
    }
}

/// `path` relative to `dir` when it lies below it, else as it is.
fn shown_path(path: &Path, dir: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The `agent.<name>` entries of the config file, normalised by agentgate-core.
fn json_agents(config: &ConfigFile) -> Result<IndexMap<String, AgentConfig>, ProjectError> {
    let mut out = IndexMap::new();
    match config.value.get("agent") {
        None | Some(Value::Null) => {}
        Some(Value::Object(agents)) => {
            for (name, value) in agents {
                let parsed = AgentConfig::from_value(value, &format!("agent.{name}"))
                    .map_err(|e| ProjectError(format!("{}: {e}", config.source())))?;
                out.insert(name.clone(), parsed);
            }
        }
        Some(other) => {
            return Err(ProjectError(format!(
                "{}: invalid config at agent: expected an object of agent name → agent config, found {}",
                config.source(),
                match other {
                    Value::Array(_) => "an array".to_string(),
                    other => other.to_string(),
                }
            )));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "agentgate-cli-project-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn ctx(dir: &Path, config: Option<PathBuf>) -> Context {
        Context {
            config,
            dir: dir.to_path_buf(),
            home: "/h".into(),
        }
    }

    #[test]
    fn markdown_merges_over_the_json_agent_map() {
        let dir = scratch("merge");
        write(
            &dir,
            "opencode.json",
            r#"{"agent": {"review": {"description": "json", "temperature": 0.2, "permission": {"bash": "ask"}}}, "default_agent": "plan"}"#,
        );
        write(
            &dir,
            ".opencode/agent/review.md",
            "---\ndescription: markdown\npermission:\n  edit: deny\n---\nReview.",
        );
        write(&dir, ".opencode/agents/bad.md", "---\nsteps: many\n---\n");
        let project = Project::load(&ctx(&dir, None)).unwrap();
        let review = &project.agents["review"];
        assert_eq!(review.description.as_deref(), Some("markdown"));
        assert_eq!(review.temperature, Some(0.2));
        assert_eq!(
            serde_json::to_string(review.permission.as_ref().unwrap()).unwrap(),
            r#"{"bash":"ask","edit":"deny"}"#
        );
        assert_eq!(
            project.agent_source_names("review"),
            "opencode.json+.opencode/agent/review.md"
        );
        assert_eq!(project.default_agent.as_deref(), Some("plan"));
        assert_eq!(project.warnings.len(), 1);
        assert!(
            project.warnings[0].contains(".opencode/agents/bad.md")
                && project.warnings[0].contains("skipped"),
            "{}",
            project.warnings[0]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn config_directory_is_scanned_after_the_working_directory() {
        let dir = scratch("dirs");
        write(&dir, ".opencode/agent/a.md", "---\ndescription: cwd\n---\n");
        write(&dir, "cfg/opencode.json", "{}");
        write(
            &dir,
            "cfg/.opencode/agent/a.md",
            "---\ndescription: cfg\n---\n",
        );
        let project = Project::load(&ctx(&dir, Some(dir.join("cfg/opencode.json")))).unwrap();
        assert_eq!(project.markdown_dirs.len(), 2);
        assert_eq!(project.agents["a"].description.as_deref(), Some("cfg"));
        // A config inside .opencode: that directory itself, scanned once.
        let project = Project::load(&ctx(&dir, Some(dir.join(".opencode/opencode.json"))));
        assert!(project.is_err(), "the file does not exist");
        write(&dir, ".opencode/opencode.json", "{}");
        let project = Project::load(&ctx(&dir, Some(dir.join(".opencode/opencode.json")))).unwrap();
        assert_eq!(project.markdown_dirs.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
