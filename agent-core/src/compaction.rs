//! Compaction (§14.2): when the context is full, the head of the
//! conversation is replaced by a model-written summary.
//!
//! The loop compacts when a step's usage reaches
//! [`usable`] tokens (then a synthetic user message,
//! [`CONTINUE_PROMPT`], lets the model go on), when the provider reports a
//! context overflow, or when a prompt starts on a session whose last answer
//! already filled the context (then the last real user message is replayed
//! after the summary). With [`CompactionConfig::auto`] off none of this
//! happens and the turn ends with
//! [`StopReason::ContextOverflow`](crate::StopReason::ContextOverflow).
//!
//! A compaction:
//!
//! 1. keeps the last [`CompactionConfig::tail_turns`] user turns verbatim
//!    when they fit [`preserve_budget`] (tokens estimated as characters ÷ 4);
//!    if the newest turns do not fit, fewer are kept (whole turns only,
//!    unlike opencode, which may split the oldest kept turn);
//! 2. sends everything before that tail — starting with the previous
//!    summary, if any — to the model under the `compaction` agent (its
//!    system prompt if registered, tools declared but not callable), with
//!    tool outputs cut to [`TOOL_OUTPUT_LIMIT`] characters and
//!    [`SUMMARY_PROMPT`] last;
//! 3. stores a user message with a [`Part::Compaction`] listing the kept
//!    message ids, then the summary as an assistant message with
//!    [`Message::summary`] set. From then on
//!    [`to_model_messages`](crate::to_model_messages) sends the summary (as
//!    a [`SUMMARY_QUESTION`] / answer pair), the kept tail and what follows,
//!    never the summarised head. The transcript itself keeps everything.
//!
//! A summary call that fails (it overflows too, or returns no text) ends
//! the turn with [`StopReason::Error`](crate::StopReason::Error); two
//! compactions without a successful step in between end it with
//! `ContextOverflow` instead of looping. Summary calls do not count as
//! steps and are not part of [`TurnResult::messages`](crate::TurnResult).

use crate::message::{Message, Part, Role, append_model_messages};
use crate::model::{ContentPart, ModelLimits, ModelMessage, ModelRole};
use crate::overflow::{CompactionConfig, usable};

/// The prompt of the summary call (appended after the summarised history).
pub const SUMMARY_PROMPT: &str = "\
Write a summary of the conversation above so that work can continue from it without the \
original messages. If the conversation starts with an earlier summary, update that summary: \
keep what still holds, add what is new, drop what is obsolete. Use exactly these Markdown \
sections:

## Goal
What the user wants to achieve, in their terms.

## Instructions
Every instruction, preference and constraint the user gave that still applies.

## Discoveries
What was learned about the code, the environment and the problem: facts, decisions and \
their reasons, dead ends not to try again.

## Accomplished
What has been done, what is in progress, and what remains, in order.

## Relevant files
The files and directories that matter, each with one line on why.

Be specific (names, paths, commands, error messages) and concise. Reply with the summary only.";

/// The user side of the question/answer pair a summary is sent as.
pub const SUMMARY_QUESTION: &str = "What did we do so far?";

/// The synthetic user message that follows an automatic compaction.
pub const CONTINUE_PROMPT: &str = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.";

/// Tool outputs in the summarised head are cut to this many characters.
pub const TOOL_OUTPUT_LIMIT: usize = 2000;

/// The token budget of the kept tail: `preserve_recent_tokens`, else
/// `clamp(usable / 4, 2000, 8000)`.
pub fn preserve_budget(limits: &ModelLimits, config: &CompactionConfig) -> u64 {
    config
        .preserve_recent_tokens
        .unwrap_or_else(|| (usable(limits, config) / 4).clamp(2000, 8000))
}

/// Estimated tokens of model messages: characters ÷ 4, rounded up.
pub fn estimate_tokens(messages: &[ModelMessage]) -> u64 {
    let chars: usize = messages
        .iter()
        .flat_map(|m| &m.content)
        .map(|part| match part {
            ContentPart::Text { text, .. } | ContentPart::Reasoning { text, .. } => {
                text.chars().count()
            }
            ContentPart::ToolCall { name, input, .. } => name.len() + input.to_string().len(),
            ContentPart::ToolResult { output, .. } => output.chars().count(),
            ContentPart::File { url, .. } => url.len(),
        })
        .sum();
    (chars as u64).div_ceil(4)
}

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
pub fn visible_history(history: &[Message]) -> (Option<&Message>, Vec<&Message>) {
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
pub fn append_summary(summary: &Message, out: &mut Vec<ModelMessage>) {
    out.push(ModelMessage::user(SUMMARY_QUESTION));
    out.push(ModelMessage {
        role: ModelRole::Assistant,
        content: vec![ContentPart::Text {
            text: summary.text(),
            provider_metadata: None,
        }],
    });
}

fn has_text(message: &Message, real_only: bool) -> bool {
    message.parts.iter().any(|part| match part {
        Part::Text {
            synthetic, text, ..
        } => !text.is_empty() && (!real_only || !*synthetic),
        _ => false,
    })
}

fn cut_tool_outputs(messages: &mut [ModelMessage]) {
    for part in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if let ContentPart::ToolResult { output, .. } = part {
            if let Some((at, _)) = output.char_indices().nth(TOOL_OUTPUT_LIMIT) {
                output.truncate(at);
                output.push_str("\n[output cut for the summary]");
            }
        }
    }
}

/// What one compaction does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The summary call's messages (ending with [`SUMMARY_PROMPT`]).
    pub request: Vec<ModelMessage>,
    /// Ids of the messages kept verbatim.
    pub kept: Vec<String>,
    /// The user parts to replay after the summary (overflow compaction).
    pub replay: Option<Vec<Part>>,
}

/// Plans a compaction of `history`, or `None` when there is nothing to
/// summarise. With `replay_last_user`, the last real user message and what
/// follows it are left out (that message is replayed afterwards).
pub(crate) fn plan(
    history: &[Message],
    budget: u64,
    tail_turns: u32,
    replay_last_user: bool,
) -> Option<Plan> {
    let (summary, visible) = visible_history(history);
    let mut end = visible.len();
    let mut replay = None;
    if replay_last_user {
        if let Some(last) = visible
            .iter()
            .rposition(|m| m.role == Role::User && has_text(m, true))
        {
            end = last;
            let parts = visible[last]
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text {
                        text,
                        provider_metadata,
                        ..
                    } => Some(Part::Text {
                        id: crate::ids::ascending("prt"),
                        text: text.clone(),
                        synthetic: false,
                        provider_metadata: provider_metadata.clone(),
                    }),
                    _ => None,
                })
                .collect();
            replay = Some(parts);
        }
    }
    let candidates = &visible[..end];
    let starts: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User && has_text(m, false))
        .map(|(i, _)| i)
        .collect();
    let max_turns = (tail_turns as usize).min(starts.len());
    let start = (0..=max_turns)
        .rev()
        .map(|k| {
            if k == 0 {
                end
            } else {
                starts[starts.len() - k]
            }
        })
        .find(|&start| {
            if start == end {
                return true;
            }
            if start == 0 && summary.is_none() {
                return false; // nothing left to summarise
            }
            let mut tail = Vec::new();
            for message in &candidates[start..] {
                append_model_messages(message, &mut tail);
            }
            estimate_tokens(&tail) <= budget
        })
        .unwrap_or(end);
    let head = &candidates[..start];
    if head.is_empty() && summary.is_none() {
        return None;
    }
    let mut request = Vec::new();
    if let Some(summary) = summary {
        append_summary(summary, &mut request);
    }
    for message in head {
        append_model_messages(message, &mut request);
    }
    cut_tool_outputs(&mut request);
    request.push(ModelMessage::user(SUMMARY_PROMPT));
    Some(Plan {
        request,
        kept: candidates[start..].iter().map(|m| m.id.clone()).collect(),
        replay,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::user("ses", text)
    }

    fn answer(text: &str) -> Message {
        let mut m = Message::new("ses", Role::Assistant);
        m.parts.push(Part::text(text));
        m.finish = Some(crate::FinishReason::Stop);
        m
    }

    #[test]
    fn keeps_the_tail_that_fits_and_summarises_the_head() {
        let history = vec![
            user("one"),
            answer(&"a".repeat(40_000)),
            user("two"),
            answer("b"),
            user("three"),
            answer("c"),
        ];
        let planned = plan(&history, 2000, 2, false).unwrap();
        assert_eq!(
            planned.kept,
            [&history[2], &history[3], &history[4], &history[5]].map(|m| m.id.clone())
        );
        assert_eq!(planned.request.len(), 3, "user one, long answer, prompt");
        // A tail that does not fit shrinks to fewer turns.
        let history = vec![
            user("one"),
            answer("a"),
            user("two"),
            answer(&"b".repeat(10_000)),
        ];
        let shrunk = plan(&history, 2000, 2, false).unwrap();
        assert!(shrunk.kept.is_empty());
        assert_eq!(shrunk.request.len(), 5);
    }

    #[test]
    fn visible_history_starts_at_the_summary() {
        let mut history = vec![user("one"), answer("a"), user("two"), answer("b")];
        let mut request = Message::new("ses", Role::User);
        request.parts.push(Part::Compaction {
            id: "p".into(),
            auto: true,
            overflow: false,
            kept: vec![history[2].id.clone(), history[3].id.clone()],
        });
        let mut summary = answer("the summary");
        summary.summary = true;
        history.extend([request, summary, user("three")]);
        let (found, visible) = visible_history(&history);
        assert_eq!(found.unwrap().text(), "the summary");
        let texts: Vec<String> = visible.iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["two", "b", "three"]);
        let model = crate::to_model_messages(&history);
        assert_eq!(model[0], ModelMessage::user(SUMMARY_QUESTION));
        assert_eq!(model.len(), 5);
    }
}
