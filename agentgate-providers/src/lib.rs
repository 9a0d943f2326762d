//! # agentgate-providers
//!
//! Streaming model clients for the agent SDK, over `reqwest` (rustls) and
//! server-sent events. Every client implements
//! [`agentgate_core::LanguageModel`]; none retries on its own — HTTP errors are
//! mapped faithfully to [`agentgate_core::ModelError`] (status, `retry-after`
//! headers, `x-should-retry`, context overflow) and the agent loop decides
//! (§13). A stream that ends without its terminal event is an error. Every
//! call is bounded by [`Timeouts`]: the response headers and each stream
//! chunk must arrive within 5 minutes by default.
//!
//! * [`Anthropic`]: the Messages API (thinking with signatures, tool use,
//!   §15 prompt-cache breakpoints, cache token usage).
//! * [`OpenAiResponses`]: OpenAI's Responses API (reasoning items with
//!   encrypted content round-tripped, function calls, cached-token usage).
//! * [`Gemini`]: Google's `streamGenerateContent` (thought signatures
//!   round-tripped, minted call ids, `RetryInfo` delays).
//! * [`OpenAiCompatible`]: Chat Completions for OpenAI and every compatible
//!   server, with presets for Ollama, vLLM, LM Studio and OpenRouter.
//! * [`model_from_env`]: a `provider/model` name to a client, keys from the
//!   usual environment variables, for every provider of [`PROVIDERS`];
//!   [`model_info`] knows common limits.
//! * [`MODEL_FAMILIES`] / [`model_family`]: what each model family accepts
//!   (sampling parameters, output-cap field, reasoning round-trip) as data,
//!   applied by every client.
//! * [`provider_prompt`]: opencode's provider system-prompt choice.
//! * [`SseParser`]: the incremental event-stream parser under them all.
//!
//! Building a client makes no network call:
//!
//! ```
//! use agentgate_providers::{Anthropic, OpenAiCompatible};
//! use agentgate_providers::core::{LanguageModel, ModelMessage, ModelRequest};
//!
//! let claude = Anthropic::new("claude-sonnet-4-5", "sk-ant-example")
//!     .with_base_url("http://127.0.0.1:9/v1");
//! assert_eq!(claude.info().limits.context, 200_000);
//!
//! let local = OpenAiCompatible::new("ollama", "qwen3:8b", "http://127.0.0.1:11434/v1");
//! let request =
//!     ModelRequest::new(vec![ModelMessage::user("hi")]).with_system(["You are terse."]);
//! let body = local.request_body(&request);
//! assert_eq!(body["messages"][0]["role"], "system");
//! assert_eq!(body["stream_options"]["include_usage"], true);
//! ```
//!
//! Streaming a reply (needs a server, so not run here):
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agentgate_providers::core::{LanguageModel, ModelMessage, ModelRequest, StreamEvent};
//! use futures::StreamExt;
//! use tokio_util::sync::CancellationToken;
//!
//! let model = agentgate_providers::model_from_env("anthropic/claude-sonnet-4-5")?;
//! let request = ModelRequest::new(vec![ModelMessage::user("Say hello")]);
//! let mut events = model.stream(request, CancellationToken::new()).await?;
//! while let Some(event) = events.next().await {
//!     if let StreamEvent::TextDelta { delta, .. } = event? {
//!         print!("{delta}");
//!     }
//! }
//! # Ok(())
//! # }
//! ```

// Modules are private: this list is the crate's public API.
mod anthropic;
mod config_models;
mod encode_cache;
mod endpoints;
mod error;
mod error_body;
mod families;
#[cfg(test)]
mod fuzz_tests;
mod gemini;
mod http;
mod key_source;
mod metadata;
mod model_info;
mod openai_chat;
mod prompt;
mod providers;
mod registry;
mod request_body;
#[cfg(test)]
mod request_bytes_tests;
mod responses;
mod sampling;
mod sse;
mod timeouts;
mod tools_encoding;

/// The agentgate-core contracts the clients implement, re-exported so an
/// embedder needs one import path.
pub use agentgate_core as core;

/// The clients, one per API, with their default endpoints.
pub use anthropic::{ANTHROPIC_VERSION, Anthropic, DEFAULT_MAX_TOKENS};
pub use endpoints::{
    ANTHROPIC_BASE_URL, GEMINI_BASE_URL, LMSTUDIO_BASE_URL, OLLAMA_BASE_URL, OPENAI_BASE_URL,
    OPENROUTER_BASE_URL, VLLM_BASE_URL,
};
pub use gemini::Gemini;
pub use openai_chat::OpenAiCompatible;
pub use responses::OpenAiResponses;

/// Models from the configuration's `provider` entries.
pub use config_models::{ConfigModelResolver, model_from_config};
/// The provider table and building clients from `provider/model` names.
pub use providers::{Api, BaseUrlFrom, PROVIDERS, Provider, find_provider};
pub use registry::{EnvModelResolver, model_for_ref, model_from_env, parse_model_name};

/// What is known about well-known models, and what each model family
/// accepts (the request rules every client applies).
pub use families::{MODEL_FAMILIES, MaxTokensField, ModelFamily, Reasoning, model_family};
pub use model_info::model_info;

/// opencode's provider system-prompt choice (§15).
pub use prompt::provider_prompt;

/// Why a client could not be built.
pub use error::ProviderError;

/// How long a model call may wait (opencode's `timeout`, `headerTimeout`,
/// `chunkTimeout` provider options), on by default.
pub use timeouts::{DEFAULT_CHUNK_TIMEOUT, DEFAULT_HEADER_TIMEOUT, Timeouts};

/// The server-sent-events parser under every client.
pub use sse::{MAX_EVENT_BYTES, MAX_ID_BYTES, SseError, SseEvent, SseParser, sse_events};
