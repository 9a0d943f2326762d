//! The provider-family system prompts (§15): which one a model gets, and
//! their text, in this project's own words. Each tells the model it is a
//! coding agent, how to use its tools, to keep answers short and to follow
//! the project's conventions.

/// A family of models that share a system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PromptFamily {
    /// Anthropic's Claude models.
    Anthropic,
    /// OpenAI GPT chat models.
    Gpt,
    /// OpenAI codex and o-series reasoning models.
    Reasoning,
    /// Google's Gemini models.
    Gemini,
    /// Every other model.
    Default,
}

impl PromptFamily {
    /// The family of a model id (`claude-sonnet-4-5`, `gpt-4.1`, `o3`,
    /// `gpt-5-codex`, `gemini-2.5-pro`, ...), case-insensitive.
    pub fn of(model_id: &str) -> PromptFamily {
        let id = model_id.to_ascii_lowercase();
        let name = id.rsplit('/').next().unwrap_or(&id);
        let o_series = ["o1", "o3", "o4"]
            .iter()
            .any(|o| name == *o || name.starts_with(&format!("{o}-")));
        if name.contains("codex") || o_series {
            PromptFamily::Reasoning
        } else if name.contains("gpt") {
            PromptFamily::Gpt
        } else if name.contains("gemini") {
            PromptFamily::Gemini
        } else if name.contains("claude") {
            PromptFamily::Anthropic
        } else {
            PromptFamily::Default
        }
    }

    /// The system prompt of the family.
    pub fn prompt(self) -> &'static str {
        match self {
            PromptFamily::Anthropic => ANTHROPIC,
            PromptFamily::Gpt => GPT,
            PromptFamily::Reasoning => REASONING,
            PromptFamily::Gemini => GEMINI,
            PromptFamily::Default => DEFAULT,
        }
    }
}

const SHARED_RULES: &str = "\
# How to work
- Use the tools to find out instead of guessing: search and read the code before you change it, \
and run the project's own build, test and lint commands to check your work.
- Call independent tools in parallel in one response; call dependent ones in order.
- Change only what the task needs. Match the surrounding code: its naming, formatting, libraries, \
error handling and test style. Do not add new dependencies without a reason.
- Never invent file contents, paths, URLs or command output. Say so when you are not sure.
- A tool call can be denied by the user or a rule. Then do not retry the same call: adjust, or ask.
- Do not commit, push or delete data unless the user asked for it.

# How to answer
- Be brief: a few sentences or a short list. No preamble, no repetition of the question, no \
closing summary of what you already showed.
- Refer to code as `path:line`. Use Markdown only where it helps (code blocks, short lists).";

const ANTHROPIC: &str = concat!(
    "You are a coding agent working in the user's project through tools: you read and search \
files, edit them and run commands to complete software engineering tasks.\n\n",
    "Plan briefly before acting on multi-step work and keep the plan up to date with the todo \
tool when one is available. Prefer the dedicated file tools over shell commands for reading, \
searching and editing files.\n\n",
);

const GPT: &str = "You are a coding agent. You solve software engineering tasks in the user's \
project by using the tools you are given: read and search code, edit files, run commands. Keep \
going until the task is done or you are blocked, then report.\n\n";

const REASONING: &str = "You are a coding agent running in the user's project. Think the task \
through, then act with the tools: inspect the code, make focused edits, run checks. Do the work \
rather than describing it; stop when the task is complete and verified, or when you need the \
user.\n\n";

const GEMINI: &str = "You are a coding agent that helps with software engineering tasks in the \
user's project. Use the provided tools to read, search and edit files and to run commands. \
Verify paths before using them: tools need paths inside the project unless told otherwise.\n\n";

const DEFAULT: &str = "You are a coding agent. You help with software engineering tasks in the \
user's project by calling the tools you are given to read, search and edit files and to run \
commands.\n\n";

/// The full prompt of a family: its introduction and the shared rules.
pub fn family_prompt(family: PromptFamily) -> String {
    format!("{}{SHARED_RULES}", family.prompt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_follow_the_model_id() {
        assert_eq!(
            PromptFamily::of("claude-sonnet-4-5"),
            PromptFamily::Anthropic
        );
        assert_eq!(PromptFamily::of("gpt-4.1"), PromptFamily::Gpt);
        assert_eq!(PromptFamily::of("gpt-5-codex"), PromptFamily::Reasoning);
        assert_eq!(PromptFamily::of("o3"), PromptFamily::Reasoning);
        assert_eq!(PromptFamily::of("o4-mini"), PromptFamily::Reasoning);
        assert_eq!(PromptFamily::of("Gemini-2.5-Pro"), PromptFamily::Gemini);
        assert_eq!(PromptFamily::of("llama3.1"), PromptFamily::Default);
        assert_eq!(
            PromptFamily::of("openrouter/anthropic/claude-3"),
            PromptFamily::Anthropic
        );
        for family in [
            PromptFamily::Anthropic,
            PromptFamily::Gpt,
            PromptFamily::Reasoning,
            PromptFamily::Gemini,
            PromptFamily::Default,
        ] {
            let text = family_prompt(family);
            assert!(text.contains("coding agent") && text.contains("Be brief"));
            assert!(text.contains("Match the surrounding code"));
        }
    }
}
