//! [`Engine::compact`]: the compaction a user asks for (opencode's
//! `POST /session/{id}/summarize`, ACP's `/compact`), the same summary the
//! turn runs when the context fills, without the continuation message.

use tokio_util::sync::CancellationToken;

use super::facade::{Engine, PromptOptions};
use super::outcome::{PromptError, StopReason, TurnResult};
use super::turn_compaction::{Trigger, compact};
use super::turn_context::TurnContext;
use crate::message::Role;
use crate::model::share_messages;
use crate::stream::FinishReason;
use crate::usage::Usage;

impl Engine {
    /// Compacts session `session_id` now: the older history is summarised
    /// under the `compaction` agent (on `options.model`, else the model of
    /// `options.agent` or the session) and the last
    /// `compaction.tail_turns` user turns are kept verbatim, as when the
    /// context fills, but no message is added for the model to continue
    /// from. The result's messages are the summary; its stop is an error
    /// when there is nothing to summarise yet or the summary failed.
    pub async fn compact(
        &self,
        session_id: &str,
        options: PromptOptions,
        cancel: CancellationToken,
    ) -> Result<TurnResult, PromptError> {
        self.forward_permission_events();
        let state = self.state();
        let session = state.store.session(session_id).await?;
        let (agent, model) = self.agent_and_model(&session, &options)?;
        let _guard = self.mark_busy(&session.id)?;
        let ctx = TurnContext::new(state, model, &agent, &session, &cancel);
        let mut history = share_messages(Vec::new());
        let mut usage = Usage::default();
        let outcome = compact(&ctx, 1, Trigger::Manual, &mut history, &mut usage).await?;
        let stop = match outcome {
            Ok(()) => StopReason::Done {
                finish: FinishReason::Stop,
            },
            Err(stop) => stop,
        };
        let messages = state.store.messages(session_id).await?;
        let summary = messages
            .into_iter()
            .rev()
            .find(|m| m.role == Role::Assistant && m.summary);
        Ok(TurnResult {
            stop,
            messages: summary.into_iter().collect(),
            steps: 1,
            usage,
        })
    }
}
