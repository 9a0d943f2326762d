//! The HTTP client that remote MCP servers are reached through (rmcp's
//! streamable-HTTP transport, which is built on reqwest 0.13).
//!
//! rmcp's own default client uses rustls' aws-lc provider, a C library
//! whose build doubled the SDK's cold compile. This client uses the same
//! TLS stack as every other client of the SDK (rustls with the ring provider
//! and the Mozilla roots of `webpki-roots`, as reqwest 0.12's `rustls-tls`
//! does for the providers and webfetch), with the behaviour rmcp's default
//! has: no idle connection reuse and redirects followed only when they keep
//! the origin and the request body.

use std::sync::Arc;

use reqwest_mcp::redirect::{Attempt, Policy};
use reqwest_mcp::{Client, StatusCode};

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// Builds the client for one remote MCP server.
///
/// Errors (a TLS configuration rustls refuses) are returned as text for
/// [`McpError`](super::McpError)'s connect failure; none is expected with
/// the fixed configuration below.
pub(crate) fn streamable_http_client() -> Result<Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration refused: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // reqwest 0.13 is built without HTTP/2 here; say so in the handshake.
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Client::builder()
        .tls_backend_preconfigured(tls)
        // A connection kept idle after a partly read response stalls the
        // next request on delayed ACKs; MCP sessions are few and long-lived.
        .pool_max_idle_per_host(0)
        .redirect(Policy::custom(follow_same_origin))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// Follows a redirect only when it keeps the origin (the session id and the
/// configured headers, often credentials, must not reach another host) and
/// the method and body (307/308: a 301/302/303 would turn the JSON-RPC POST
/// into a GET without its message). Anything else comes back to rmcp as the
/// redirect response, which it reports as an error naming the status.
fn follow_same_origin(attempt: Attempt<'_>) -> reqwest_mcp::redirect::Action {
    let keeps_body = matches!(
        attempt.status(),
        StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
    );
    let same_origin = attempt
        .previous()
        .first()
        .is_some_and(|first| first.origin() == attempt.url().origin());
    if !keeps_body || !same_origin {
        attempt.stop()
    } else if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error(format!(
            "more than {MAX_REDIRECTS} redirects; configure the final URL of the MCP server"
        ))
    } else {
        attempt.follow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;

    /// No process-wide crypto provider is installed in this test binary, so
    /// this fails (reqwest panics) if the client relied on one.
    #[tokio::test]
    async fn https_goes_through_rustls_without_a_process_default_provider() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = streamable_http_client().unwrap();
        let request = tokio::spawn(async move {
            client
                .get(format!("https://127.0.0.1:{port}/mcp"))
                .send()
                .await
        });
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut hello = vec![0u8; 4096];
        let n = socket.read(&mut hello).await.unwrap();
        drop(socket);
        // A TLS record of type handshake (22), then a ClientHello (1) that
        // offers only http/1.1 through ALPN.
        assert_eq!(
            hello[0],
            22,
            "not a TLS handshake: {:?}",
            &hello[..n.min(16)]
        );
        assert_eq!(hello[5], 1, "not a ClientHello");
        let hello = &hello[..n];
        // The ALPN extension (type 16) with one protocol: http/1.1.
        let alpn: &[u8] = b"\x00\x10\x00\x0b\x00\x09\x08http/1.1";
        assert!(hello.windows(alpn.len()).any(|w| w == alpn));
        assert!(
            request.await.unwrap().is_err(),
            "the handshake cannot complete"
        );
    }

    /// A configured header (often a token) must not follow a redirect to
    /// another origin; a same-origin 307 keeps the POST and its body.
    #[tokio::test]
    async fn redirects_keep_the_origin_and_the_body() {
        use wiremock::matchers::{body_string, header, method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};

        let elsewhere = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0)
            .mount(&elsewhere)
            .await;
        let server = MockServer::start().await;
        Mock::given(path("/away"))
            .respond_with(
                ResponseTemplate::new(307)
                    .insert_header("location", format!("{}/mcp", elsewhere.uri())),
            )
            .mount(&server)
            .await;
        Mock::given(path("/moved"))
            .respond_with(ResponseTemplate::new(308).insert_header("location", "/mcp"))
            .mount(&server)
            .await;
        Mock::given(path("/see-other"))
            .respond_with(ResponseTemplate::new(303).insert_header("location", "/mcp"))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/mcp"))
            .and(header("authorization", "Bearer secret"))
            .and(body_string("{}"))
            .respond_with(ResponseTemplate::new(200).set_body_string("reached"))
            .expect(1)
            .mount(&server)
            .await;

        let client = streamable_http_client().unwrap();
        let post = |route: &str| {
            client
                .post(format!("{}{route}", server.uri()))
                .header("authorization", "Bearer secret")
                .body("{}")
                .send()
        };
        assert_eq!(post("/away").await.unwrap().status(), 307);
        assert_eq!(post("/see-other").await.unwrap().status(), 303);
        let followed = post("/moved").await.unwrap();
        assert_eq!(followed.status(), 200);
        assert_eq!(followed.text().await.unwrap(), "reached");
    }
}
