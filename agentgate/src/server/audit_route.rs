//! `GET /audit`: the audit log of permission decisions, behind the
//! server's auth like every route.

use std::sync::Arc;

use agentgate_store::{AuditQuery, AuditRecord, Verification};
use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::state::{Failure, Shared};

/// The query of `GET /audit`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub(crate) struct AuditParams {
    /// Only this session's entries.
    session: Option<String>,
    /// Only entries at or after this time, milliseconds since the epoch.
    since: Option<i64>,
    /// `true`: verify the hash chain instead of listing.
    #[serde(default)]
    verify: bool,
}

/// The audit log: its entries in chain order (`session`, `since` select),
/// or with `verify=true` the chain's verdict (`{entries, broken}`; `broken`
/// names the first entry altered or removed).
#[utoipa::path(get, path = "/audit", params(AuditParams), responses((status = 200, body = Vec<Object>), (status = 404, body = super::wire::ErrorBody)))]
pub(crate) async fn audit(
    State(shared): State<Arc<Shared>>,
    Query(params): Query<AuditParams>,
) -> Result<Response, Failure> {
    let Some(log) = &shared.audit else {
        return Err(Failure::NotFound(
            "this server keeps no audit log: serve with a SQLite or PostgreSQL store".into(),
        ));
    };
    if params.verify {
        let verdict: Verification = log
            .verify_audit()
            .await
            .map_err(|e| Failure::Internal(e.to_string()))?;
        return Ok(Json(verdict).into_response());
    }
    let query = AuditQuery {
        session: params.session,
        since_ms: params.since,
    };
    let records: Vec<AuditRecord> = log
        .audit_entries(&query)
        .await
        .map_err(|e| Failure::Internal(e.to_string()))?;
    Ok(Json(records).into_response())
}
