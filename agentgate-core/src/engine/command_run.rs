//! [`Engine::prepare_command`]: a custom command made ready to send, as
//! opencode runs one (`session/prompt.ts` `command`): its arguments put in
//! the template, each `` !`cmd` `` replaced by the command's output, each
//! `@file` read and added to the prompt, and the agent, model and sub-agent
//! choice worked out. Unlike opencode, the shell commands and the file
//! reads are the `bash` and `read` tools run through
//! [`Engine::run_tool`]: a command file is project content, so its shell
//! lines are asked, denied or allowed exactly as the model's would be (and
//! run in the same sandbox), and a file the `read` rules deny is not read.

use std::path::Path;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::facade::{Engine, PromptOptions};
use super::outcome::PromptError;
use super::task_tool::TASK_TOOL;
use super::user_tool::RunToolError;
use crate::agents::AgentMode;
use crate::commands::{
    Command, expand_arguments, file_references, replace_expansions, shell_expansions,
};
use crate::message::Part;
use crate::model::ModelRef;
use crate::tool::ToolOutput;

/// The sub-agent a command runs as (its `subtask`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubtaskPlan {
    /// The sub-agent.
    pub agent: String,
    /// The `task` tool's description (the command's description).
    pub description: String,
    /// The sub-agent's prompt (the expanded template).
    pub prompt: String,
}

/// A command ready to send.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PreparedCommand {
    /// The user parts: the expanded template, then each file read.
    pub parts: Vec<Part>,
    /// The agent and model the prompt runs with.
    pub options: PromptOptions,
    /// Set when the command runs as a sub-agent instead (the parts are then
    /// unused; see [`Engine::run_subtask`]).
    pub subtask: Option<SubtaskPlan>,
    /// `@file` references left out, each with the reason.
    pub notes: Vec<String>,
}

/// Why a command could not be prepared; nothing was sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The session or the command's agent could not be used.
    #[error("command /{command}: {source}")]
    Prompt {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: PromptError,
    },
    /// The command's `model` is not `provider/model`.
    #[error(
        "command /{command}: its model {model:?} is not provider/model; fix the command's `model`"
    )]
    BadModel {
        /// The command.
        command: String,
        /// The value.
        model: String,
    },
    /// A `` !`…` `` expansion did not run: its permission was denied or
    /// rejected, or the `bash` tool failed.
    #[error("command /{command}: the shell expansion `{shell}` did not run: {source}")]
    Shell {
        /// The command.
        command: String,
        /// The command line of the expansion.
        shell: String,
        /// Why.
        #[source]
        source: RunToolError,
    },
}

impl CommandError {
    /// Whether a permission request was rejected (not denied by a rule):
    /// the answer an approver that cannot ask gives.
    pub fn rejected(&self) -> bool {
        matches!(
            self,
            CommandError::Shell {
                source: RunToolError::Tool(crate::tool::ToolError::Permission(
                    agentgate_permission::PermissionError::Rejected
                        | agentgate_permission::PermissionError::Expired { .. }
                )),
                ..
            }
        )
    }
}

/// A text part the SDK added (a file the command referenced).
fn synthetic(text: String) -> Part {
    let mut part = Part::text(text);
    if let Part::Text { synthetic, .. } = &mut part {
        *synthetic = true;
    }
    part
}

impl Engine {
    /// Prepares `command` with `arguments` for session `session_id` (see
    /// the module documentation). Shell expansions run one after another
    /// through the `bash` tool; the first that does not run stops the
    /// command (its error says which), and nothing is sent. A file
    /// reference whose read is refused or fails is left out with a note.
    pub async fn prepare_command(
        &self,
        session_id: &str,
        command: &Command,
        arguments: &str,
        cancel: CancellationToken,
    ) -> Result<PreparedCommand, CommandError> {
        let prompt_error = |source: PromptError| CommandError::Prompt {
            command: command.name.clone(),
            source,
        };
        let session = self
            .store()
            .session(session_id)
            .await
            .map_err(|e| prompt_error(e.into()))?;
        let agent = command.agent.clone().unwrap_or(session.agent.clone());
        if self.agent(&agent).is_none() {
            return Err(prompt_error(PromptError::UnknownAgent(agent)));
        }
        let model = match &command.model {
            Some(text) => Some(ModelRef::parse(text).ok_or_else(|| CommandError::BadModel {
                command: command.name.clone(),
                model: text.clone(),
            })?),
            None => None,
        };
        let mode = self
            .agents()
            .and_then(|agents| agents.get(&agent))
            .map(|a| a.mode);
        let is_subtask = match command.subtask {
            Some(flag) => flag,
            None => mode == Some(AgentMode::Subagent),
        };

        let text = expand_arguments(&command.template, arguments);
        let text = self
            .run_expansions(session_id, &agent, command, &text, &cancel)
            .await?;

        let options = PromptOptions {
            agent: command.agent.clone(),
            model,
        };
        if is_subtask {
            // A primary agent cannot be a sub-agent: an unnamed agent runs
            // the sub-task as `general`.
            let sub = match (&command.agent, mode) {
                (None, Some(AgentMode::Primary)) => "general".to_string(),
                _ => agent,
            };
            return Ok(PreparedCommand {
                parts: vec![Part::text(text.clone())],
                options,
                subtask: Some(SubtaskPlan {
                    agent: sub,
                    description: command.description.clone().unwrap_or_default(),
                    prompt: text,
                }),
                notes: Vec::new(),
            });
        }

        let mut parts = vec![Part::text(text.clone())];
        let worktree = self
            .state()
            .worktree
            .clone()
            .unwrap_or_else(|| session.directory.clone());
        let notes = self
            .read_references(session_id, &agent, &text, &worktree, &mut parts, &cancel)
            .await;
        Ok(PreparedCommand {
            parts,
            options,
            subtask: None,
            notes,
        })
    }

    /// `text` with each `` !`cmd` `` replaced by the output of the `bash`
    /// tool run for it as `agent`, trimmed; the first that does not run
    /// is the error.
    async fn run_expansions(
        &self,
        session_id: &str,
        agent: &str,
        command: &Command,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<String, CommandError> {
        let expansions = shell_expansions(text);
        let mut outputs = Vec::with_capacity(expansions.len());
        for expansion in &expansions {
            let input = json!({
                "command": expansion.command,
                "description": format!("Shell expansion of the /{} command", command.name),
            });
            let output = self
                .run_tool(session_id, Some(agent), "bash", input, cancel.clone())
                .await
                .map_err(|source| CommandError::Shell {
                    command: command.name.clone(),
                    shell: expansion.command.clone(),
                    source,
                })?;
            outputs.push(output.output);
        }
        Ok(replace_expansions(text, &expansions, &outputs)
            .trim()
            .to_string())
    }

    /// Reads each existing `@file` of `text` (relative to `worktree`, or
    /// `~/`) with the `read` tool as `agent`, adding what it answered to
    /// `parts`; the notes say which were left out and why.
    async fn read_references(
        &self,
        session_id: &str,
        agent: &str,
        text: &str,
        worktree: &Path,
        parts: &mut Vec<Part>,
        cancel: &CancellationToken,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for name in file_references(text) {
            let path = match name.strip_prefix("~/") {
                Some(rest) => match agentgate_permission::home_dir() {
                    Some(home) => Path::new(&home).join(rest),
                    None => continue,
                },
                None => worktree.join(&name),
            };
            if !path.exists() {
                continue;
            }
            let input = json!({"filePath": path.display().to_string()});
            match self
                .run_tool(
                    session_id,
                    Some(agent),
                    "read",
                    input.clone(),
                    cancel.clone(),
                )
                .await
            {
                Ok(output) => {
                    parts.push(synthetic(format!(
                        "Called the read tool with the following input: {input}"
                    )));
                    parts.push(synthetic(output.output));
                }
                Err(error) => notes.push(format!("@{name} was not included: {error}")),
            }
        }
        notes
    }

    /// Runs a command's sub-agent: the `task` tool called for session
    /// `session_id` with the plan's agent, description and prompt, under
    /// the session agent's rules (so `task` rules decide, as for a model's
    /// call). The answer is the sub-agent's, in the task tool's output.
    pub async fn run_subtask(
        &self,
        session_id: &str,
        plan: &SubtaskPlan,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, RunToolError> {
        let input = json!({
            "description": plan.description,
            "prompt": plan.prompt,
            "subagent_type": plan.agent,
        });
        self.run_tool(session_id, None, TASK_TOOL, input, cancel)
            .await
    }
}
