//! A turn run on its own task (it runs to its end even if the client goes
//! away), answered as the assistant message `{info, parts}` in opencode's
//! shape: what `POST /session/{id}/message`, `prompt_async`,
//! `POST /session/{id}/command` and `POST /session/{id}/shell` share.

use std::sync::Arc;

use super::state::{Failure, ServedRef, Shared, Work, answer_of};
use super::wire::{MessageContext, MessageWithParts, with_parts};
use crate::{ModelRef, PromptOptions, Role};

/// A session's model as its messages show it: provider, id, prices.
pub(crate) type ShownModel = (String, String, Option<crate::ModelCost>);

/// The model the session's messages are shown with: provider, id and
/// configured prices (each answer's `cost`).
pub(crate) async fn model_of(shared: &Shared, session_id: &str) -> ShownModel {
    if let Ok(served) = shared.served(session_id).await
        && let Ok(session) = shared.store.session(session_id).await
        && let Ok(model) = served.agent.engine().model_for(&session)
    {
        let info = model.info();
        return (info.provider.clone(), info.id.clone(), info.cost);
    }
    (String::new(), String::new(), None)
}

/// Starts `work` (a prompt's turn, a shell command) on `served` on its own task: `stored` (the
/// agent and model) are kept on the session, `once` runs this turn only
/// (see [`Shared::prompt_once`]). The task answers the turn's assistant
/// message.
pub(crate) fn start_work(
    shared: &Arc<Shared>,
    served: ServedRef,
    work: Work,
    stored: (Option<String>, Option<ModelRef>),
    once: PromptOptions,
) -> tokio::task::JoinHandle<Result<MessageWithParts, Failure>> {
    let shared = Arc::clone(shared);
    let session_id = served.agent.session().id.clone();
    tokio::spawn(async move {
        let answer = match shared.prompt_once(served, work, stored, once).await {
            Ok(result) => answer_of(&result).cloned().ok_or_else(|| {
                Failure::Internal(format!(
                    "the turn ended without an answer: {:?}",
                    result.stop
                ))
            })?,
            // Parked at an ask: the message as stored so far (its call
            // waiting); the rest follows on the event stream once answered.
            Err(Failure::Parked(why)) => {
                let stored = shared.messages(&session_id).await?;
                let last = stored.into_iter().rev().find(|m| m.role == Role::Assistant);
                last.ok_or(Failure::Parked(why))?
            }
            Err(failure) => return Err(failure),
        };
        let answer = &answer;
        let messages = shared.messages(&session_id).await?;
        let model = model_of(&shared, &session_id).await;
        let parent = messages
            .iter()
            .take_while(|m| m.id != answer.id)
            .filter(|m| m.role == Role::User)
            .last()
            .map(|m| m.id.clone());
        Ok(with_parts(
            answer,
            &MessageContext {
                directory: &shared.directory,
                provider_id: &model.0,
                model_id: &model.1,
                parent_id: parent.as_deref(),
                price: model.2,
            },
        ))
    })
}
