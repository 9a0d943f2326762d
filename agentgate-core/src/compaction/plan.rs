//! Planning a compaction: which tail is kept, what the summary call sees.

use super::config::CompactionSettings;
use super::history::{append_summary, visible_history};
use super::overflow::usable;
use crate::message::{Message, Part, Role, append_model_messages};
use crate::model::{ContentPart, ModelLimits, ModelMessage};

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

/// The synthetic user message that follows an automatic compaction.
pub const CONTINUE_PROMPT: &str = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.";

/// Tool outputs in the summarised head are cut to this many characters.
pub const TOOL_OUTPUT_LIMIT: usize = 2000;

/// The token budget of the kept tail: `preserve_recent_tokens`, else
/// `clamp(usable / 4, 2000, 8000)`.
pub fn preserve_budget(limits: &ModelLimits, config: &CompactionSettings) -> u64 {
    config
        .preserve_recent_tokens
        .unwrap_or_else(|| (usable(limits, config) / 4).clamp(2000, 8000))
}

/// What an image counts for in [`estimate_tokens`].
const IMAGE_TOKENS: usize = 1_600;

/// Estimated tokens of model messages: characters ÷ 4, rounded up; an
/// image counts for 1,600 tokens.
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
            // Providers bill an image by its size in pixels (Anthropic:
            // about 1,600 tokens at most), not by its base64 length.
            ContentPart::File { media_type, .. } if media_type.starts_with("image/") => {
                IMAGE_TOKENS * 4
            }
            ContentPart::File { url, .. } => url.len(),
        })
        .sum();
    (chars as u64).div_ceil(4)
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
        if let ContentPart::ToolResult { output, .. } = part
            && let Some((at, _)) = output.char_indices().nth(TOOL_OUTPUT_LIMIT)
        {
            output.truncate(at);
            output.push_str("\n[output cut for the summary]");
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
    if replay_last_user
        && let Some(last) = visible
            .iter()
            .rposition(|m| m.role == Role::User && has_text(m, true))
    {
        end = last;
        replay = Some(replayed_text(visible[last]));
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

/// The text parts of `message`, as new parts (fresh ids, not synthetic)
/// to send again after the summary.
fn replayed_text(message: &Message) -> Vec<Part> {
    message
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
        .collect()
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
        m.finish = Some(crate::stream::FinishReason::Stop);
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
        let model = crate::compaction::history_for_model(&history);
        assert_eq!(
            model[0],
            ModelMessage::user(crate::compaction::history::SUMMARY_QUESTION)
        );
        assert_eq!(model.len(), 5);
    }
}
