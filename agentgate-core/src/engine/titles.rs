//! Session titles written by the hidden `title` agent, as opencode's
//! `ensureTitle` writes them: after a session's first real user message, in
//! the background, with no tools; a failure is logged and changes nothing.
//!
//! - Only a top-level session whose title is still empty gets one (the
//!   `task` tool titles sub-agent sessions itself; a title given by the
//!   host, e.g. `agent run --title`, is kept).
//! - Only for the first user message that is not wholly synthetic.
//! - The request: the `title` agent's system prompt and temperature, the
//!   user message "Generate a title for this conversation:" and then the
//!   conversation up to that first message (a message made only of
//!   sub-agent requests contributes their prompts), no tools.
//! - The model: the `title` agent's configured `model` when the engine can
//!   serve it, else the one [`SessionTitles`] names.
//! - The answer: `<think>…</think>` blocks dropped, the first non-empty
//!   line trimmed, cut to 97 characters plus `...` when longer than 100.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::facade::Engine;
use crate::agent_spec::AgentSpec;
use crate::agents::builtin_prompt;
use crate::message::{Message, Part, Role, to_model_messages};
use crate::model::{LanguageModel, ModelMessage, ModelRequest, ToolChoice};
use crate::sessions::Session;
use crate::stream::StreamEvent;

use super::title_setting::{SessionTitles, TITLE_AGENT};

/// Whether a user message is the user's own (not wholly synthetic).
fn is_real_user(message: &Message) -> bool {
    message.role == Role::User
        && !message.parts.iter().all(|part| {
            matches!(
                part,
                Part::Text {
                    synthetic: true,
                    ..
                }
            )
        })
}

impl Engine {
    /// Starts writing the title of `session` in the background when it needs
    /// one (see the module documentation); `history` holds the prompt's user
    /// message, `model` is the model the prompt runs on.
    pub(super) fn start_title(
        &self,
        session: &Session,
        history: &[Message],
        model: &Arc<dyn LanguageModel>,
    ) {
        let engine = self;
        let state = engine.state();
        if !state.titles.is_on() || session.parent_id.is_some() || !session.title.is_empty() {
            return;
        }
        let Some(first) = history.iter().position(is_real_user) else {
            return;
        };
        if history.iter().filter(|m| is_real_user(m)).count() != 1 {
            return;
        }
        let agent = state.agents.get(TITLE_AGENT).cloned().unwrap_or_else(|| {
            let mut agent = AgentSpec::new(TITLE_AGENT);
            agent.system = builtin_prompt(TITLE_AGENT)
                .map(|p| vec![p.to_string()])
                .unwrap_or_default();
            agent.temperature = Some(0.5);
            Arc::new(agent)
        });
        let title_model = agent
            .model
            .as_ref()
            .and_then(|wanted| engine.model_named(Some(wanted)).ok())
            .or_else(|| match &state.titles {
                SessionTitles::Model(model) => Some(Arc::clone(model)),
                SessionTitles::SessionModel => Some(Arc::clone(model)),
                SessionTitles::Off => None,
            });
        let Some(title_model) = title_model else {
            return;
        };
        let request = title_request(&agent, &history[..=first]);
        let engine = engine.clone();
        let session_id = session.id.clone();
        let task = tokio::spawn(async move {
            match ask_title(title_model.as_ref(), request).await {
                Ok(Some(title)) => store_title(&engine, &session_id, title).await,
                Ok(None) => {
                    tracing::debug!(session = %session_id, "the title model wrote no title")
                }
                Err(error) => {
                    tracing::warn!(session = %session_id, %error, "failed to generate a session title")
                }
            }
        });
        let mut tasks = state.title_tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }
}

/// The request for the title of the conversation `context` (which ends
/// with the first real user message).
fn title_request(agent: &AgentSpec, context: &[Message]) -> ModelRequest {
    let mut messages = vec![ModelMessage::user(
        "Generate a title for this conversation:\n",
    )];
    let first = context.last();
    let subtasks: Vec<&str> = first
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|part| match part {
                    Part::Subtask { prompt, .. } => Some(prompt.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let only_subtasks =
        first.is_some_and(|m| !subtasks.is_empty() && subtasks.len() == m.parts.len());
    if only_subtasks {
        messages.push(ModelMessage::user(subtasks.join("\n")));
    } else {
        messages.extend(to_model_messages(context));
    }
    let mut request = ModelRequest::new(messages)
        .with_system(agent.system.clone())
        .with_tool_choice(ToolChoice::None);
    request.temperature = agent.temperature;
    request.top_p = agent.top_p;
    request
}

/// Calls the model and returns its cleaned answer.
async fn ask_title(
    model: &dyn LanguageModel,
    request: ModelRequest,
) -> Result<Option<String>, String> {
    let mut stream = model
        .stream(request, CancellationToken::new())
        .await
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        if let StreamEvent::TextDelta { delta, .. } = event.map_err(|e| e.to_string())? {
            text.push_str(&delta);
        }
    }
    Ok(clean_title(&text))
}

/// opencode's cleaning of the title model's answer.
pub(crate) fn clean_title(text: &str) -> Option<String> {
    let mut rest = text;
    let mut kept = String::new();
    while let Some(open) = rest.find("<think>") {
        kept.push_str(&rest[..open]);
        match rest[open..].find("</think>") {
            Some(close) => {
                rest = rest[open + close + "</think>".len()..].trim_start();
            }
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    kept.push_str(rest);
    let line = kept.lines().map(str::trim).find(|line| !line.is_empty())?;
    if line.chars().count() > 100 {
        let cut: String = line.chars().take(97).collect();
        return Some(format!("{cut}..."));
    }
    Some(line.to_string())
}

/// Stores `title` unless the session got one meanwhile (or is gone); the
/// session's `time.updated` is left as it is, as opencode leaves it.
async fn store_title(engine: &Engine, session_id: &str, title: String) {
    let store = engine.store();
    let mut session = match store.session(session_id).await {
        Ok(session) => session,
        Err(error) => {
            tracing::warn!(session = %session_id, %error, "cannot store the session title");
            return;
        }
    };
    if !session.title.is_empty() {
        return;
    }
    session.title = title;
    if let Err(error) = store.put_session(&session).await {
        tracing::warn!(session = %session_id, %error, "cannot store the session title");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_cleaned_as_opencode_cleans_them() {
        assert_eq!(
            clean_title("<think>hmm\nmaybe</think>\n\n  Fixing login bug  \nmore"),
            Some("Fixing login bug".to_string())
        );
        assert_eq!(clean_title("\n \n"), None);
        let long = "x".repeat(120);
        let cleaned = clean_title(&long).unwrap_or_default();
        assert_eq!(cleaned.chars().count(), 100);
        assert!(cleaned.ends_with("..."));
        assert_eq!(
            clean_title(&"é".repeat(100)).map(|t| t.chars().count()),
            Some(100)
        );
    }
}
