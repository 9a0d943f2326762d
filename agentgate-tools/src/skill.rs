//! The `skill` tool: loads one of the project's skills (`SKILL.md`, see
//! [`agentgate_core::skills`]) by name on demand. It asks the `skill`
//! permission with the skill's name as pattern (and as the "always"
//! pattern), as opencode's does, then answers the skill's content, its
//! folder and a sample of the files in it.
//!
//! The name only selects an entry of the discovered [`Skills`]; it never
//! becomes part of a path. The files are listed without following links,
//! and not at all for a skill whose folder leaves its skills folder
//! through a link.

use std::path::{Path, PathBuf};

use agentgate_core::skills::{SKILL, SKILL_FILE, Skills};
use agentgate_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// How many of a skill's files are listed.
const LISTED_FILES: usize = 10;
/// How deep the listing looks.
const LISTING_DEPTH: usize = 4;

const DESCRIPTION: &str = "Load a skill: specialized instructions (and the scripts or references \
beside them) for a kind of task. Load one when the user asks for it, or when the task clearly \
matches a skill listed in the system prompt; a generic overlap of words is not a match. The name \
must be one of the listed skills. The answer holds the skill's instructions and its folder, which \
relative paths in the skill start from.";

/// Arguments of [`SkillTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SkillArgs {
    /// The name of the skill, as listed in the system prompt.
    pub name: String,
}

/// The `skill` tool over a set of discovered skills.
#[derive(Debug, Clone)]
pub struct SkillTool {
    skills: Skills,
}

impl SkillTool {
    /// A tool that loads these skills.
    pub fn new(skills: Skills) -> Self {
        SkillTool { skills }
    }
}

#[agentgate_core::async_trait]
impl TypedTool for SkillTool {
    type Args = SkillArgs;

    fn effects(&self) -> agentgate_core::ToolEffects {
        // Reads only, or reports its writes to the checkpoints itself.
        agentgate_core::ToolEffects::Declared
    }

    fn id(&self) -> &str {
        SKILL
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn run(&self, args: SkillArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.skills.get(&args.name) else {
            let names = self.skills.names();
            return Err(ToolError::failed(format!(
                "Skill {:?} not found. Available skills: {}",
                args.name,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        ctx.ask(
            SKILL,
            [skill.name.as_str()],
            [skill.name.as_str()],
            json!({}),
        )
        .await?;
        let files = if skill.contained {
            let mut found = Vec::new();
            list_files(&skill.directory, 0, &mut found);
            found
                .iter()
                .map(|f| format!("<file>{}</file>", f.display()))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            "(not listed: the folder is reached through a link out of its skills folder)"
                .to_string()
        };
        let output = format!(
            "<skill_content name=\"{name}\">\n# Skill: {name}\n\n{content}\n\nBase directory for this skill: {dir}\n\
             Relative paths in this skill (scripts/, references/ ...) start from this directory.\n\
             The file list is a sample.\n\n<skill_files>\n{files}\n</skill_files>\n</skill_content>",
            name = skill.name,
            content = skill.content.trim(),
            dir = skill.directory.display(),
        );
        Ok(ToolOutput {
            title: format!("Loaded skill: {}", skill.name),
            output,
            metadata: json!({"name": skill.name, "dir": skill.directory.display().to_string()}),
            attachments: Vec::new(),
        })
    }
}

/// Up to [`LISTED_FILES`] regular files under `dir` (hidden ones included,
/// `SKILL.md` left out), links neither followed nor listed.
fn list_files(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    if depth > LISTING_DEPTH || found.len() >= LISTED_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if found.len() >= LISTED_FILES {
            return;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            list_files(&path, depth + 1, found);
        } else if kind.is_file() && entry.file_name() != SKILL_FILE {
            found.push(path);
        }
    }
}
