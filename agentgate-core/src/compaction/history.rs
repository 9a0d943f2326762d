//! What the model sees of a compacted transcript: the latest complete
//! summary (as a question/answer pair), the tail it kept, and every message
//! after it.

use crate::message::{Message, Part, Role, append_model_messages};
use crate::model::{ContentPart, ModelMessage, ModelRole};

/// The user side of the question/answer pair a summary is sent as.
pub const SUMMARY_QUESTION: &str = "What did we do so far?";

fn is_complete_summary(message: &Message) -> bool {
    message.summary
        && message.role == Role::Assistant
        && message.error.is_none()
        && message.finish.is_some()
}

/// What is sent of a transcript: the latest complete summary (if any) and
/// the messages after it in model order — the tail it kept, then every
/// message after the summary. Without a summary, every message except
/// failed summaries.
pub(crate) fn visible_history(history: &[Message]) -> (Option<&Message>, Vec<&Message>) {
    let Some(pivot) = history.iter().rposition(is_complete_summary) else {
        return (None, history.iter().filter(|m| !m.summary).collect());
    };
    let kept: &[String] = history[..pivot]
        .iter()
        .rev()
        .find_map(|m| {
            m.parts.iter().find_map(|part| match part {
                Part::Compaction { kept, .. } => Some(kept.as_slice()),
                _ => None,
            })
        })
        .unwrap_or_default();
    let mut visible: Vec<&Message> = history[..pivot]
        .iter()
        .filter(|m| kept.contains(&m.id))
        .collect();
    visible.extend(history[pivot + 1..].iter().filter(|m| !m.summary));
    (Some(&history[pivot]), visible)
}

/// Appends a summary as a question/answer pair.
pub(crate) fn append_summary(summary: &Message, out: &mut Vec<ModelMessage>) {
    out.push(ModelMessage::user(SUMMARY_QUESTION));
    out.push(ModelMessage {
        role: ModelRole::Assistant,
        content: vec![ContentPart::Text {
            text: summary.text(),
            provider_metadata: None,
        }],
    });
}

/// Converts a transcript into model input as the engine sends it: after a
/// compaction, only the latest complete summary (as a "What did we do so far?" /
/// answer pair), the messages it kept and the messages after it; without
/// one, every message except failed summaries. Each message converts as
/// [`to_model_messages`](crate::transcript::to_model_messages) describes.
pub fn history_for_model(history: &[Message]) -> Vec<ModelMessage> {
    let (summary, visible) = visible_history(history);
    let mut out = Vec::with_capacity(visible.len() * 2 + 2);
    if let Some(summary) = summary {
        append_summary(summary, &mut out);
    }
    for message in visible {
        append_model_messages(message, &mut out);
    }
    out
}
