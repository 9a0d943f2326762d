//! What each model family accepts, as data ([`MODEL_FAMILIES`]): the
//! request rules every client applies (sampling parameters, the output
//! token field, how reasoning is asked for and sent back) and what the
//! family supports (tools, images, prompt caching), which the provider
//! guide's table lists.

/// How a family reasons, which decides how it is asked for and what of it
/// goes back on the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reasoning {
    /// No reasoning output.
    None,
    /// Anthropic extended thinking: `thinking.budget_tokens`; signed
    /// thinking blocks go back unchanged; sampling settings are rejected
    /// while it is on, and so is a forced tool choice.
    AnthropicThinking,
    /// OpenAI reasoning models: `reasoning_effort` (Chat Completions) or
    /// `reasoning.effort` (Responses); encrypted reasoning items go back on
    /// the Responses API.
    OpenAiEffort,
    /// Reasoning in `reasoning_content` that must go back on assistant
    /// turns that called tools (DeepSeek thinking mode).
    ReasoningContentEcho,
    /// Reasoning streamed in `reasoning`/`reasoning_content` or as
    /// `thinking` content parts, never sent back (Mistral, Groq, xAI,
    /// OpenRouter, local servers).
    Streamed,
    /// Gemini thinking: `generationConfig.thinkingConfig`; thought
    /// signatures go back on the part they came with.
    GeminiThinking,
}

/// Which request field carries the output token cap on Chat Completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MaxTokensField {
    /// `max_tokens`: understood by every compatible server (Ollama ignores
    /// `max_completion_tokens` in older builds).
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI requires for reasoning models.
    MaxCompletionTokens,
}

/// The rules and capabilities of one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelFamily {
    /// The family's name in the docs.
    pub name: &'static str,
    /// Provider ids it applies to (empty: any provider).
    pub providers: &'static [&'static str],
    /// Model id prefixes (last `/` segment, lowercase, `.` read as `-`);
    /// empty matches every model of the providers.
    pub prefixes: &'static [&'static str],
    /// Whether `temperature` may be sent.
    pub temperature: bool,
    /// Whether `top_p` may be sent.
    pub top_p: bool,
    /// The output cap field on Chat Completions.
    pub token_field: MaxTokensField,
    /// How the family reasons.
    pub reasoning: Reasoning,
    /// Tool calling.
    pub tools: bool,
    /// Image input.
    pub images: bool,
    /// Explicit prompt-cache breakpoints sent by the client (Anthropic);
    /// other families cache automatically or not at all.
    pub prompt_caching: bool,
}

const fn family(
    name: &'static str,
    providers: &'static [&'static str],
    prefixes: &'static [&'static str],
) -> ModelFamily {
    ModelFamily {
        name,
        providers,
        prefixes,
        temperature: true,
        top_p: true,
        token_field: MaxTokensField::MaxTokens,
        reasoning: Reasoning::None,
        tools: true,
        images: false,
        prompt_caching: false,
    }
}

const fn openai_reasoning(mut f: ModelFamily) -> ModelFamily {
    f.temperature = false;
    f.top_p = false;
    f.token_field = MaxTokensField::MaxCompletionTokens;
    f.reasoning = Reasoning::OpenAiEffort;
    f.images = true;
    f
}

const fn with(mut f: ModelFamily, reasoning: Reasoning, images: bool) -> ModelFamily {
    f.reasoning = reasoning;
    f.images = images;
    f
}

const fn completion_tokens(mut f: ModelFamily) -> ModelFamily {
    f.token_field = MaxTokensField::MaxCompletionTokens;
    f
}

const fn cached(mut f: ModelFamily) -> ModelFamily {
    f.prompt_caching = true;
    f
}

const OPENAI_LIKE: &[&str] = &["openai", "azure", "openrouter"];

/// The families, most specific first; the first match wins.
pub const MODEL_FAMILIES: &[ModelFamily] = &[
    // OpenAI: gpt-5 chat models sample; the other gpt-5 and o-series
    // models reason and reject temperature/top_p and `max_tokens`.
    completion_tokens(with(
        family("OpenAI gpt-5 chat", OPENAI_LIKE, &["gpt-5-chat"]),
        Reasoning::None,
        true,
    )),
    openai_reasoning(family(
        "OpenAI reasoning (gpt-5, o-series, codex)",
        OPENAI_LIKE,
        &["gpt-5", "o1", "o3", "o4", "codex"],
    )),
    with(
        family(
            "OpenAI GPT (gpt-4.1, gpt-4o, ...)",
            OPENAI_LIKE,
            &["gpt-4", "gpt-3", "chatgpt"],
        ),
        Reasoning::None,
        true,
    ),
    // Models OpenAI serves that the table does not know yet are assumed to
    // reason (every new OpenAI model family since o1 has), so their
    // encrypted reasoning is requested and round-tripped.
    openai_reasoning(family("OpenAI (other models)", &["openai"], &[])),
    cached(with(
        family("Claude", &[], &["claude"]),
        Reasoning::AnthropicThinking,
        true,
    )),
    with(
        family("Gemini", &[], &["gemini"]),
        Reasoning::GeminiThinking,
        true,
    ),
    with(
        family("DeepSeek", &[], &["deepseek"]),
        Reasoning::ReasoningContentEcho,
        false,
    ),
    with(
        family("Mistral", &["mistral"], &[]),
        Reasoning::Streamed,
        true,
    ),
    with(family("Grok", &[], &["grok"]), Reasoning::Streamed, true),
    with(
        family("Other compatible servers", &[], &[]),
        Reasoning::Streamed,
        false,
    ),
];

/// The family of `model` served by `provider`.
///
/// ```
/// let family = agentgate_providers::model_family("openai", "gpt-5-mini");
/// assert!(!family.temperature);
/// let family = agentgate_providers::model_family("openrouter", "anthropic/claude-sonnet-4.5");
/// assert_eq!(family.name, "Claude");
/// ```
pub fn model_family(provider: &str, model: &str) -> &'static ModelFamily {
    let last = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase()
        .replace('.', "-");
    MODEL_FAMILIES
        .iter()
        .find(|f| {
            (f.providers.is_empty() || f.providers.contains(&provider))
                && (f.prefixes.is_empty() || f.prefixes.iter().any(|p| last.starts_with(p)))
        })
        .unwrap_or(&MODEL_FAMILIES[MODEL_FAMILIES.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_provider_and_prefix() {
        assert_eq!(
            model_family("openai", "gpt-5-chat-latest").name,
            "OpenAI gpt-5 chat"
        );
        assert_eq!(
            model_family("openai", "o3-mini").reasoning,
            Reasoning::OpenAiEffort
        );
        assert!(model_family("openai", "gpt-4.1").temperature);
        assert_eq!(
            model_family("openai", "gpt-6-preview").reasoning,
            Reasoning::OpenAiEffort
        );
        assert_eq!(
            model_family("deepseek", "deepseek-reasoner").reasoning,
            Reasoning::ReasoningContentEcho
        );
        assert_eq!(
            model_family("ollama", "qwen3:8b").name,
            "Other compatible servers"
        );
        // An OpenAI-named model on a local server is not OpenAI's family.
        assert_eq!(
            model_family("ollama", "gpt-oss:20b").name,
            "Other compatible servers"
        );
    }
}
