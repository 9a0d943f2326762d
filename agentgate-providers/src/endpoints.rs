//! The default endpoints of the providers, in one place that the clients
//! and the provider table both read.

/// The Anthropic API base URL: the host, as the official SDKs and
/// `ANTHROPIC_BASE_URL` give it; the client appends `/v1/messages`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The Gemini API base URL.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";
/// The OpenAI API base URL, `/v1` included as the official SDKs and
/// `OPENAI_BASE_URL` give it; the clients append `/responses` or
/// `/chat/completions`.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Ollama's OpenAI-compatible endpoint on its default port.
pub const OLLAMA_BASE_URL: &str = "http://localhost:11434/v1";
/// vLLM's OpenAI-compatible server on its default port.
pub const VLLM_BASE_URL: &str = "http://localhost:8000/v1";
/// LM Studio's local server on its default port.
pub const LMSTUDIO_BASE_URL: &str = "http://localhost:1234/v1";
/// OpenRouter's API.
pub const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
