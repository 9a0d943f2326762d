//! opencode's revert routes: `POST /session/{id}/revert` takes back what
//! the session did from a message (or part) on, files included;
//! `POST /session/{id}/unrevert` puts it all back; `GET
//! /session/{id}/diff?messageID=` lists what a message changed, per file
//! with a unified diff. See [`Engine::revert`](crate::Engine::revert).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};

use super::state::{Failure, Shared};
use super::wire::{RevertBody, SessionInfo, SnapshotFileDiff, UnrevertBody};
use crate::RevertError;
use crate::checkpoint::CheckpointError;
use crate::protocol::ServerEvent;

impl From<RevertError> for Failure {
    fn from(error: RevertError) -> Self {
        match error {
            RevertError::Store(error) => error.into(),
            RevertError::Busy(_) => Failure::Conflict("SessionBusyError", error.to_string()),
            RevertError::NotFound { .. } => Failure::NotFound(error.to_string()),
            RevertError::Checkpoint(CheckpointError::Conflict { .. }) => {
                Failure::Conflict("FileConflictError", error.to_string())
            }
            other => Failure::Internal(other.to_string()),
        }
    }
}

/// Reverts the session to before the body's message (or part): the files
/// its later steps changed are restored, the later messages hidden. 409
/// when a turn runs, or when a file changed since (unless `force`).
#[utoipa::path(post, path = "/session/{sessionID}/revert", params(("sessionID" = String, Path)), request_body = RevertBody, responses((status = 200, body = SessionInfo), (status = 404, body = super::wire::ErrorBody), (status = 409, body = super::wire::ErrorBody)))]
pub(crate) async fn revert(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<SessionInfo>, Failure> {
    let body: RevertBody = serde_json::from_slice(&body).map_err(|e| {
        Failure::BadRequest(format!(
            "the body is not a revert request ({{\"messageID\", \"partID\"?}}): {e}"
        ))
    })?;
    let served = shared.served(&session_id).await?;
    let session = served
        .agent
        .engine()
        .revert(
            &session_id,
            &body.message_id,
            body.part_id.as_deref(),
            body.force,
        )
        .await?;
    Ok(Json(changed(&shared, &session).await))
}

/// Puts back everything the session's revert took back. 409 when a turn
/// runs, or when a file changed since the revert (unless `force`).
#[utoipa::path(post, path = "/session/{sessionID}/unrevert", params(("sessionID" = String, Path)), responses((status = 200, body = SessionInfo), (status = 404, body = super::wire::ErrorBody), (status = 409, body = super::wire::ErrorBody)))]
pub(crate) async fn unrevert(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<SessionInfo>, Failure> {
    let body: UnrevertBody = if body.iter().all(u8::is_ascii_whitespace) {
        UnrevertBody::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Failure::BadRequest(format!("the body is not {{\"force\"?}}: {e}")))?
    };
    let served = shared.served(&session_id).await?;
    let session = served
        .agent
        .engine()
        .unrevert(&session_id, body.force)
        .await?;
    Ok(Json(changed(&shared, &session).await))
}

/// The query of `GET /session/{id}/diff`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct DiffQuery {
    #[serde(rename = "messageID")]
    message_id: Option<String>,
}

/// What the query's message changed (every message's, without one), per
/// file.
#[utoipa::path(get, path = "/session/{sessionID}/diff", params(("sessionID" = String, Path), ("messageID" = Option<String>, Query)), responses((status = 200, body = Vec<SnapshotFileDiff>), (status = 404, body = super::wire::ErrorBody)))]
pub(crate) async fn diff(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    Query(query): Query<DiffQuery>,
) -> Result<Json<Vec<SnapshotFileDiff>>, Failure> {
    let served = shared.served(&session_id).await?;
    let diffs = served
        .agent
        .engine()
        .diff(&session_id, query.message_id.as_deref())
        .await?;
    Ok(Json(
        diffs
            .into_iter()
            .map(|diff| SnapshotFileDiff {
                status: diff.status.as_str().to_string(),
                file: diff.file,
                patch: diff.patch,
                additions: diff.additions,
                deletions: diff.deletions,
            })
            .collect(),
    ))
}

/// `session` as answered, announced as `session.updated`.
async fn changed(shared: &Shared, session: &crate::Session) -> SessionInfo {
    let info = shared.session_info(session).await;
    shared
        .bus
        .session_changed(ServerEvent::SessionUpdated, &info.id, &info);
    info
}
