//! Which built-in system prompt opencode gives a model (§15):
//! [`provider_prompt`].

/// The name of opencode's provider system prompt for a model id (the file
/// `session/prompt/<name>.txt` upstream), used when the agent has no
/// prompt of its own.
///
/// The rules, in order, exactly as opencode applies them:
/// an id containing `gpt-4`, `o1` or `o3` → `"beast"`; another id
/// containing `gpt` → `"codex"` when it contains `codex`, else `"gpt"`;
/// containing `gemini-` → `"gemini"`; containing `claude` → `"anthropic"`;
/// containing `trinity` or `kimi` in any case → `"trinity"` / `"kimi"`;
/// anything else → `"default"`. Only the last two checks ignore case, and
/// all are substring checks (so `my-o1-tune` gets `"beast"`).
///
/// ```
/// use agentgate_providers::provider_prompt;
/// assert_eq!(provider_prompt("gpt-4.1"), "beast");
/// assert_eq!(provider_prompt("gpt-5-codex"), "codex");
/// assert_eq!(provider_prompt("claude-sonnet-4-5"), "anthropic");
/// assert_eq!(provider_prompt("Kimi-K2-Instruct"), "kimi");
/// assert_eq!(provider_prompt("qwen3:8b"), "default");
/// ```
pub fn provider_prompt(model_id: &str) -> &'static str {
    if model_id.contains("gpt-4") || model_id.contains("o1") || model_id.contains("o3") {
        return "beast";
    }
    if model_id.contains("gpt") {
        return if model_id.contains("codex") {
            "codex"
        } else {
            "gpt"
        };
    }
    if model_id.contains("gemini-") {
        return "gemini";
    }
    if model_id.contains("claude") {
        return "anthropic";
    }
    let lower = model_id.to_lowercase();
    if lower.contains("trinity") {
        return "trinity";
    }
    if lower.contains("kimi") {
        return "kimi";
    }
    "default"
}
