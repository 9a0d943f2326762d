//! One remote turn: the event stream opened before the prompt is sent,
//! read with an idle timeout, filtered to the session; asks handed to the
//! approver on tasks of their own (so events keep flowing while a person
//! decides), answers posted back; an abort posted on cancel or drop.

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context, Poll};

use agentgate_providers::SseParser;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::client::{RemoteAgent, RemoteSession};
use super::error::RemoteError;
use super::event::{RemoteEvent, RemoteStop, RemoteTurn, Seen, TurnState};
use crate::permission::Reply;
use crate::protocol::{CommandBody, PartInput, PromptBody};

/// The most asks of one turn waiting on the approver at once; a server
/// sending more has the extra ones left unanswered (it waits for them).
const MAX_PENDING_ASKS: usize = 64;

/// A session's turns are streamed here, beside the machinery that follows
/// them (the client below knows nothing of turns).
impl RemoteSession {
    /// Runs `prompt` in the session: subscribes to the events first, sends
    /// the prompt (`prompt_async`), and streams the turn's events until it
    /// ends ([`RemoteEvent::Finished`](super::RemoteEvent::Finished)) or
    /// fails (an `Err` item, the last). The session's asks go to the
    /// agent's approver and its answers to the server; asks of other
    /// sessions are never answered. Dropping the stream, or
    /// [`RemoteStream::cancel`], aborts the turn on the server.
    pub async fn stream(&self, prompt: impl Into<String>) -> Result<RemoteStream, RemoteError> {
        let kickoff = Kickoff::Prompt(prompt.into());
        start(self.agent.clone(), self.id().to_string(), kickoff).await
    }
}

/// The events of one remote turn ([`RemoteSession::stream`](super::RemoteSession::stream)):
/// a [`Stream`] of [`RemoteEvent`]s ending with
/// [`RemoteEvent::Finished`], or with an `Err` when the server cannot be
/// followed to the turn's end. Dropping it before the end aborts the turn
/// on the server.
#[derive(Debug)]
pub struct RemoteStream {
    events: mpsc::Receiver<Result<RemoteEvent, RemoteError>>,
    cancel: CancellationToken,
}

impl RemoteStream {
    /// Aborts the turn on the server (`POST /session/{id}/abort`); the
    /// stream then ends with [`RemoteStop::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// A token that [cancels](Self::cancel) the turn, for another task
    /// (a Ctrl-C handler).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

impl Stream for RemoteStream {
    type Item = Result<RemoteEvent, RemoteError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_recv(cx)
    }
}

impl Drop for RemoteStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// What starts a turn.
pub(crate) enum Kickoff {
    /// A prompt (`POST /session/{id}/prompt_async`, answered at once).
    Prompt(String),
    /// A custom command (`POST /session/{id}/command`, answered when its
    /// turn ends: sent on a task of its own, its error, if any, ends the
    /// stream).
    Command(CommandBody),
}

/// Subscribes, starts the turn, and starts following it.
pub(crate) async fn start(
    agent: RemoteAgent,
    session_id: String,
    kickoff: Kickoff,
) -> Result<RemoteStream, RemoteError> {
    // The subscription first: the server publishes to the clients it has
    // when the event happens, so nothing of the turn is missed.
    let events = agent
        .send(agent.request(reqwest::Method::GET, "/event"), false)
        .await?;
    let (sender, receiver) = mpsc::channel(256);
    match kickoff {
        Kickoff::Prompt(prompt) => {
            let body = PromptBody {
                parts: vec![PartInput::text(prompt)],
                agent: None,
                model: None,
                no_reply: None,
            };
            let path = format!("/session/{session_id}/prompt_async");
            agent.post(&path, &body).await?;
        }
        Kickoff::Command(body) => {
            let (poster, errors) = (agent.clone(), sender.clone());
            let path = format!("/session/{session_id}/command");
            tokio::spawn(async move {
                // No request timeout: the answer comes when the turn ends.
                let request = poster.request(reqwest::Method::POST, &path).json(&body);
                if let Err(error) = poster.send(request, false).await {
                    let _ = errors.send(Err(error)).await;
                }
            });
        }
    }
    let cancel = CancellationToken::new();
    tokio::spawn(follow(agent, session_id, events, sender, cancel.clone()));
    Ok(RemoteStream {
        events: receiver,
        cancel,
    })
}

/// What an ask's task reports.
enum Answer {
    Decided(String, Reply),
    NotSent(String, RemoteError),
}

/// Follows the turn until the session goes idle, the stream fails, or the
/// consumer goes away.
async fn follow(
    agent: RemoteAgent,
    session_id: String,
    response: reqwest::Response,
    sender: mpsc::Sender<Result<RemoteEvent, RemoteError>>,
    cancel: CancellationToken,
) {
    let url = agent.url().to_string();
    let idle = agent.inner.idle_timeout;
    let mut body = response.bytes_stream();
    // The providers' parser, fed chunk by chunk rather than through
    // `sse_events`: the idle timeout is per chunk, so the server's
    // keep-alive comments (which make no event) keep a quiet turn alive.
    let max_event = agent.inner.max_event.max(1);
    let mut sse = SseParser::new().with_max_event_bytes(max_event);
    let mut state = TurnState::new(&session_id);
    let (answers_tx, mut answers) = mpsc::unbounded_channel::<Answer>();
    let mut pending: HashMap<String, AbortHandle> = HashMap::new();
    let mut rejected = false;
    let mut aborted = false;
    let outcome: Result<(), RemoteError> = 'turn: loop {
        tokio::select! {
            // Answers first: an answer this client sent is recorded before
            // the server's `permission.replied` for it is read.
            biased;
            Some(answer) = answers.recv() => match answer {
                Answer::Decided(request_id, reply) => {
                    pending.remove(&request_id);
                    if reply == Reply::reject() {
                        rejected = true;
                    }
                    let event = RemoteEvent::Replied { request_id, reply };
                    if sender.send(Ok(event)).await.is_err() {
                        cancel.cancel();
                    }
                }
                Answer::NotSent(request_id, error) => {
                    tracing::warn!(%request_id, %error, "the answer to an ask was not accepted");
                }
            },
            () = cancel.cancelled(), if !aborted => {
                aborted = true;
                if let Err(error) = agent.post(&format!("/session/{session_id}/abort"), &serde_json::Map::new()).await {
                    tracing::warn!(%error, "could not abort the remote turn");
                }
                if sender.is_closed() {
                    break 'turn Ok(());
                }
            }
            chunk = tokio::time::timeout(idle, body.next()) => {
                let bytes = match chunk {
                    Err(_) => break 'turn Err(RemoteError::Idle { url, seconds: idle.as_secs() }),
                    Ok(None | Some(Err(_))) => break 'turn Err(RemoteError::Disconnected { url }),
                    Ok(Some(Ok(bytes))) => bytes,
                };
                let events = sse.push(&bytes);
                if sse.overflowed() {
                    break 'turn Err(RemoteError::Protocol {
                        url,
                        reason: format!("an event larger than {max_event} bytes"),
                    });
                }
                for event in events {
                    match state.read(&event.data) {
                        Seen::Nothing => {}
                        Seen::Event(event) => {
                            if sender.send(Ok(event)).await.is_err() {
                                cancel.cancel();
                            }
                        }
                        Seen::Ask(request) => {
                            if pending.len() >= MAX_PENDING_ASKS || pending.contains_key(&request.id) {
                                tracing::warn!(id = %request.id, "leaving an ask unanswered: too many pending");
                                continue;
                            }
                            if sender.send(Ok(RemoteEvent::Asked(request.clone()))).await.is_err() {
                                cancel.cancel();
                                continue;
                            }
                            let id = request.id.clone();
                            let approver = agent.inner.approver.clone();
                            let client = agent.clone();
                            let report = answers_tx.clone();
                            let task = tokio::spawn(async move {
                                let reply = approver.approve(&request).await;
                                let _ = report.send(Answer::Decided(request.id.clone(), reply.clone()));
                                if let Err(error) = client.reply(&request.id, &reply).await {
                                    let _ = report.send(Answer::NotSent(request.id, error));
                                }
                            });
                            pending.insert(id, task.abort_handle());
                        }
                        // Answered elsewhere (the web page, another client):
                        // the approver's question is moot.
                        Seen::Answered(id) => {
                            if let Some(task) = pending.remove(&id) {
                                task.abort();
                            }
                        }
                        Seen::Idle => break 'turn Ok(()),
                    }
                }
            }
        }
    };
    for task in pending.values() {
        task.abort();
    }
    let item = outcome.map(|()| turn_end(&mut state, session_id, aborted, rejected));
    let _ = sender.send(item).await;
}

/// The turn's end from what was seen: cancelled (aborted here or
/// reported aborted), rejected, failed (an error event or an errored
/// answer) or done; its text, last answer, usage and error.
fn turn_end(
    state: &mut TurnState,
    session_id: String,
    aborted: bool,
    rejected: bool,
) -> RemoteEvent {
    let error = state.error.clone();
    let message_error = state
        .message
        .as_ref()
        .and_then(|m| m.pointer("/error/data/message"))
        .and_then(|m| m.as_str())
        .map(str::to_string);
    let aborted_error = error
        .as_ref()
        .is_some_and(|(name, _)| name == "MessageAbortedError");
    let stop = if aborted || aborted_error {
        RemoteStop::Cancelled
    } else if rejected {
        RemoteStop::Rejected
    } else if error.is_some() || message_error.is_some() {
        RemoteStop::Error
    } else {
        RemoteStop::Done
    };
    RemoteEvent::Finished(RemoteTurn {
        session_id,
        stop,
        text: std::mem::take(&mut state.text),
        message: state.message.take(),
        usage: state.tally.total(),
        error: match stop {
            RemoteStop::Error => error.map(|(_, message)| message).or(message_error),
            _ => None,
        },
    })
}
