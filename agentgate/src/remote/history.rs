//! What a client needs to show and rewind a server's sessions: the
//! sessions (`GET /session`), a session's messages (`GET
//! /session/{id}/message`), and taking back or putting back the last
//! prompt with the files it changed (`POST /session/{id}/revert`,
//! `/unrevert`), as opencode's `/undo` and `/redo` do. `agent tui
//! --attach` is built on these.

use serde_json::Value;

use super::client::{RemoteAgent, RemoteSession};
use super::error::RemoteError;
use super::event::RemoteToolCall;
use crate::protocol::{
    MessageWithParts, PartSummary, RevertBody, RevertInfo, SessionInfo, UnrevertBody,
};

/// One part of a stored message, as far as a client shows it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RemotePart {
    /// Text (a prompt's, or the model's answer).
    Text {
        /// The part's id.
        id: String,
        /// The text.
        text: String,
    },
    /// The model's reasoning.
    Reasoning {
        /// The part's id.
        id: String,
        /// The text.
        text: String,
    },
    /// A tool call in its last state.
    Tool(RemoteToolCall),
}

/// A stored message of a remote session.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteMessage {
    /// The message's id.
    pub id: String,
    /// `user` or `assistant`.
    pub role: String,
    /// Its parts a client shows (text written by the SDK itself, and kinds
    /// it does not know, left out).
    pub parts: Vec<RemotePart>,
    /// The message as the server described it (opencode's `Message`).
    pub info: Value,
}

/// The part `value` is, when a client shows it.
fn part_of(value: Value) -> Option<RemotePart> {
    let text = value
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string);
    let synthetic = value.get("synthetic").and_then(Value::as_bool) == Some(true);
    let part: PartSummary = serde_json::from_value(value).ok()?;
    match (part.kind.as_str(), text) {
        ("text", Some(text)) if !synthetic => Some(RemotePart::Text { id: part.id, text }),
        ("reasoning", Some(text)) => Some(RemotePart::Reasoning { id: part.id, text }),
        ("tool", _) => {
            let state = part.state.unwrap_or_default();
            Some(RemotePart::Tool(RemoteToolCall {
                part_id: part.id,
                call_id: part.call_id.unwrap_or_default(),
                tool: part.tool.unwrap_or_default(),
                status: state.status,
                input: state.input,
                title: state.title,
                output: state.output,
                error: state.error,
            }))
        }
        _ => None,
    }
}

/// The message `listed` is (`None`: it has no id).
fn message_of(listed: MessageWithParts) -> Option<RemoteMessage> {
    let id = listed.info.get("id")?.as_str()?.to_string();
    let role = listed
        .info
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("assistant")
        .to_string();
    Some(RemoteMessage {
        id,
        role,
        parts: listed.parts.into_iter().filter_map(part_of).collect(),
        info: listed.info,
    })
}

impl RemoteAgent {
    /// The server's sessions (`GET /session`), as the server orders them.
    pub async fn sessions(&self) -> Result<Vec<RemoteSession>, RemoteError> {
        let listed: Vec<Value> = self.get("/session").await?;
        listed
            .into_iter()
            .map(|info| self.session_from(info))
            .collect()
    }
}

impl RemoteSession {
    /// The session's messages, oldest first (`GET
    /// /session/{id}/message`), those a revert took back included (see
    /// [`revert_point`](Self::revert_point)).
    pub async fn messages(&self) -> Result<Vec<RemoteMessage>, RemoteError> {
        let path = format!("/session/{}/message", self.id());
        let listed: Vec<MessageWithParts> = self.agent.get(&path).await?;
        Ok(listed.into_iter().filter_map(message_of).collect())
    }

    /// The message the session is reverted to, as the server says now:
    /// it and every later message are taken back (`None`: nothing is).
    pub async fn revert_point(&self) -> Result<Option<String>, RemoteError> {
        let info: SessionInfo = self.agent.get(&format!("/session/{}", self.id())).await?;
        Ok(info.revert.map(|RevertInfo { message_id, .. }| message_id))
    }

    /// Takes back the last prompt still in effect and what its answer
    /// changed in the files (opencode's `/undo`): the session is reverted
    /// to that prompt. The prompt taken back; `None` when there is none.
    /// `force` restores files even when they changed since.
    pub async fn undo(&self, force: bool) -> Result<Option<RemoteMessage>, RemoteError> {
        let point = self.revert_point().await?;
        let messages = self.messages().await?;
        let end = point
            .and_then(|p| messages.iter().position(|m| m.id == p))
            .unwrap_or(messages.len());
        let Some(prompt) = messages[..end].iter().rev().find(|m| m.role == "user") else {
            return Ok(None);
        };
        let body = RevertBody {
            message_id: prompt.id.clone(),
            part_id: None,
            force,
        };
        self.agent
            .post(&format!("/session/{}/revert", self.id()), &body)
            .await?;
        Ok(Some(prompt.clone()))
    }

    /// Puts back one prompt [`undo`](Self::undo) took back (opencode's
    /// `/redo`): the revert point moves to the next prompt, or the session
    /// is unreverted when there is none. `false` when nothing was
    /// reverted.
    pub async fn redo(&self, force: bool) -> Result<bool, RemoteError> {
        let Some(point) = self.revert_point().await? else {
            return Ok(false);
        };
        let messages = self.messages().await?;
        let next = messages
            .iter()
            .skip_while(|m| m.id != point)
            .skip(1)
            .find(|m| m.role == "user");
        match next {
            Some(prompt) => {
                let body = RevertBody {
                    message_id: prompt.id.clone(),
                    part_id: None,
                    force,
                };
                self.agent
                    .post(&format!("/session/{}/revert", self.id()), &body)
                    .await?;
            }
            None => {
                let body = UnrevertBody { force };
                self.agent
                    .post(&format!("/session/{}/unrevert", self.id()), &body)
                    .await?;
            }
        }
        Ok(true)
    }
}
