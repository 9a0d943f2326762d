//! Who may call the server: [`Auth`] (opencode's basic auth, user
//! `opencode` by default), compared in constant time, and the request
//! guard that also refuses cross-site requests (an `Origin` that is neither
//! the server's own nor a configured CORS origin) and, on a server without
//! a password, `Host` names other than loopback ones (DNS rebinding).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use subtle::ConstantTimeEq;

use super::answers::api_error;

/// The user name opencode's clients send when none is configured.
pub const DEFAULT_USERNAME: &str = "opencode";

/// How clients authenticate.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Auth {
    /// Anyone who reaches the socket (only allowed on a loopback address).
    None,
    /// HTTP basic auth, as `opencode serve` with `OPENCODE_SERVER_PASSWORD`.
    Basic {
        /// The user name (opencode's default: [`DEFAULT_USERNAME`]).
        username: String,
        /// The password.
        password: String,
    },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
        }
    }
}

impl Auth {
    /// Basic auth with user [`DEFAULT_USERNAME`].
    pub fn password(password: impl Into<String>) -> Self {
        Auth::Basic {
            username: DEFAULT_USERNAME.to_string(),
            password: password.into(),
        }
    }

    /// Basic auth with a fresh random password (32 base64url characters
    /// from the OS's random source), for a host that prints it once.
    ///
    /// # Errors
    /// When the OS has no random source.
    pub fn generated() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes)?;
        Ok(Auth::password(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
        ))
    }

    /// Whether `headers` carry the right credentials.
    pub(crate) fn allows(&self, headers: &HeaderMap) -> bool {
        let Auth::Basic { username, password } = self else {
            return true;
        };
        let Some(given) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("basic").then_some(rest.trim())
            })
            .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        else {
            return false;
        };
        let expected = format!("{username}:{password}");
        // Constant time over the expected length: the comparison does not
        // tell how much of a guess was right.
        given.ct_eq(expected.as_bytes()).into()
    }
}

/// What the guard checks.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    pub(crate) auth: Auth,
    pub(crate) cors: Arc<Vec<String>>,
}

/// Whether `host` (a `Host` header value, port included) names the
/// loopback interface.
fn loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The authority (`host:port`) of an origin (`scheme://host:port`).
fn origin_authority(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, rest)| rest)
}

/// Refuses requests from other sites and without the right credentials.
pub(crate) async fn guard(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if guard.auth == Auth::None && !host.is_empty() && !loopback_host(&host) {
        return api_error(
            StatusCode::FORBIDDEN,
            "ForbiddenError",
            format!(
                "host {host:?} is not a loopback name; a server without a password answers only 127.0.0.1, ::1 and localhost"
            ),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let same_site = origin_authority(origin).eq_ignore_ascii_case(&host);
        if !same_site && !guard.cors.iter().any(|o| o == origin) {
            return api_error(
                StatusCode::FORBIDDEN,
                "ForbiddenError",
                format!(
                    "origin {origin:?} is not allowed; start the server with --cors {origin} to allow it"
                ),
            );
        }
    }
    if !guard.auth.allows(headers) {
        let mut response = api_error(
            StatusCode::UNAUTHORIZED,
            "UnauthorizedError",
            "this server needs basic auth: user `opencode` (or as configured) and the server's password".to_string(),
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"agent\""),
        );
        return response.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn basic(credentials: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(credentials)
        );
        headers.insert(header::AUTHORIZATION, value.parse().unwrap());
        headers
    }

    #[test]
    fn basic_auth_needs_the_user_and_the_password() {
        let auth = Auth::password("s3cret");
        assert!(auth.allows(&basic("opencode:s3cret")));
        assert!(!auth.allows(&basic("opencode:s3cre")));
        assert!(!auth.allows(&basic("someone:s3cret")));
        assert!(!auth.allows(&HeaderMap::new()));
        assert!(Auth::None.allows(&HeaderMap::new()));
    }

    #[test]
    fn generated_passwords_differ_and_are_not_printed_by_debug() {
        let (a, b) = (Auth::generated().unwrap(), Auth::generated().unwrap());
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(match &a {
            Auth::Basic { password, .. } => password.as_str(),
            Auth::None => unreachable!(),
        }));
    }

    #[test]
    fn loopback_names() {
        for host in ["127.0.0.1:4096", "localhost:1", "[::1]:80", "localhost"] {
            assert!(loopback_host(host), "{host}");
        }
        for host in ["evil.example:4096", "10.0.0.1:80", "[fe80::1]:80"] {
            assert!(!loopback_host(host), "{host}");
        }
    }
}
