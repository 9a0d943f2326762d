//! [`Engine::run_shell`]: a shell command the user runs in a session
//! (opencode's `POST /session/{id}/shell`), recorded as opencode records
//! it — a user message, then an assistant message holding one `bash` call
//! — but run as the model's calls run: through the step's tool-call path,
//! so the `bash` rules, asks, hooks, sandbox and truncation all apply.
//! The model is never called.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::facade::{Engine, PromptOptions};
use super::outcome::{PromptError, StopReason, TurnResult};
use super::state::{complete_message, emit_message};
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
        self.forward_permission_events();
        let state = self.state();
        let session = state.store.session(session_id).await?;
        let (agent, model) = self.agent_and_model(&session, &options)?;
        let _guard = self.mark_busy(&session.id)?;

        let mut user = Message::new(session.id.as_str(), Role::User);
        user.agent = agent.name.clone();
        user.parts.push(Part::Text {
            id: ascending("prt"),
            text: SHELL_NOTE.into(),
            synthetic: true,
            provider_metadata: None,
        });
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
        message.parts.push(bash_call(&ctx, command));
        emit_message(state, &message);
        let end = execute_calls(&ctx, &[], &mut message, &[0]).await;
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
                    message: "The shell command was cancelled.".into(),
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

/// The `bash` call of `command`, ready to run; already failed when the
/// rules disable `bash` for the agent altogether (the tool would not be
/// found, and the error would blame the model).
fn bash_call(ctx: &TurnContext<'_>, command: &str) -> Part {
    let input = json!({ "command": command });
    let start = now_ms();
    let disabled = agentgate_permission::is_disabled(BASH, &ctx.ruleset)
        || ctx
            .ceilings
            .iter()
            .any(|ceiling| agentgate_permission::is_disabled(BASH, ceiling));
    let state = if disabled || ctx.engine.tools.get(BASH).is_none() {
        let why = if disabled {
            format!(
                "The shell command did not run: the rules deny every `bash` command for agent {}.",
                ctx.agent.name
            )
        } else {
            "The shell command did not run: this agent has no `bash` tool.".to_string()
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
        tool: BASH.into(),
        state,
        provider_metadata: None,
    })
}
