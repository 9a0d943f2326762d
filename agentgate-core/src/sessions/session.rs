//! [`Session`]: a conversation with one agent.

use std::path::PathBuf;

use agentgate_permission::Ruleset;
use serde::{Deserialize, Serialize};

use crate::model::ModelRef;

/// A conversation with one agent. Fields grow between versions: build
/// one with [`Session::new`] and the `with_` methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Session {
    /// Session id (`ses_…`).
    pub id: String,
    /// The parent session of a sub-agent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// A title for UIs.
    pub title: String,
    /// The agent's name.
    pub agent: String,
    /// Session rules, evaluated after the agent's (so they override them).
    #[serde(default)]
    pub permission: Ruleset,
    /// The working directory.
    pub directory: PathBuf,
    /// The model this session runs on (`None`: the engine's model). Set by
    /// the task tool for sub-agents with their own model; resolved through
    /// [`EngineBuilder::model_resolver`](crate::EngineBuilder::model_resolver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// For a sub-agent session: the rules of the sessions above it, nearest
    /// parent last (each `merge(agent.permission, session.permission)` of a
    /// parent as it was when the child was created). Every request of this
    /// session gets the stricter answer of its own rules and each of these,
    /// so a child never has more power than its parents (a deliberate
    /// difference from opencode, which passes only session denies down).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<Ruleset>,
    /// When the session was created and last updated (ms since the Unix
    /// epoch; `0` in sessions stored before the field existed). Stores move
    /// `updated` forward whenever a message is stored
    /// ([`SessionStore::put_message`](super::SessionStore::put_message)).
    #[serde(default)]
    pub time: SessionTime,
    /// Where the session is reverted to, when it is (see
    /// [`Engine::revert`](crate::Engine::revert)): the files are as they
    /// were before that point, and the messages from it on are hidden until
    /// the next prompt removes them or
    /// [`Engine::unrevert`](crate::Engine::unrevert) puts everything back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revert: Option<RevertPoint>,
}

/// Where a session is reverted to: before message `message_id`, or before
/// its part `part_id` (opencode's `revert.messageID` / `revert.partID`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RevertPoint {
    /// The first message taken back (or the message of the first part).
    pub message_id: String,
    /// The first part taken back, when only part of the message is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_id: Option<String>,
}

impl RevertPoint {
    /// Before message `message_id`, or before its part `part_id`.
    pub fn new(message_id: impl Into<String>, part_id: Option<String>) -> Self {
        RevertPoint {
            message_id: message_id.into(),
            part_id,
        }
    }
}

/// When a session was created and last changed, in ms since the Unix epoch
/// (opencode's `time.created` / `time.updated`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionTime {
    /// When the session was created.
    #[serde(default)]
    pub created: u64,
    /// When a message of it was last stored (or it was renamed).
    #[serde(default)]
    pub updated: u64,
}

impl SessionTime {
    /// Created and updated at `ms`.
    pub fn at(ms: u64) -> Self {
        SessionTime {
            created: ms,
            updated: ms,
        }
    }

    /// Moves `updated` forward to `ms` (never backwards).
    pub fn touch(&mut self, ms: u64) {
        self.updated = self.updated.max(ms);
    }
}

impl Session {
    /// A new session with a fresh id for `agent` in `directory`.
    pub fn new(agent: impl Into<String>, directory: impl Into<PathBuf>) -> Self {
        Session {
            id: crate::ids::ascending("ses"),
            parent_id: None,
            title: String::new(),
            agent: agent.into(),
            permission: Ruleset::default(),
            directory: directory.into(),
            model: None,
            ceilings: Vec::new(),
            time: SessionTime::at(crate::ids::now_ms()),
            revert: None,
        }
    }

    /// The same session with `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The same session with session rules (evaluated after the agent's).
    pub fn with_permission(mut self, permission: Ruleset) -> Self {
        self.permission = permission;
        self
    }

    /// The same session on `model` instead of the engine's.
    pub fn with_model(mut self, model: ModelRef) -> Self {
        self.model = Some(model);
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sessions_stored_before_times_existed_still_load() {
        let old = r#"{"id":"ses_1","title":"t","agent":"build","directory":"/w"}"#;
        let session: Session = serde_json::from_str(old).unwrap();
        assert_eq!(session.time, SessionTime::default());
        let mut time = SessionTime::at(5);
        time.touch(3);
        assert_eq!(time.updated, 5);
        time.touch(9);
        assert_eq!((time.created, time.updated), (5, 9));
    }
}
