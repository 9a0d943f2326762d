//! [`Engine::resume_ask`]: a turn that stopped at a permission ask (its
//! process was restarted, or crashed) continued from the store once the
//! ask is answered, in whichever process received the answer.
//!
//! The step's message was stored when the gate asked about its call
//! (`tool_calls.rs`), with the call's tool and arguments. Resuming runs
//! that one call again through the step's tool-call path: the tool asks
//! the gate again, and that ask gets the stored answer
//! ([`PermissionGate::answer_next`](agentgate_permission::PermissionGate::answer_next))
//! — only when it is the same question (permission, patterns and what the
//! person was shown, such as an edit's diff): an ask that differs stays
//! open for a person, so what runs is what was approved. The other calls of the step that
//! had not finished are closed as interrupted (never re-run blindly); then
//! the turn goes on as if it had never stopped.
//!
//! Exactly once is the caller's part: claim the stored ask first (a
//! compare-and-delete in the store, see `agentgate-store`'s relays), and
//! resume only when the claim succeeded.

use agentgate_permission::{PermissionRequest, Reply};
use tokio_util::sync::CancellationToken;

use super::facade::{Engine, PromptOptions};
use super::outcome::{PromptError, StopReason, TurnResult};
use super::reminders::model_history;
use super::state::complete_message;
use super::step_patch::add_step_patch;
use super::tool_calls::{CallsEnd, execute_calls};
use super::turn::run_turn;
use super::turn_context::TurnContext;
use crate::ids::now_ms;
use crate::message::{Message, MessageError, Part, ToolState, interrupted_state};
use crate::usage::Usage;

impl Engine {
    /// Continues the turn that stopped at `request` with `reply`, as if the
    /// answer had reached the process that asked: the call runs (or is
    /// rejected) once, the step's other unfinished calls are closed as
    /// interrupted, and the turn runs on to its end. The result holds the
    /// resumed step's message first.
    ///
    /// Call it only after claiming the stored ask (so that two processes
    /// answering it at once do not both resume it).
    ///
    /// ```no_run
    /// # async fn demo(engine: agentgate_core::Engine, request: agentgate_permission::PermissionRequest) -> Result<(), Box<dyn std::error::Error>> {
    /// use agentgate_permission::Reply;
    /// let turn = engine.resume_ask(&request, Reply::Once, Default::default()).await?;
    /// println!("{}", turn.text());
    /// # Ok(()) }
    /// ```
    pub async fn resume_ask(
        &self,
        request: &PermissionRequest,
        reply: Reply,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        let lost = || {
            PromptError::NotResumable {
            request: request.id.clone(),
            reason: "it is not about a tool call of a stored message (the process stopped before the call's message was saved); answer it as rejected".into(),
        }
        };
        let call = request.tool.as_ref().ok_or_else(lost)?;
        self.forward_permission_events();
        let state = self.state();
        let session = state.store.session(&request.session_id).await?;
        let _guard = self.mark_busy(&session.id)?;
        let messages = state.store.messages(&session.id).await?;
        let mut message = messages
            .into_iter()
            .find(|m| m.id == call.message_id)
            .ok_or_else(lost)?;
        let index =
            pending_call(&message, &call.call_id).ok_or_else(|| PromptError::NotResumable {
                request: request.id.clone(),
                reason: "its call already has a result".into(),
            })?;
        interrupt_others(&mut message, index);
        // The turn's own agent and model, as its message recorded them (a
        // prompt's one-turn choice is not the session's).
        // When this engine does not know that model by name (one given to
        // it directly), the agent's or the session's, as before.
        let options = PromptOptions::default().agent(message.agent.clone());
        let recorded = message
            .model
            .clone()
            .map(|model| options.clone().model(model));
        let (agent, model) = match recorded.map(|with| self.agent_and_model(&session, &with)) {
            Some(Ok(found)) => found,
            _ => self.agent_and_model(&session, &options)?,
        };
        let ctx = TurnContext::new(state, model, &agent, &session, &cancel);
        // The call's ask, raised again, gets the stored answer before any
        // approver sees it; a different question is asked as usual.
        state.permissions.answer_next(request.clone(), reply);
        let end = execute_calls(&ctx, &[], &mut message, &[index]).await;
        state.permissions.forget_answer(&request.id);
        add_step_patch(state, &ctx.worktree, &mut message).await;
        message.time.end = Some(now_ms());
        complete_message(state, &message).await?;
        let stop = match end {
            CallsEnd::Finished => None,
            CallsEnd::Blocked => Some(StopReason::Rejected),
            CallsEnd::Denied(message) => Some(StopReason::Denied { message }),
            CallsEnd::Cancelled => Some(StopReason::Cancelled),
        };
        if let Some(stop) = stop {
            return Ok(TurnResult {
                stop,
                messages: vec![message],
                steps: 0,
                usage: Usage::default(),
            });
        }
        let history = state.store.messages(&session.id).await?;
        let model_messages = crate::model::share_messages(model_history(&agent.name, &history));
        drop(history);
        let mut result = run_turn(&ctx, false, model_messages).await?;
        result.messages.insert(0, message);
        Ok(result)
    }
}

/// The index of call `call_id` in `message` when it has no result yet.
fn pending_call(message: &Message, call_id: &str) -> Option<usize> {
    message.parts.iter().position(|part| {
        part.as_tool().is_some_and(|tool| {
            tool.call_id == call_id && matches!(tool.state, ToolState::Running { .. })
        })
    })
}

/// Closes every unfinished call of `message` but the one at `keep`: they
/// were running when the process stopped, and are not run again blindly.
fn interrupt_others(message: &mut Message, keep: usize) {
    let now = now_ms();
    for (index, part) in message.parts.iter_mut().enumerate() {
        if index == keep {
            continue;
        }
        if let Part::Tool(tool) = part
            && let Some(closed) = interrupted_state(&tool.state, now)
        {
            tool.state = closed;
        }
    }
    if message.error.is_none()
        && message.parts.iter().any(|p| {
            p.as_tool()
                .is_some_and(|t| matches!(&t.state, ToolState::Error { metadata, .. } if metadata.get("interrupted").is_some()))
        })
    {
        message.error = Some(MessageError {
            name: "interrupted".into(),
            message: "The process stopped while calls of this step ran; they were not run again."
                .into(),
        });
    }
}
