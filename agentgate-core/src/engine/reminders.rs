//! Mode reminders: a note appended to the latest user message of the
//! request (never to the stored transcript) that tells the model which
//! mode it is in, as opencode does for its plan and build agents. The plan
//! agent's rules already refuse edits; the reminder is what keeps the
//! model from trying them and makes it answer with a plan instead.

use crate::compaction::history_for_model;
use crate::message::{Message, Role};
use crate::model::{ContentPart, ModelMessage, ModelRole};

/// The agents the reminders are for, by name as opencode checks them.
const PLAN_AGENT: &str = "plan";
const BUILD_AGENT: &str = "build";

/// Appended on every turn of the plan agent.
pub const PLAN_REMINDER: &str = "<system-reminder>\nPlan mode is on. This turn is for reading, searching and planning only: change nothing. No file edits or writes, and no command that modifies files, configuration, git state or anything else (commands may only read and inspect). This holds even when the user asks for a change in this turn. Investigate, ask the user about open questions and trade-offs, and answer with a concrete, concise plan that someone could carry out step by step.\n</system-reminder>";

/// Appended on a build turn of a session in which the plan agent answered
/// before: the plan's constraints no longer hold.
pub const BUILD_SWITCH_REMINDER: &str = "<system-reminder>\nPlanning is over: you are now in build mode. You may change files, run commands and use every tool you have to carry out the plan.\n</system-reminder>";

/// The reminder a turn of `agent` gets after `history`, if any.
pub fn mode_reminder(agent: &str, history: &[Message]) -> Option<&'static str> {
    if agent == PLAN_AGENT {
        return Some(PLAN_REMINDER);
    }
    let planned = history
        .iter()
        .any(|m| m.role == Role::Assistant && m.agent == PLAN_AGENT);
    (agent == BUILD_AGENT && planned).then_some(BUILD_SWITCH_REMINDER)
}

/// `history` as the model sees it in a turn of `agent`: the transcript's
/// model messages with the mode reminder appended to the latest user
/// message.
pub fn model_history(agent: &str, history: &[Message]) -> Vec<ModelMessage> {
    let mut messages = history_for_model(history);
    if let Some(reminder) = mode_reminder(agent, history)
        && let Some(user) = messages
            .iter_mut()
            .rev()
            .find(|m| m.role == ModelRole::User)
    {
        user.content.push(ContentPart::Text {
            text: reminder.to_string(),
            provider_metadata: None,
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(agent: &str) -> Message {
        let mut message = Message::new("ses_1", Role::Assistant);
        message.agent = agent.to_string();
        message
    }

    #[test]
    fn plan_always_build_only_after_plan() {
        assert_eq!(mode_reminder("plan", &[]), Some(PLAN_REMINDER));
        assert_eq!(mode_reminder("build", &[]), None);
        assert_eq!(mode_reminder("build", &[assistant("build")]), None);
        assert_eq!(
            mode_reminder("build", &[assistant("plan")]),
            Some(BUILD_SWITCH_REMINDER)
        );
        assert_eq!(mode_reminder("general", &[assistant("plan")]), None);
    }

    #[test]
    fn the_reminder_goes_on_the_latest_user_message() {
        let history = [
            Message::user("ses_1", "first"),
            assistant("plan"),
            Message::user("ses_1", "go"),
        ];
        let messages = model_history("build", &history);
        let last = messages
            .iter()
            .rev()
            .find(|m| m.role == ModelRole::User)
            .unwrap();
        assert_eq!(last.content.len(), 2);
        assert!(
            matches!(&last.content[1], ContentPart::Text { text, .. } if text == BUILD_SWITCH_REMINDER)
        );
        let first = messages.iter().find(|m| m.role == ModelRole::User).unwrap();
        assert_eq!(first.content.len(), 1);
    }
}
