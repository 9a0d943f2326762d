//! How the server answers what went wrong: a [`Failure`] or a rejected
//! body as opencode's JSON error `{name, data: {message}}` with its
//! status, and [`JsonBody`], a JSON body whose rejections are answered so.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::state::Failure;
use super::wire::{ErrorBody, ErrorData};

/// An error answer: `{name, data: {message}}` with `status`.
pub(crate) fn api_error(status: StatusCode, name: &str, message: String) -> Response {
    let body = ErrorBody {
        name: name.to_string(),
        data: ErrorData {
            message,
            routes: None,
        },
    };
    (status, Json(body)).into_response()
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        match self {
            Failure::BadRequest(m) => api_error(StatusCode::BAD_REQUEST, "BadRequestError", m),
            Failure::NotFound(m) => api_error(StatusCode::NOT_FOUND, "NotFoundError", m),
            Failure::Aborted(m) => api_error(StatusCode::CONFLICT, "MessageAbortedError", m),
            Failure::Conflict(name, m) => api_error(StatusCode::CONFLICT, name, m),
            Failure::Internal(m) => api_error(StatusCode::INTERNAL_SERVER_ERROR, "UnknownError", m),
            Failure::Parked(m) => api_error(StatusCode::ACCEPTED, "SessionParkedError", m),
        }
    }
}

/// A JSON body whose rejections (malformed, wrong content type, too
/// large) are answered as JSON errors with their status.
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(api_error(
                rejection.status(),
                "BadRequestError",
                rejection.body_text(),
            )),
        }
    }
}
