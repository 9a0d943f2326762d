//! Calls the user (not the model) runs in a session, recorded as opencode
//! records them — a user message, then an assistant message holding the
//! one call — but run as the model's calls run: through the step's
//! tool-call path, so the rules, asks, hooks, sandbox and truncation all
//! apply. The model is never called. [`Engine::run_shell`]: a shell
//! command (opencode's `POST /session/{id}/shell`);
//! [`Engine::run_subtask_call`]: a custom command that runs as a
//! sub-agent (its `task` call).

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::command_run::SubtaskPlan;
use super::facade::{Engine, PromptOptions};
use super::outcome::{PromptError, StopReason, TurnResult};
use super::state::{complete_message, emit_message};
use super::step_patch::add_step_patch;
use super::task_tool::TASK_TOOL;
use super::tool_calls::{CallsEnd, execute_calls};
use super::turn_context::TurnContext;
use crate::ids::{ascending, now_ms};
use crate::message::{Message, MessageError, Part, Role, Timing, ToolPart, ToolState};
use crate::model::ModelRef;
use crate::stream::FinishReason;
use crate::usage::Usage;

/// The tool a user's shell command runs as.
const BASH: &str = "bash";

/// The text of the user message a shell command is recorded under (the
/// words opencode uses).
const SHELL_NOTE: &str = "The following tool was executed by the user";

/// A call the user runs: what its user message holds, the tool and its
/// input, and what a cancelled call is called.
struct UserCall {
    user_parts: Vec<Part>,
    tool: &'static str,
    input: Value,
    what: &'static str,
}

impl Engine {
    /// Runs shell `command` in session `session_id` for the user, as
    /// agent `options.agent` (default: the session's agent): stores a user
    /// message, then an assistant message with one `bash` call, run as a
    /// model's call of that agent would be (its rules and the session's,
    /// the session's ceilings, an ask the gate's approver answers, hooks,
    /// sandbox). The call ends completed or with its error (a denied or
    /// rejected permission included); `cancel` interrupts it. Events are
    /// published as for a turn. The result's only message is the assistant
    /// message; the model is not called.
    pub async fn run_shell(
        &self,
        session_id: &str,
        command: &str,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        let call = UserCall {
            user_parts: vec![Part::Text {
                id: ascending("prt"),
                text: SHELL_NOTE.into(),
                synthetic: true,
                provider_metadata: None,
            }],
            tool: BASH,
            input: json!({ "command": command }),
            what: "shell command",
        };
        self.run_user_call(session_id, call, options, cancel).await
    }

    /// Runs a custom command's sub-agent (`plan`, from
    /// [`prepare_command`](Engine::prepare_command)) in session
    /// `session_id`, recorded as opencode records it: a user message with
    /// the `subtask` part, then an assistant message with the `task` call
    /// that runs it — under the `task` rules of agent `options.agent`
    /// (default: the session's), asked like a model's call. The result's
    /// only message is that assistant message, whose call's output is the
    /// sub-agent's answer; the session's model is not called after it.
    pub async fn run_subtask_call(
        &self,
        session_id: &str,
        plan: &SubtaskPlan,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        let call = UserCall {
            user_parts: vec![Part::Subtask {
                id: ascending("prt"),
                agent: plan.agent.clone(),
                description: plan.description.clone(),
                prompt: plan.prompt.clone(),
            }],
            tool: TASK_TOOL,
            input: json!({
                "description": plan.description,
                "prompt": plan.prompt,
                "subagent_type": plan.agent,
            }),
            what: "sub-agent",
        };
        self.run_user_call(session_id, call, options, cancel).await
    }

    /// Stores `call`'s user message, then runs the call in an assistant
    /// message of its own, through the step's tool-call path.
    async fn run_user_call(
        &self,
        session_id: &str,
        call: UserCall,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        self.forward_permission_events();
        let state = self.state();
        let session = state.store.session(session_id).await?;
        let (agent, model) = self.agent_and_model(&session, &options)?;
        let _guard = self.mark_busy(&session.id)?;
        let session = self.clean_up_revert(session).await?;

        let mut user = Message::new(session.id.as_str(), Role::User);
        user.agent = agent.name.clone();
        user.parts = call.user_parts;
        user.time.end = Some(user.time.start);
        state.store.put_message(&user).await?;
        emit_message(state, &user);

        let ctx = TurnContext::new(state, model, &agent, &session, &cancel);
        let mut message = Message::new(session.id.as_str(), Role::Assistant);
        message.agent = agent.name.clone();
        message.model = Some(ModelRef {
            provider_id: ctx.model.info().provider.clone(),
            model_id: ctx.model.info().id.clone(),
        });
        message
            .parts
            .push(user_call(&ctx, call.tool, call.input, call.what));
        emit_message(state, &message);
        let end = execute_calls(&ctx, &[], &mut message, &[0]).await;
        add_step_patch(state, &ctx.worktree, &mut message).await;
        message.time.end = Some(now_ms());
        let stop = match end {
            CallsEnd::Finished => StopReason::Done {
                finish: FinishReason::Stop,
            },
            CallsEnd::Blocked => StopReason::Rejected,
            CallsEnd::Denied(message) => StopReason::Denied { message },
            CallsEnd::Cancelled => {
                message.error = Some(MessageError {
                    name: "aborted".into(),
                    message: format!("The {} was cancelled.", call.what),
                });
                StopReason::Cancelled
            }
        };
        complete_message(state, &message).await?;
        Ok(TurnResult {
            stop,
            messages: vec![message],
            steps: 0,
            usage: Usage::default(),
        })
    }
}

/// The call of `tool` with `input`, ready to run; already failed when the
/// rules disable `tool` for the agent altogether (the tool would not be
/// found, and the error would blame the model).
fn user_call(ctx: &TurnContext<'_>, tool: &str, input: Value, what: &str) -> Part {
    let start = now_ms();
    let disabled = agentgate_permission::is_disabled(tool, &ctx.ruleset)
        || ctx
            .ceilings
            .iter()
            .any(|ceiling| agentgate_permission::is_disabled(tool, ceiling));
    let state = if disabled || ctx.engine.tools.get(tool).is_none() {
        let why = if disabled {
            format!(
                "The {what} did not run: the rules deny every `{tool}` call for agent {}.",
                ctx.agent.name
            )
        } else {
            format!("The {what} did not run: this agent has no `{tool}` tool.")
        };
        ToolState::Error {
            input,
            error: why,
            metadata: Value::Object(Default::default()),
            time: Timing {
                start,
                end: Some(start),
            },
        }
    } else {
        ToolState::Running {
            input,
            title: None,
            metadata: Value::Object(Default::default()),
            time: Timing { start, end: None },
        }
    };
    Part::Tool(ToolPart {
        id: ascending("prt"),
        call_id: ascending("call"),
        tool: tool.into(),
        state,
        provider_metadata: None,
    })
}
