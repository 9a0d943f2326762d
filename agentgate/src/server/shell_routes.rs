//! Two of opencode's session actions that call no model for the prompt:
//! `POST /session/{id}/shell` runs the user's shell command as a `bash`
//! call through the server's gate (a client answers its ask like any
//! other), and `POST /session/{id}/summarize` compacts the session now.
//! Both queue behind the session's running turn and publish their events.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};

use super::answers::JsonBody;
use super::state::{Failure, Shared, Work};
use super::turn_task::start_work;
use super::wire::{MessageWithParts, ShellBody, SummarizeBody};
use crate::{ModelRef, PromptOptions, StopReason};

/// Runs the body's shell command in the session as agent `agent` would
/// run it with `bash` (its rules, asks, sandbox); answers the assistant
/// message holding the call, completed or with its error (a refused
/// permission included).
#[utoipa::path(post, path = "/session/{sessionID}/shell", params(("sessionID" = String, Path)), request_body = ShellBody, responses((status = 200, body = MessageWithParts), (status = 400, body = super::wire::ErrorBody), (status = 404, body = super::wire::ErrorBody)))]
pub(crate) async fn shell(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    JsonBody(body): JsonBody<ShellBody>,
) -> Result<Json<MessageWithParts>, Failure> {
    if body.command.trim().is_empty() {
        return Err(Failure::BadRequest(
            "the shell command is empty: send {\"agent\", \"command\"}".into(),
        ));
    }
    let served = shared.served(&session_id).await?;
    let mut once = PromptOptions::default().agent(body.agent);
    if let Some(m) = body.model {
        once = once.model(ModelRef {
            provider_id: m.provider_id,
            model_id: m.model_id,
        });
    }
    let task = start_work(
        &shared,
        served,
        Work::Shell(body.command),
        (None, None),
        once,
    );
    task.await
        .map_err(|error| Failure::Internal(format!("the shell command's task failed: {error}")))?
        .map(Json)
}

/// Compacts the session now, the summary written by the body's model;
/// `true` once it is stored. Nothing to summarise yet is a 400.
#[utoipa::path(post, path = "/session/{sessionID}/summarize", params(("sessionID" = String, Path)), request_body = SummarizeBody, responses((status = 200, body = bool), (status = 400, body = super::wire::ErrorBody), (status = 404, body = super::wire::ErrorBody)))]
pub(crate) async fn summarize(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    JsonBody(body): JsonBody<SummarizeBody>,
) -> Result<Json<bool>, Failure> {
    let served = shared.served(&session_id).await?;
    let once = PromptOptions::default().model(ModelRef {
        provider_id: body.provider_id,
        model_id: body.model_id,
    });
    // On its own task: the compaction ends even if the client goes away.
    let task = tokio::spawn({
        let shared = Arc::clone(&shared);
        async move {
            shared
                .prompt_once(served, Work::Compact, (None, None), once)
                .await
        }
    });
    let result = task
        .await
        .map_err(|error| Failure::Internal(format!("the compaction's task failed: {error}")))??;
    match result.stop {
        StopReason::Done { .. } => Ok(Json(true)),
        StopReason::Cancelled => Err(Failure::Aborted(format!(
            "the compaction of session {session_id} was aborted"
        ))),
        StopReason::Error { error } if error.name == "compaction" => {
            Err(Failure::BadRequest(error.message))
        }
        StopReason::Error { error } => Err(Failure::Internal(format!(
            "the summary could not be written: {}",
            error.message
        ))),
        other => Err(Failure::Internal(format!(
            "the compaction stopped: {other:?}"
        ))),
    }
}
