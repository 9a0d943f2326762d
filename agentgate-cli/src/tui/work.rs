//! What the driver of `agent tui` waits on besides keys and asks: the
//! running turn (its events already turned into messages for the
//! screen, whether it runs here or on a server) and a custom command being
//! prepared here.

use std::future::Future;
use std::pin::Pin;

use agentgate::{CancellationToken, PreparedCommand};
use futures::stream::BoxStream;

use super::update::Msg;

/// The running turn.
pub struct Turn {
    /// Its events as messages; the last is [`Msg::Finished`].
    pub events: BoxStream<'static, Msg>,
    /// Cancels it.
    pub cancel: CancellationToken,
}

/// A custom command being prepared, or its sub-agent running.
pub type Work = Pin<Box<dyn Future<Output = WorkDone> + Send>>;

/// What a [`Work`] ended with.
pub enum WorkDone {
    /// A command was prepared (or why it was not sent).
    Prepared(Result<Box<PreparedCommand>, String>),
    /// A command's sub-agent answered (or failed).
    Subtask(Result<String, String>),
}

/// How a command starts.
pub enum Started {
    /// Its preparation runs here first.
    Work(Work, CancellationToken),
    /// Its turn runs.
    Turn(Turn),
    /// It did not start: why.
    Failed(String),
}
