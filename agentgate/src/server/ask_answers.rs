//! Answering an ask in `agent serve`: through this process's gate when
//! it holds the ask, through the relay to the live process that does, or
//! — for an ask saved by a process that is gone (a relay whose asks
//! outlive the process) — by claiming it and resuming its turn here
//! ([`Engine::resume_ask`](crate::Engine::resume_ask)).

use std::sync::Arc;

use super::state::{Failure, Shared, Work};
use super::turn_task::start_work;
use crate::PromptOptions;
use crate::permission::{Answerer, PermissionError, Reply};

/// Answers request `id`: through the gate when this process holds it,
/// else through the relay to the live process that does. `false` when no
/// process has it pending.
///
/// With a relay whose asks outlive the process (SQLite, PostgreSQL), an
/// ask no live process holds was raised by one that is gone: it is
/// claimed (only one answer wins the claim) and its turn is resumed here,
/// in the background, through the session's queue.
pub(crate) async fn reply(
    shared: &Arc<Shared>,
    id: &str,
    reply: Reply,
    answered_by: Answerer,
) -> Result<bool, Failure> {
    if shared.gate.pending().iter().any(|r| r.id == id) {
        match shared.gate.reply_as(id, reply.clone(), answered_by) {
            Ok(()) => return Ok(true),
            // Answered or parked meanwhile: a parked ask is resumed below.
            Err(PermissionError::NotFound { .. }) => {}
            Err(error) => return Err(Failure::Internal(error.to_string())),
        }
    }
    if shared.take_parked(id) {
        // Parked here: claimed and resumed here, without a round trip
        // through the relay (which may still name this process its owner).
        return resume(shared, id, reply).await;
    }
    let delivered = shared
        .relay
        .answer(id, &reply)
        .await
        .map_err(|e| Failure::Internal(e.to_string()))?;
    if delivered {
        return Ok(true);
    }
    if shared.relay.outlives_the_process() {
        return resume(shared, id, reply).await;
    }
    Ok(false)
}

/// Claims orphaned ask `id` and resumes its turn with `reply`; `false`
/// when another answer claimed it first (or it is unknown).
pub(crate) async fn resume(shared: &Arc<Shared>, id: &str, reply: Reply) -> Result<bool, Failure> {
    let claimed = shared
        .relay
        .claim(id)
        .await
        .map_err(|e| Failure::Internal(e.to_string()))?;
    let Some(request) = claimed else {
        return Ok(false);
    };
    let served = shared.served(&request.session_id).await?;
    let session_id = request.session_id.clone();
    let work = Work::Resume(Box::new(request), reply);
    let task = start_work(shared, served, work, (None, None), PromptOptions::default());
    tokio::spawn(async move {
        match task.await {
            Ok(Ok(_)) => {}
            Ok(Err(failure)) => {
                tracing::warn!(session_id = %session_id, "the resumed turn failed: {}", failure.message());
            }
            Err(error) => {
                tracing::warn!(session_id = %session_id, %error, "the resumed turn's task failed")
            }
        }
    });
    Ok(true)
}

/// Follows the relay until the server stops: an answer given in another
/// process to an ask this gate holds is applied here, and one relayed
/// here for an ask this process has parked since resumes it here.
pub(crate) fn follow_relayed_replies(shared: &Arc<Shared>) {
    let shared = Arc::clone(shared);
    let mut replies = shared.relay.replies();
    tokio::spawn(async move {
        loop {
            let relayed = tokio::select! {
                () = shared.stop.cancelled() => break,
                relayed = replies.recv() => relayed,
            };
            match relayed {
                Ok(relayed) => {
                    if shared
                        .gate
                        .pending()
                        .iter()
                        .any(|r| r.id == relayed.request_id)
                    {
                        let _ = shared.gate.reply_as(
                            &relayed.request_id,
                            relayed.reply,
                            Answerer::Relayed,
                        );
                    } else if shared.take_parked(&relayed.request_id) {
                        // Sent here while this process still held the ask,
                        // and parked since: resumed here.
                        let shared = Arc::clone(&shared);
                        tokio::spawn(async move {
                            let id = relayed.request_id;
                            if let Err(failure) = resume(&shared, &id, relayed.reply).await {
                                tracing::warn!(request = %id, "a relayed answer to a parked ask could not resume it: {}", failure.message());
                            }
                        });
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "relayed replies lagged");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}
