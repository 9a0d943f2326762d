//! `agent sessions [list | show ID | export ID]` over the file session
//! store, and `agent approvals [list | revoke PERMISSION PATTERN]` over the
//! remembered "always" answers of the current directory (what `agent chat`
//! keeps).

use std::path::Path;

use agentgate_core::{Message, Part, Role, SessionStore, ToolState};
use agentgate_permission::{Action, ApprovalStore, Rule};
use serde_json::json;

use crate::render::{input_summary, one_line};
use crate::workspace::{approval_store, session_store, sessions_of};

/// `agent sessions list`: the directory's top-level sessions, oldest first.
pub async fn list(directory: &Path) -> Result<String, String> {
    let store = session_store().await?;
    let mut out = String::new();
    for session in sessions_of(store.as_ref(), directory).await? {
        let messages = store
            .messages(&session.id)
            .await
            .map_err(|e| e.to_string())?;
        let first = messages
            .iter()
            .find(|m| matches!(m.role, Role::User))
            .map(text_of);
        out.push_str(&format!(
            "{}  {:<8} {:>3} messages  {}\n",
            session.id,
            session.agent,
            messages.len(),
            one_line(&first.unwrap_or_default(), 60)
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

/// `agent sessions show ID`: the transcript for a person.
pub async fn show(id: &str) -> Result<String, String> {
    let store = session_store().await?;
    let session = store.session(id).await.map_err(|e| e.to_string())?;
    let mut out = format!(
        "session {} (agent {}) in {}\n",
        session.id,
        session.agent,
        session.directory.display()
    );
    for message in store.messages(id).await.map_err(|e| e.to_string())? {
        // `_` arms: agentgate-core's enums are becoming #[non_exhaustive].
        #[allow(unreachable_patterns)]
        let who = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            _ => "other",
        };
        out.push_str(&format!("\n[{who}]\n"));
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
    let session = store.session(id).await.map_err(|e| e.to_string())?;
    let messages = store.messages(id).await.map_err(|e| e.to_string())?;
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
