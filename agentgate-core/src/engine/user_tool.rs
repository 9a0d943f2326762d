//! [`Engine::run_tool`]: a tool run on the user's behalf (a command's
//! `` !`cmd` `` expansion, an `@file` reference, a command's sub-agent),
//! judged exactly as a model's call of the same tool would be: the same
//! tool, the same gate, the agent's and the session's rules, the session's
//! ceilings. A command file is project content, so it gets no more than the
//! model would.

use std::sync::Arc;

use agentgate_permission::{Ruleset, merge};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::facade::Engine;
use super::outcome::PromptError;
use crate::ids::ascending;
use crate::tool::{ToolError, ToolOutput};
use crate::tool_context::ToolContext;

/// Why [`Engine::run_tool`] gave no output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunToolError {
    /// The session or agent could not be used.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// No tool of that name is registered.
    #[error("no tool {0:?} is registered, so this cannot run")]
    UnknownTool(String),
    /// The tool failed or its permission request was refused.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

impl Engine {
    /// Runs tool `tool` with `input` for session `session_id` as if the
    /// model of `agent` (default: the session's agent) had called it: the
    /// tool asks the gate with `merge(agent rules, session rules)`, bounded
    /// by the session's ceilings and, when `agent` is not the session's
    /// own, by the session agent's rules too (the stricter answer wins).
    /// Nothing is recorded in the transcript; permission events are
    /// published as for any call.
    pub async fn run_tool(
        &self,
        session_id: &str,
        agent: Option<&str>,
        tool: &str,
        input: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, RunToolError> {
        self.forward_permission_events();
        let session = self
            .store()
            .session(session_id)
            .await
            .map_err(PromptError::from)?;
        let name = agent.unwrap_or(&session.agent);
        let spec = self
            .agent(name)
            .ok_or_else(|| PromptError::UnknownAgent(name.to_string()))?;
        let ruleset = merge([&spec.permission, &session.permission]);
        let mut ceilings: Vec<Ruleset> = session.ceilings.clone();
        if name != session.agent {
            let own = self
                .agent(&session.agent)
                .ok_or_else(|| PromptError::UnknownAgent(session.agent.clone()))?;
            ceilings.push(merge([&own.permission, &session.permission]));
        }
        let found = self
            .tools()
            .get(tool)
            .ok_or_else(|| RunToolError::UnknownTool(tool.to_string()))?;
        let worktree = self
            .state()
            .worktree
            .clone()
            .unwrap_or_else(|| session.directory.clone());
        let ctx = ToolContext::new(
            session.id.as_str(),
            ascending("msg"),
            ascending("call"),
            self.permissions().clone(),
        )
        .with_agent(name)
        .with_directories(session.directory.clone(), worktree)
        .with_ruleset(Arc::new(ruleset))
        .with_ceilings(Arc::new(ceilings))
        .with_truncator(self.config().truncator.clone())
        .with_cancel(cancel);
        Ok(found.execute(input, &ctx).await?)
    }
}
