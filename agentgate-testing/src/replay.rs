//! Loopback servers replaying recorded provider streams.
//!
//! The provider tests (and the CLI's) answer a model's HTTP call with a
//! server-sent-event body from a wiremock server on 127.0.0.1; nothing
//! reaches the internet.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockBuilder, MockServer, Respond, ResponseTemplate};

/// A 200 response whose body is `body`, sent as `text/event-stream`.
pub fn sse(body: impl Into<Vec<u8>>) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_raw(body.into(), "text/event-stream")
}

/// The start of a route: `POST` to exactly `route`; add matchers with
/// `.and(...)`.
pub fn post(route: &str) -> MockBuilder {
    Mock::given(method("POST")).and(path(route))
}

/// Starts a server on loopback that answers what `route` matches with
/// `response`.
pub async fn serve(route: MockBuilder, response: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    route.respond_with(response).mount(&server).await;
    server
}

/// An HTTP client that never reuses a connection. Clients usually share a
/// pool; across tests that would carry idle connections from one
/// short-lived server to the next started on the same port, and a request
/// on such a dead connection fails at random ("error sending request").
pub fn http_client() -> reqwest::Client {
    match reqwest::Client::builder().pool_max_idle_per_host(0).build() {
        Ok(client) => client,
        Err(error) => panic!("cannot build the test HTTP client: {error}"),
    }
}
