//! The approval page at `/`: sessions, the live transcript and the asks
//! waiting for an answer, with once / always / reject / reject-with-feedback
//! buttons. Three static files compiled into the binary (no build step, no
//! third-party script); the page is a client of the same routes as any
//! other, so it needs nothing the API does not offer.
//!
//! Everything the agent, the model or the project produced reaches the page
//! as JSON and is shown with `textContent` only; the content security
//! policy allows scripts, styles and connections from the server itself and
//! nothing else (no inline script, no framing), so hostile text in a
//! transcript or a diff cannot run as code.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");

/// The page's routes, as the unknown-route answer lists them (they are not
/// part of the API, so `/doc` leaves them out).
pub(crate) const ROUTES: &[&str] = &[
    "GET / (the approval page)",
    "GET /page/app.js",
    "GET /page/app.css",
];

/// The policy every page file is served with.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

fn file(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(POLICY),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page.
pub(crate) async fn index() -> Response {
    file(INDEX, "text/html; charset=utf-8")
}

/// `GET /page/app.js`: its script.
pub(crate) async fn script() -> Response {
    file(SCRIPT, "text/javascript; charset=utf-8")
}

/// `GET /page/app.css`: its style.
pub(crate) async fn style() -> Response {
    file(STYLE, "text/css; charset=utf-8")
}
