//! `agent sessions [list | show ID | export ID | delete ID | rename ID
//! TITLE | fork ID]` over the CLI's session store, and `agent approvals
//! [list | revoke PERMISSION PATTERN]` over the remembered "always" answers
//! of the current directory (what `agent chat` keeps).

use std::path::Path;

use agentgate_core::{Message, Part, Role, Session, SessionStore, SessionStoreError, ToolState};
use agentgate_permission::{Action, ApprovalStore, Rule};
use serde_json::json;

use crate::render::{input_summary, one_line};
use crate::workspace::{approval_store, session_store, sessions_of};

/// A store error in CLI words: an unknown session points at `agent
/// sessions list`.
fn store_error(id: &str, error: SessionStoreError) -> String {
    match error {
        SessionStoreError::NotFound(_) | SessionStoreError::InvalidId(_) => {
            format!("no session {id:?}: `agent sessions list` shows the sessions of this directory")
        }
        SessionStoreError::MessageNotFound { message, .. } => format!(
            "session {id} has no message {message:?}: `agent sessions show {id}` lists its messages"
        ),
        other => other.to_string(),
    }
}

/// `ms` since the Unix epoch as local `YYYY-MM-DD HH:MM` (`-` for a
/// session stored before sessions had times).
fn local_time(ms: u64) -> String {
    use chrono::TimeZone;
    let Ok(ms) = i64::try_from(ms) else {
        return "-".into();
    };
    match chrono::Local.timestamp_millis_opt(ms) {
        chrono::LocalResult::Single(time) if ms > 0 => time.format("%Y-%m-%d %H:%M").to_string(),
        _ => "-".into(),
    }
}

/// `agent sessions list`: the directory's top-level sessions, the most
/// recently updated first: id, last update, message count and title (the
/// first prompt for a session without one).
pub async fn list(directory: &Path) -> Result<String, String> {
    let store = session_store().await?;
    let mut sessions = sessions_of(store.as_ref(), directory).await?;
    sessions.sort_by(|a, b| {
        b.time
            .updated
            .cmp(&a.time.updated)
            .then_with(|| b.id.cmp(&a.id))
    });
    let mut out = String::new();
    for session in sessions {
        let messages = store
            .messages(&session.id)
            .await
            .map_err(|e| e.to_string())?;
        let title = if session.title.is_empty() {
            messages
                .iter()
                .find(|m| matches!(m.role, Role::User))
                .map(text_of)
                .unwrap_or_default()
        } else {
            session.title.clone()
        };
        out.push_str(&format!(
            "{}  {:<16}  {:>3} messages  {}\n",
            session.id,
            local_time(session.time.updated),
            messages.len(),
            one_line(&title, 60)
        ));
    }
    if out.is_empty() {
        out.push_str("no sessions in this directory\n");
    }
    Ok(out)
}

fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// `agent sessions delete ID`: the session and its messages.
pub async fn delete(id: &str) -> Result<String, String> {
    let store = session_store().await?;
    store
        .delete_session(id)
        .await
        .map_err(|e| store_error(id, e))?;
    Ok(format!("deleted session {id}\n"))
}

/// `agent sessions rename ID TITLE`.
pub async fn rename(id: &str, title: &str) -> Result<String, String> {
    let title = title.trim();
    if title.is_empty() {
        return Err("the new title is empty: `agent sessions rename ID TITLE`".into());
    }
    let store = session_store().await?;
    let session = store
        .rename_session(id, title)
        .await
        .map_err(|e| store_error(id, e))?;
    Ok(format!(
        "renamed session {}: {}\n",
        session.id, session.title
    ))
}

/// `agent sessions fork ID [--message MSG_ID]`: prints the new session's id.
pub async fn fork(id: &str, message: Option<&str>) -> Result<String, String> {
    let store = session_store().await?;
    let session: Session = store
        .fork_session(id, message)
        .await
        .map_err(|e| store_error(id, e))?;
    Ok(format!("{}\n", session.id))
}

/// `agent sessions show ID`: the transcript for a person.
pub async fn show(id: &str) -> Result<String, String> {
    let store = session_store().await?;
    let session = store.session(id).await.map_err(|e| store_error(id, e))?;
    let mut out = format!(
        "session {} (agent {}) in {}\n",
        session.id,
        session.agent,
        session.directory.display()
    );
    if !session.title.is_empty() {
        out.push_str(&format!("title: {}\n", one_line(&session.title, 200)));
    }
    out.push_str(&format!(
        "created {}, updated {}\n",
        local_time(session.time.created),
        local_time(session.time.updated)
    ));
    for message in store.messages(id).await.map_err(|e| store_error(id, e))? {
        // `_` arms: agentgate-core's enums are becoming #[non_exhaustive].
        #[allow(unreachable_patterns)]
        let who = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            _ => "other",
        };
        match &message.model {
            Some(model) => out.push_str(&format!("\n[{who} {model}]\n")),
            None => out.push_str(&format!("\n[{who}]\n")),
        }
        for part in &message.parts {
            match part {
                Part::Text { text, .. } => out.push_str(&format!("{}\n", text.trim_end())),
                Part::Tool(tool) => {
                    #[allow(unreachable_patterns)]
                    let (input, status) = match &tool.state {
                        ToolState::Completed { input, .. } => (input, "ok".to_string()),
                        ToolState::Error { input, error, .. } => {
                            (input, format!("error: {}", one_line(error, 80)))
                        }
                        ToolState::Running { input, .. } | ToolState::Pending { input, .. } => {
                            (input, "unfinished".into())
                        }
                        _ => continue,
                    };
                    out.push_str(&format!(
                        "  tool {} {} ({status})\n",
                        tool.tool,
                        input_summary(input)
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// `agent sessions export ID`: the session and its messages as JSON.
pub async fn export(id: &str) -> Result<String, String> {
    let store = session_store().await?;
    let session = store.session(id).await.map_err(|e| store_error(id, e))?;
    let messages = store.messages(id).await.map_err(|e| store_error(id, e))?;
    let value = json!({ "session": session, "messages": messages });
    serde_json::to_string_pretty(&value)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string())
}

/// `agent approvals list`: the remembered rules of `directory`.
pub fn approvals(directory: &Path) -> Result<String, String> {
    let rules = approval_store()?
        .list(&directory.display().to_string())
        .map_err(|e| e.to_string())?;
    if rules.0.is_empty() {
        return Ok("no remembered approvals for this directory\n".into());
    }
    Ok(rules
        .0
        .iter()
        .map(|r| format!("{} {:?} {}\n", r.permission, r.pattern, r.action))
        .collect())
}

/// `agent approvals revoke PERMISSION PATTERN`: forgets an approval.
pub fn revoke(directory: &Path, permission: &str, pattern: &str) -> Result<bool, String> {
    approval_store()?
        .revoke(
            &directory.display().to_string(),
            &Rule::new(permission, pattern, Action::Allow),
        )
        .map_err(|e| e.to_string())
}
