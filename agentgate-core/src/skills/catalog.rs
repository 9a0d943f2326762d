//! [`Skills`]: the `SKILL.md` files of a project and of the user, found
//! where opencode looks (§9.1's skill folders):
//!
//! 1. `~/.claude/skills/**/SKILL.md` and `~/.agents/skills/**/SKILL.md`;
//! 2. `.claude/skills/**/SKILL.md` and `.agents/skills/**/SKILL.md` in
//!    every directory from the worktree down to the working directory;
//! 3. `{skill,skills}/**/SKILL.md` in every config folder (the global
//!    config directory, each `.opencode`, `~/.opencode`).
//!
//! (1) and (2) are skipped when `OPENCODE_DISABLE_EXTERNAL_SKILLS` is set.
//! A later skill of a name replaces an earlier one. A file's front matter
//! must give `name` and `description` as strings; its body is the content
//! the `skill` tool loads.
//!
//! A skill's folder is readable without an ask (an `external_directory`
//! allow rule) only when it really lies inside the skills folder it was
//! found in: a folder reached through a symbolic link that leaves it is
//! still a skill, but its files ask as any other. Names holding `*` or `?`
//! are refused (an "always" answer would approve every skill), and nothing
//! ever builds a path from a name.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use crate::agents::parse_markdown;
use crate::config::{Config, ConfigLoader, ConfigWarning};

/// The skill file's name.
pub const SKILL_FILE: &str = "SKILL.md";
/// The folders beside projects (and in home) whose `skills/` opencode reads.
pub const EXTERNAL_SKILL_DIRS: [&str; 2] = [".claude", ".agents"];
/// The folders of a config directory that hold skills.
pub const CONFIG_SKILL_DIRS: [&str; 2] = ["skill", "skills"];

/// How deep under a skills folder `SKILL.md` files are looked for.
const MAX_DEPTH: usize = 8;
/// How many folders one skills folder may make the scan visit.
const MAX_FOLDERS: usize = 2_000;

/// One skill: a named set of instructions loaded on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skill {
    /// Its name (front matter `name`): what the model asks the `skill`
    /// tool for, and the `skill` permission's pattern.
    pub name: String,
    /// What it is for (front matter `description`), listed to the model.
    pub description: String,
    /// Its `SKILL.md`.
    pub location: PathBuf,
    /// The folder holding it (relative paths in the skill start here).
    pub directory: PathBuf,
    /// The file's body (after the front matter).
    pub content: String,
    /// Whether the folder lies inside the skills folder it was found in
    /// (links resolved), so agents may read it without asking.
    pub contained: bool,
}

impl Skill {
    /// The template of the command a skill is offered as: its content and
    /// where its relative paths start.
    pub fn command_template(&self) -> String {
        format!(
            "{}\n\nBase directory for this skill: {}\nRelative paths in this skill are relative to this directory.",
            self.content.trim(),
            self.directory.display()
        )
    }
}

/// The skills of a project, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    entries: IndexMap<String, Skill>,
}

impl Skills {
    /// No skills.
    pub fn new() -> Self {
        Skills::default()
    }

    /// The skills for the directory `loader` loads, with `config` as it
    /// loaded it (see the module documentation for the places, in order).
    /// Files that cannot be used are warnings naming them.
    pub fn discover(loader: &ConfigLoader, config: &Config) -> (Skills, Vec<ConfigWarning>) {
        let mut skills = Skills::new();
        let mut warnings = Vec::new();
        let external = loader
            .env_var("OPENCODE_DISABLE_EXTERNAL_SKILLS")
            .is_none_or(|v| v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"));
        if external {
            if let Some(home) = loader.home_dir() {
                for dir in EXTERNAL_SKILL_DIRS {
                    skills.load_folder(&home.join(dir).join("skills"), &mut warnings);
                }
            }
            let worktree = loader.resolved_worktree();
            let walk: Vec<&Path> = loader
                .directory()
                .ancestors()
                .take_while(|dir| dir.starts_with(&worktree))
                .collect();
            for dir in walk.iter().rev() {
                for sub in EXTERNAL_SKILL_DIRS {
                    skills.load_folder(&dir.join(sub).join("skills"), &mut warnings);
                }
            }
        }
        for dir in &config.config_dirs {
            for sub in CONFIG_SKILL_DIRS {
                skills.load_folder(&dir.join(sub), &mut warnings);
            }
        }
        (skills, warnings)
    }

    /// Adds the skills under one skills folder (`<folder>/**/SKILL.md`); a
    /// missing folder adds nothing.
    pub fn load_folder(&mut self, folder: &Path, warnings: &mut Vec<ConfigWarning>) {
        if !folder.is_dir() {
            return;
        }
        let root = std::fs::canonicalize(folder).ok();
        let mut found = Vec::new();
        let mut visited = HashSet::new();
        let mut budget = MAX_FOLDERS;
        find_skill_files(folder, 0, &mut visited, &mut budget, &mut found);
        for path in found {
            match read_skill(&path, root.as_deref()) {
                Ok(skill) => {
                    if let Some(old) = self.entries.get(&skill.name) {
                        tracing::warn!(
                            name = %skill.name,
                            existing = %old.location.display(),
                            replacement = %skill.location.display(),
                            "duplicate skill name; the later one is used"
                        );
                    }
                    self.insert(skill);
                }
                Err(message) => warnings.push(ConfigWarning {
                    file: path.display().to_string(),
                    path: String::new(),
                    message: format!("skill skipped: {message}"),
                }),
            }
        }
    }

    /// Adds (or replaces) a skill.
    pub fn insert(&mut self, skill: Skill) {
        self.entries.insert(skill.name.clone(), skill);
    }

    /// The skill `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.entries.get(name)
    }

    /// Every skill, in discovery order.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.entries.values()
    }

    /// The names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// The number of skills.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The folders agents may read without asking: those of the skills
    /// that lie inside their skills folder, without repeats.
    pub fn readable_dirs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for skill in self.iter().filter(|s| s.contained) {
            let dir = skill.directory.display().to_string();
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
        out
    }
}

/// Collects every `SKILL.md` under `dir` (links followed, each real folder
/// once, at most [`MAX_DEPTH`] deep and [`MAX_FOLDERS`] folders).
fn find_skill_files(
    dir: &Path,
    depth: usize,
    visited: &mut HashSet<PathBuf>,
    budget: &mut usize,
    found: &mut Vec<PathBuf>,
) {
    if depth > MAX_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    let Ok(real) = std::fs::canonicalize(dir) else {
        return;
    };
    if !visited.insert(real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            find_skill_files(&path, depth + 1, visited, budget, found);
        } else if meta.is_file() && entry.file_name() == SKILL_FILE {
            found.push(path);
        }
    }
}

/// Reads one `SKILL.md`; `root` is its skills folder with links resolved.
fn read_skill(path: &Path, root: Option<&Path>) -> Result<Skill, String> {
    let text = crate::bounded_read::read_text(path).map_err(|e| format!("cannot read: {e}"))?;
    let document = parse_markdown(&text).map_err(|e| e.to_string())?;
    let field = |key: &str| -> Result<String, String> {
        match document.front_matter.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(other) => Err(format!(
                "front matter `{key}`: expected a non-empty string, found {}",
                agentgate_permission::describe_value(other)
            )),
            None => Err(format!("front matter `{key}` is missing")),
        }
    };
    let name = field("name")?;
    let description = field("description")?;
    if name.contains(['*', '?']) || name.chars().any(char::is_control) {
        return Err(format!(
            "the name {name:?} holds a wildcard or control character; rename the skill"
        ));
    }
    let directory = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let contained = match (root, std::fs::canonicalize(&directory)) {
        (Some(root), Ok(real)) => {
            real.starts_with(root) && !directory.to_string_lossy().contains(['*', '?'])
        }
        _ => false,
    };
    Ok(Skill {
        name,
        description,
        location: path.to_path_buf(),
        directory,
        content: document.body,
        contained,
    })
}
