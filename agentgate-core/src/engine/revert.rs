//! [`Engine::revert`], [`Engine::unrevert`] and [`Engine::diff`]: a
//! session's file changes taken back and put back, with opencode's
//! semantics, from the checkpoints its steps kept ([`Part::Patch`]).
//!
//! A revert point splits the session's patches in two: those before it
//! are applied, those from it on are taken back. Moving the point (a
//! first revert, a revert further back, a partial redo, an unrevert) moves
//! only the patches between the old point and the new one, in one
//! [`Checkpoints::apply`](crate::checkpoint::Checkpoints::apply) of their
//! net change, which refuses when a file changed since (unless forced).
//! The messages from the point on stay stored, hidden, until the next
//! prompt removes them.

use std::path::PathBuf;

use super::facade::Engine;
use super::text_diff::{DiffStatus, FileDiff};
use crate::checkpoint::Checkpoints;
use crate::checkpoint::{CheckpointError, Direction, FileChange, FileState, net_changes};
use crate::message::{Message, Part};
use crate::sessions::{RevertPoint, Session, SessionStore, SessionStoreError};

/// Why a revert, an unrevert or a diff failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RevertError {
    /// The store failed or does not know the session.
    #[error(transparent)]
    Store(#[from] SessionStoreError),
    /// A prompt of the session is running.
    #[error("session {0:?} is busy with a prompt: wait for it or cancel it, then revert")]
    Busy(String),
    /// The session has no such message, or the message no such part.
    #[error("session {session:?} has no {what}")]
    NotFound {
        /// The session.
        session: String,
        /// What was asked for (`message "msg_…"`, `part "prt_…" in message "msg_…"`).
        what: String,
    },
    /// The files could not be moved (a file changed since: see
    /// [`CheckpointError::Conflict`]); nothing was changed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// Where in a session's messages something is: (message, part) indexes.
type Position = (usize, usize);

/// The session's patches, in order, with where each is.
fn patches(messages: &[Message]) -> Vec<(Position, &[FileChange])> {
    let mut found = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        for (p, part) in message.parts.iter().enumerate() {
            if let Part::Patch { files, .. } = part {
                found.push(((m, p), files.as_slice()));
            }
        }
    }
    found
}

/// Where `point` is in `messages`.
fn position(
    session: &str,
    messages: &[Message],
    point: &RevertPoint,
) -> Result<Position, RevertError> {
    let m = messages
        .iter()
        .position(|m| m.id == point.message_id)
        .ok_or_else(|| RevertError::NotFound {
            session: session.to_string(),
            what: format!("message {:?}", point.message_id),
        })?;
    let p = match &point.part_id {
        None => 0,
        Some(part) => messages[m]
            .parts
            .iter()
            .position(|p| p.id() == part)
            .ok_or_else(|| RevertError::NotFound {
                session: session.to_string(),
                what: format!("part {part:?} in message {:?}", point.message_id),
            })?,
    };
    Ok((m, p))
}

/// The net change of the patches in `[from, to)`, and which way it moves
/// when the point goes from `from` to `to` (back when `to` is earlier).
fn between(
    messages: &[Message],
    current: Position,
    target: Position,
) -> (Vec<FileChange>, Direction) {
    let (low, high, direction) = if target < current {
        (target, current, Direction::Back)
    } else {
        (current, target, Direction::Forward)
    };
    let moved = patches(messages)
        .into_iter()
        .filter(|(at, _)| *at >= low && *at < high)
        .flat_map(|(_, files)| files.iter().cloned());
    (net_changes(moved), direction)
}

/// Revert, unrevert, undo, redo and per-message diffs over a session
/// store and its checkpoints: what [`Engine::revert`] and its siblings
/// run, for a host that holds the store but no engine (`agent sessions
/// revert`). It does not know which sessions are busy: the engine's
/// methods refuse a session with a running prompt, this does not.
pub struct Rewind<'a> {
    store: &'a dyn SessionStore,
    checkpoints: Option<&'a dyn Checkpoints>,
    root: Option<PathBuf>,
}

impl<'a> Rewind<'a> {
    /// Over `store`, the files moved through `checkpoints` (`None`: only
    /// the messages are hidden and shown again).
    pub fn new(store: &'a dyn SessionStore, checkpoints: Option<&'a dyn Checkpoints>) -> Self {
        Rewind {
            store,
            checkpoints,
            root: None,
        }
    }

    /// The project root the checkpoints were recorded under (default: each
    /// session's directory; an engine built with a worktree passes it).
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    fn root_of(&self, session: &Session) -> PathBuf {
        self.root
            .clone()
            .unwrap_or_else(|| session.directory.clone())
    }

    /// See [`Engine::revert`].
    pub async fn revert(
        &self,
        session_id: &str,
        message_id: &str,
        part_id: Option<&str>,
        force: bool,
    ) -> Result<Session, RevertError> {
        let point = RevertPoint::new(message_id, part_id.map(str::to_string));
        self.move_revert_point(session_id, Some(point), force).await
    }

    /// See [`Engine::unrevert`].
    pub async fn unrevert(&self, session_id: &str, force: bool) -> Result<Session, RevertError> {
        self.move_revert_point(session_id, None, force).await
    }
    /// See [`Engine::undo`]. Takes back the last prompt not yet taken back, as opencode's
    /// `/undo` does: reverts to before the last user message before the
    /// session's revert point (before its last user message, when it is not
    /// reverted). The session as it is then, with the prompt undone;
    /// `None` when there is nothing left to undo.
    pub async fn undo(
        &self,
        session_id: &str,
        force: bool,
    ) -> Result<Option<(Session, Message)>, RevertError> {
        let session = self.store.session(session_id).await?;
        let messages = self.store.messages(session_id).await?;
        let end = match &session.revert {
            Some(point) => position(session_id, &messages, point)?.0,
            None => messages.len(),
        };
        let Some(prompt) = messages[..end]
            .iter()
            .rev()
            .find(|m| m.role == crate::message::Role::User)
        else {
            return Ok(None);
        };
        let session = self.revert(session_id, &prompt.id, None, force).await?;
        Ok(Some((session, prompt.clone())))
    }

    /// See [`Engine::redo`]. Puts back one prompt [`undo`](Self::undo) took back, as opencode's
    /// `/redo` does: moves the revert point to the next user message, or
    /// unreverts when there is none. The session as it is then; `None` when
    /// nothing is reverted.
    pub async fn redo(
        &self,
        session_id: &str,
        force: bool,
    ) -> Result<Option<Session>, RevertError> {
        let session = self.store.session(session_id).await?;
        let Some(point) = &session.revert else {
            return Ok(None);
        };
        let messages = self.store.messages(session_id).await?;
        let at = position(session_id, &messages, point)?.0;
        let next = messages
            .iter()
            .skip(at + 1)
            .find(|m| m.role == crate::message::Role::User);
        let session = match next {
            Some(next) => self.revert(session_id, &next.id, None, force).await?,
            None => self.unrevert(session_id, force).await?,
        };
        Ok(Some(session))
    }

    /// Moves the revert point of `session_id` to `target` (`None`: the
    /// end, nothing reverted).
    async fn move_revert_point(
        &self,
        session_id: &str,
        target: Option<RevertPoint>,
        force: bool,
    ) -> Result<Session, RevertError> {
        let store = self.store;
        let mut session = store.session(session_id).await?;
        let messages = store.messages(session_id).await?;
        let end = (messages.len(), 0);
        let current = match &session.revert {
            Some(point) => position(session_id, &messages, point).unwrap_or(end),
            None => end,
        };
        let target_at = match &target {
            Some(point) => position(session_id, &messages, point)?,
            None => end,
        };
        let (changes, direction) = between(&messages, current, target_at);
        if !changes.is_empty()
            && let Some(checkpoints) = self.checkpoints
        {
            checkpoints
                .apply(&self.root_of(&session), &changes, direction, force)
                .await?;
        }
        session.revert = target;
        store.put_session(&session).await?;
        Ok(session)
    }

    /// Removes what a revert hid, when the session is reverted: the
    /// messages from its point on (and, for a point inside a message, that
    /// message's parts from it on). Run before a new prompt, as opencode's
    /// cleanup does; the session as it is then.
    pub async fn clean_up(&self, mut session: Session) -> Result<Session, SessionStoreError> {
        let Some(point) = session.revert.take() else {
            return Ok(session);
        };
        let store = self.store;
        let messages = store.messages(&session.id).await?;
        if let Ok((m, p)) = position(&session.id, &messages, &point) {
            let mut removed: Vec<String> = messages[m..].iter().map(|m| m.id.clone()).collect();
            if p > 0 {
                let mut kept = messages[m].clone();
                kept.parts.truncate(p);
                store.put_message(&kept).await?;
                removed.remove(0);
            }
            store.delete_messages(&session.id, &removed).await?;
        }
        store.put_session(&session).await?;
        Ok(session)
    }

    /// See [`Engine::diff`]. What session `session_id` changed in the project's files, per file
    /// with a unified diff (opencode's `GET /session/{id}/diff`): for
    /// `message_id` a user message, what the answer to it changed; for an
    /// assistant message, what its step changed; for `None`, the whole
    /// session. Hidden (reverted) messages count only when asked for by id.
    pub async fn diff(
        &self,
        session_id: &str,
        message_id: Option<&str>,
    ) -> Result<Vec<FileDiff>, RevertError> {
        let store = self.store;
        let session = store.session(session_id).await?;
        let messages = store.messages(session_id).await?;
        let range = match message_id {
            None => {
                let end = match &session.revert {
                    Some(point) => position(session_id, &messages, point)?,
                    None => (messages.len(), 0),
                };
                ((0, 0), end)
            }
            Some(id) => message_range(session_id, &messages, id)?,
        };
        let changes = between(&messages, range.0, range.1).0;
        let root = self.root_of(&session);
        let mut diffs = Vec::with_capacity(changes.len());
        // Folders are restored with their files but are not a diff's lines.
        let files = changes.iter().filter(|change| {
            !matches!(
                (&change.before, &change.after),
                (
                    Some(FileState::Dir { .. }) | None,
                    Some(FileState::Dir { .. }) | None
                )
            )
        });
        for change in files {
            diffs.push(self.file_diff(&root, change).await?);
        }
        Ok(diffs)
    }

    /// One file's diff, its contents read from the checkpoint store.
    async fn file_diff(
        &self,
        root: &std::path::Path,
        change: &FileChange,
    ) -> Result<FileDiff, RevertError> {
        let before = self.text_of(root, change.before.as_ref()).await?;
        let after = self.text_of(root, change.after.as_ref()).await?;
        let status = match (&change.before, &change.after) {
            (None, _) => DiffStatus::Added,
            (_, None) => DiffStatus::Deleted,
            _ => DiffStatus::Modified,
        };
        Ok(super::text_diff::file_diff(
            &change.path,
            status,
            before,
            after,
        ))
    }

    /// The text of a file state for a diff: a file's content (`None` when
    /// it is not UTF-8), a link's target, nothing for a directory.
    async fn text_of(
        &self,
        root: &std::path::Path,
        state: Option<&FileState>,
    ) -> Result<Option<String>, RevertError> {
        match state {
            Some(FileState::File { blob, .. }) => match self.checkpoints {
                Some(checkpoints) => {
                    let bytes = checkpoints.blob(root, blob).await?;
                    Ok(String::from_utf8(bytes).ok())
                }
                None => Ok(None),
            },
            Some(FileState::Symlink { target }) => Ok(Some(format!("-> {}\n", target.display()))),
            Some(FileState::Dir { .. }) | None => Ok(Some(String::new())),
        }
    }
}

impl Engine {
    /// The [`Rewind`] of this engine's store and checkpoints.
    fn rewind(&self) -> Rewind<'_> {
        let rewind = Rewind::new(self.store().as_ref(), self.state().checkpoints.as_deref());
        match &self.state().worktree {
            Some(worktree) => rewind.root(worktree.clone()),
            None => rewind,
        }
    }

    /// Refuses while a prompt of the session runs; holds it busy meanwhile.
    fn hold(&self, session_id: &str) -> Result<super::state::BusyGuard<'_>, RevertError> {
        self.mark_busy(session_id)
            .map_err(|_| RevertError::Busy(session_id.to_string()))
    }

    /// Reverts session `session_id` to before message `message_id` (or
    /// before its part `part_id`), as opencode's `POST
    /// /session/{id}/revert` does: the files every later step changed
    /// (file tools and commands alike) are put back as they were, and the
    /// messages from that point on are hidden until the next prompt
    /// removes them or [`unrevert`](Self::unrevert) puts everything back.
    /// Reverting an already reverted session moves its point, taking back
    /// or putting back only what lies between.
    ///
    /// Refuses, changing nothing, when a file to restore was changed since
    /// by someone else ([`CheckpointError::Conflict`], naming the files),
    /// unless `force`; and while a prompt of the session runs
    /// ([`RevertError::Busy`]).
    pub async fn revert(
        &self,
        session_id: &str,
        message_id: &str,
        part_id: Option<&str>,
        force: bool,
    ) -> Result<Session, RevertError> {
        let _guard = self.hold(session_id)?;
        self.rewind()
            .revert(session_id, message_id, part_id, force)
            .await
    }

    /// Puts back everything [`revert`](Self::revert) took back (opencode's
    /// `POST /session/{id}/unrevert`); the session as it is then. A session
    /// that is not reverted is returned unchanged.
    pub async fn unrevert(&self, session_id: &str, force: bool) -> Result<Session, RevertError> {
        let _guard = self.hold(session_id)?;
        self.rewind().unrevert(session_id, force).await
    }

    /// Takes back the last prompt not yet taken back (opencode's `/undo`):
    /// reverts to before the last user message before the revert point.
    /// The session and the prompt undone; `None` when nothing is left.
    pub async fn undo(
        &self,
        session_id: &str,
        force: bool,
    ) -> Result<Option<(Session, Message)>, RevertError> {
        let _guard = self.hold(session_id)?;
        self.rewind().undo(session_id, force).await
    }

    /// Puts back one prompt [`undo`](Self::undo) took back (opencode's
    /// `/redo`); `None` when nothing is reverted.
    pub async fn redo(
        &self,
        session_id: &str,
        force: bool,
    ) -> Result<Option<Session>, RevertError> {
        let _guard = self.hold(session_id)?;
        self.rewind().redo(session_id, force).await
    }

    /// What session `session_id` changed in the project's files, per file
    /// with a unified diff (opencode's `GET /session/{id}/diff`): for
    /// `message_id` a user message, what the answer to it changed; for an
    /// assistant message, what its step changed; for `None`, the whole
    /// session up to its revert point.
    pub async fn diff(
        &self,
        session_id: &str,
        message_id: Option<&str>,
    ) -> Result<Vec<FileDiff>, RevertError> {
        self.rewind().diff(session_id, message_id).await
    }

    /// Removes what a revert hid before a new prompt (see
    /// [`Rewind::clean_up`]).
    pub(super) async fn clean_up_revert(
        &self,
        session: Session,
    ) -> Result<Session, SessionStoreError> {
        self.rewind().clean_up(session).await
    }
}

/// The patches a message's diff covers: for a user message, its own and
/// those of the messages answering it (up to the next user message); for
/// another message, its own.
fn message_range(
    session: &str,
    messages: &[Message],
    id: &str,
) -> Result<(Position, Position), RevertError> {
    let m = messages
        .iter()
        .position(|m| m.id == id)
        .ok_or_else(|| RevertError::NotFound {
            session: session.to_string(),
            what: format!("message {id:?}"),
        })?;
    let end = if messages[m].role == crate::message::Role::User {
        messages[m + 1..]
            .iter()
            .position(|next| next.role == crate::message::Role::User)
            .map_or(messages.len(), |offset| m + 1 + offset)
    } else {
        m + 1
    };
    Ok(((m, 0), (end, 0)))
}
