//! What can go wrong talking to a server, each saying what to do about it.

/// An error of [`RemoteAgent`](super::RemoteAgent) or of a turn's stream.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is not an `http://` or `https://` URL.
    #[error("invalid server URL {url:?}: {reason} (give one like http://127.0.0.1:4096)")]
    InvalidUrl {
        /// What was given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// A session id holds characters no server id has.
    #[error("{id:?} is not a session id (ids look like ses_…)")]
    InvalidId {
        /// What was given.
        id: String,
    },
    /// Nothing answered at the URL (refused, unresolvable, timed out).
    #[error("cannot reach {url}: {reason} (is `agent serve` running at {url}?)")]
    Unreachable {
        /// The server's URL.
        url: String,
        /// What the connection said.
        reason: String,
    },
    /// The server wants a password this client did not give or got wrong.
    #[error(
        "{url} refused the credentials (HTTP 401): set OPENCODE_SERVER_PASSWORD (or AGENT_SERVER_PASSWORD) to the server's password"
    )]
    Unauthorized {
        /// The server's URL.
        url: String,
    },
    /// The server answered an error status.
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's message (its `data.message`, else the body's start).
        message: String,
    },
    /// The event stream went silent for longer than the idle timeout.
    #[error(
        "{url} sent nothing for {seconds} s during the turn: the server may be stuck or gone (check `agent serve`, or raise the idle timeout)"
    )]
    Idle {
        /// The server's URL.
        url: String,
        /// The idle timeout, in seconds.
        seconds: u64,
    },
    /// The event stream ended before the turn did.
    #[error(
        "the event stream of {url} ended before the turn did: the server stopped or dropped this client (the turn may still run there; see GET /session/ID/message)"
    )]
    Disconnected {
        /// The server's URL.
        url: String,
    },
    /// The server sent something this client cannot read.
    #[error("{url} sent an unreadable answer: {reason}")]
    Protocol {
        /// The server's URL.
        url: String,
        /// What was wrong.
        reason: String,
    },
}
