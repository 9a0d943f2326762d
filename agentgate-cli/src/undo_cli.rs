//! Taking work back: `agent chat`'s `/undo` and `/redo`, and `agent
//! sessions revert | unrevert | diff`, all through the engine's
//! checkpoints ([`agentgate::Engine::revert`]). Every path and prompt shown
//! is the model's or the project's text: printed terminal-safe.

use agentgate::{CodingAgent, Engine, FileDiff, Message, Part, RevertError, Rewind, SessionStore};

use crate::terminal_text::Untrusted;

/// `/undo [--force]` or `/redo [--force]`, as `command` and `argument`.
pub(crate) async fn slash(agent: &CodingAgent, command: &str, argument: &str) -> String {
    let force = argument == "--force";
    if command == "/undo" {
        undo(agent, force).await
    } else {
        redo(agent, force).await
    }
}

/// `/undo [--force]`: takes back the last prompt and what it changed.
async fn undo(agent: &CodingAgent, force: bool) -> String {
    let engine = agent.engine();
    let id = &agent.session().id;
    match engine.undo(id, force).await {
        Ok(None) => "nothing to undo\n".to_string(),
        Ok(Some((_, prompt))) => {
            let files = files_of(engine, id, &prompt.id).await;
            format!(
                "undid: {}\n{}/redo puts it back; the next prompt drops it\n",
                Untrusted::new(one_line(&prompt)),
                files
            )
        }
        Err(error) => failure(&error, "/undo --force"),
    }
}

/// `/redo [--force]`: puts back one prompt `/undo` took back.
async fn redo(agent: &CodingAgent, force: bool) -> String {
    let engine = agent.engine();
    let id = &agent.session().id;
    let before = engine.store().session(id).await.ok().and_then(|s| s.revert);
    match engine.redo(id, force).await {
        Ok(None) => "nothing to redo\n".to_string(),
        Ok(Some(_)) => {
            let files = match &before {
                Some(point) => files_of(engine, id, &point.message_id).await,
                None => String::new(),
            };
            format!("redone\n{files}")
        }
        Err(error) => failure(&error, "/redo --force"),
    }
}

/// The files message `message_id`'s answer changed, one per line.
async fn files_of(engine: &Engine, session_id: &str, message_id: &str) -> String {
    match engine.diff(session_id, Some(message_id)).await {
        Ok(diffs) if diffs.is_empty() => "  (no file changes)\n".to_string(),
        Ok(diffs) => diffs.iter().map(file_line).collect(),
        Err(error) => format!("  (files unknown: {})\n", Untrusted::new(error)),
    }
}

/// `  modified src/a.rs (+2 -1)`.
pub(crate) fn file_line(diff: &FileDiff) -> String {
    let status = diff.status.as_str();
    format!(
        "  {status:<8} {} (+{} -{})\n",
        Untrusted::new(&diff.file),
        diff.additions,
        diff.deletions
    )
}

/// A revert error with what to do about it.
pub(crate) fn failure(error: &RevertError, force: &str) -> String {
    match error {
        RevertError::Checkpoint(agentgate::CheckpointError::Conflict { .. }) => format!(
            "agent: {}\n(`{force}` overwrites them)\n",
            Untrusted::new(error)
        ),
        other => format!("agent: {}\n", Untrusted::new(other)),
    }
}

/// A prompt's text on one line, shortened.
fn one_line(message: &Message) -> String {
    let text: String = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text {
                text, synthetic, ..
            } if !synthetic => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ");
    crate::render::one_line(&text, 72)
}

/// `agent sessions revert ID MESSAGE [--part P] [--force]`.
pub(crate) async fn revert(
    id: &str,
    message: &str,
    part: Option<&str>,
    force: bool,
) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let checkpoints = crate::workspace::checkpoints();
    let rewind = Rewind::new(store.as_ref(), Some(&checkpoints));
    let session = rewind
        .revert(id, message, part, force)
        .await
        .map_err(|e| failure(&e, "agent sessions revert … --force"))?;
    let files = rewind
        .diff(id, Some(message))
        .await
        .map(|diffs| diffs.iter().map(file_line).collect::<String>())
        .unwrap_or_default();
    Ok(format!(
        "session {} reverted to before {message}\n{files}`agent sessions unrevert {id}` puts it back\n",
        session.id
    ))
}

/// `agent sessions unrevert ID [--force]`.
pub(crate) async fn unrevert(id: &str, force: bool) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let checkpoints = crate::workspace::checkpoints();
    let rewind = Rewind::new(store.as_ref(), Some(&checkpoints));
    let before = store.session(id).await.map_err(|e| e.to_string())?.revert;
    rewind
        .unrevert(id, force)
        .await
        .map_err(|e| failure(&e, "agent sessions unrevert … --force"))?;
    Ok(match before {
        Some(_) => format!("session {id}: everything put back\n"),
        None => format!("session {id} was not reverted\n"),
    })
}

/// `agent sessions diff ID [--message M] [--stat]`.
pub(crate) async fn diff(id: &str, message: Option<&str>, stat: bool) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let checkpoints = crate::workspace::checkpoints();
    let rewind = Rewind::new(store.as_ref(), Some(&checkpoints));
    let diffs = rewind
        .diff(id, message)
        .await
        .map_err(|e| failure(&e, "").trim_end().to_string())?;
    if diffs.is_empty() {
        return Ok("no file changes\n".to_string());
    }
    let mut out = String::new();
    for file in &diffs {
        out.push_str(&file_line(file));
        if !stat && !file.patch.is_empty() {
            out.push_str(&file.patch);
        }
    }
    Ok(out)
}
