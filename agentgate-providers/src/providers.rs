//! The one list of providers ([`PROVIDERS`]): ids, the API each speaks,
//! where its key and base URL come from. The registry builds clients from
//! it, the unknown-provider error lists it, and `docs/providers.md` is
//! checked against it.

use crate::ProviderError;
use crate::http::env_nonempty;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Api {
    /// Anthropic Messages ([`crate::Anthropic`]).
    AnthropicMessages,
    /// OpenAI Responses ([`crate::OpenAiResponses`]).
    OpenAiResponses,
    /// OpenAI Chat Completions and compatible servers ([`crate::OpenAiCompatible`]).
    ChatCompletions,
    /// Google Gemini `streamGenerateContent` ([`crate::Gemini`]).
    Gemini,
}

/// How a provider's base URL is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BaseUrlFrom {
    /// Fixed: the default only.
    Fixed,
    /// This environment variable when set, else the default.
    Env(&'static str),
    /// Ollama's `OLLAMA_HOST` (`host`, `host:port` or a URL).
    OllamaHost,
}

/// One provider users can name as `<id>/<model>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Provider {
    /// The id in `provider/model` names.
    pub id: &'static str,
    /// Other ids accepted for it.
    pub aliases: &'static [&'static str],
    /// The API its client speaks.
    pub api: Api,
    /// Environment variables read for the key, first set wins.
    pub key_env: &'static [&'static str],
    /// Whether a client cannot be built without a key.
    pub key_required: bool,
    /// Where the base URL comes from.
    pub base_url_from: BaseUrlFrom,
    /// The base URL when nothing overrides it, in the form the official
    /// SDKs take: the host for Anthropic (the client appends
    /// `/v1/messages`), `/v1` included for OpenAI and the compatible
    /// servers (the client appends `/responses` or `/chat/completions`).
    pub default_base_url: &'static str,
}

/// Every provider [`crate::model_from_env`] can build, in the order the
/// docs list them.
pub const PROVIDERS: &[Provider] = &[
    Provider {
        id: "anthropic",
        aliases: &[],
        api: Api::AnthropicMessages,
        key_env: &["ANTHROPIC_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Env("ANTHROPIC_BASE_URL"),
        default_base_url: crate::endpoints::ANTHROPIC_BASE_URL,
    },
    Provider {
        id: "openai",
        aliases: &[],
        api: Api::OpenAiResponses,
        key_env: &["OPENAI_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Env("OPENAI_BASE_URL"),
        default_base_url: crate::endpoints::OPENAI_BASE_URL,
    },
    Provider {
        id: "google",
        aliases: &["gemini"],
        api: Api::Gemini,
        key_env: &["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: crate::endpoints::GEMINI_BASE_URL,
    },
    Provider {
        id: "openrouter",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["OPENROUTER_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: crate::endpoints::OPENROUTER_BASE_URL,
    },
    Provider {
        id: "deepseek",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["DEEPSEEK_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: "https://api.deepseek.com/v1",
    },
    Provider {
        id: "mistral",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["MISTRAL_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: "https://api.mistral.ai/v1",
    },
    Provider {
        id: "groq",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["GROQ_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: "https://api.groq.com/openai/v1",
    },
    Provider {
        id: "xai",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["XAI_API_KEY"],
        key_required: true,
        base_url_from: BaseUrlFrom::Fixed,
        default_base_url: "https://api.x.ai/v1",
    },
    Provider {
        id: "ollama",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &[],
        key_required: false,
        base_url_from: BaseUrlFrom::OllamaHost,
        default_base_url: crate::endpoints::OLLAMA_BASE_URL,
    },
    Provider {
        id: "vllm",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["VLLM_API_KEY"],
        key_required: false,
        base_url_from: BaseUrlFrom::Env("VLLM_BASE_URL"),
        default_base_url: crate::endpoints::VLLM_BASE_URL,
    },
    Provider {
        id: "lmstudio",
        aliases: &[],
        api: Api::ChatCompletions,
        key_env: &["LMSTUDIO_API_KEY"],
        key_required: false,
        base_url_from: BaseUrlFrom::Env("LMSTUDIO_BASE_URL"),
        default_base_url: crate::endpoints::LMSTUDIO_BASE_URL,
    },
];

/// The provider with this id or alias.
pub fn find_provider(id: &str) -> Option<&'static Provider> {
    PROVIDERS
        .iter()
        .find(|p| p.id == id || p.aliases.contains(&id))
}

/// The provider with this id; the id is one of the table's (a crate
/// invariant checked by a test), else the first entry stands in.
pub(crate) fn provider(id: &str) -> &'static Provider {
    find_provider(id).unwrap_or(&PROVIDERS[0])
}

/// "anthropic, openai, google (or gemini), ...": the ids for messages.
pub(crate) fn provider_list() -> String {
    PROVIDERS
        .iter()
        .map(|p| match p.aliases {
            [] => p.id.to_string(),
            aliases => format!("{} (or {})", p.id, aliases.join(", ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Provider {
    /// Where [`api_key`](Self::api_key) finds the key: the first of its
    /// variables that is set, as a place for messages ("the
    /// ANTHROPIC_API_KEY environment variable"); `None` when none is set.
    pub fn api_key_source(&self) -> Option<String> {
        self.key_env
            .iter()
            .find(|name| env_nonempty(name).is_some())
            .map(|name| crate::key_source::from_env(name))
    }

    /// The key from the environment: `Ok(None)` when none is set and none
    /// is required, an error naming the variable when one is required.
    pub fn api_key(&self) -> Result<Option<String>, ProviderError> {
        let key = self.key_env.iter().find_map(|name| env_nonempty(name));
        match key {
            Some(key) => Ok(Some(key)),
            None if !self.key_required => Ok(None),
            None => Err(ProviderError::MissingApiKey {
                provider: self.id.into(),
                variable: match self.key_env {
                    [] => String::new(),
                    [only] => (*only).to_string(),
                    [first, rest @ ..] => format!("{first} (or {})", rest.join(", ")),
                },
            }),
        }
    }

    /// The base URL from the environment, else the default.
    pub fn base_url(&self) -> String {
        self.base_url_from_lookup(&env_nonempty)
    }

    /// The base URL with the variables read through `lookup` (tests give
    /// their own environment; the process's is shared by every thread).
    pub(crate) fn base_url_from_lookup(&self, lookup: &dyn Fn(&str) -> Option<String>) -> String {
        match self.base_url_from {
            BaseUrlFrom::Fixed => None,
            BaseUrlFrom::Env(name) => lookup(name),
            BaseUrlFrom::OllamaHost => lookup("OLLAMA_HOST").map(|host| ollama_base_url(&host)),
        }
        .unwrap_or_else(|| self.default_base_url.to_string())
    }
}

/// `OLLAMA_HOST` as Ollama reads it (`host`, `host:port` or a URL) turned
/// into the `/v1` base URL.
pub(crate) fn ollama_base_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    // With a scheme the URL is used as written (its default port applies);
    // a bare host gets Ollama's port 11434 unless it names one.
    let base = if host.contains("://") {
        host.to_string()
    } else if host.contains(':') {
        format!("http://{host}")
    } else {
        format!("http://{host}:11434")
    };
    if base.ends_with("/v1") {
        base
    } else {
        format!("{base}/v1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_forms() {
        assert_eq!(ollama_base_url("127.0.0.1"), "http://127.0.0.1:11434/v1");
        assert_eq!(ollama_base_url("0.0.0.0:9000"), "http://0.0.0.0:9000/v1");
        assert_eq!(
            ollama_base_url("https://ollama.example.com:443/"),
            "https://ollama.example.com:443/v1"
        );
    }

    /// `OPENAI_BASE_URL` includes `/v1`, as the official SDKs read it: the
    /// value is used as written and the client appends the endpoint.
    #[tokio::test]
    async fn openai_base_url_includes_v1() {
        use agentgate_core::{LanguageModel, ModelMessage, ModelRequest};
        use wiremock::matchers::{method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};

        let server = MockServer::start().await;
        let body = "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
        Mock::given(method("POST"))
            .and(path("/gateway/v1/responses"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .expect(1)
            .mount(&server)
            .await;
        let value = format!("{}/gateway/v1", server.uri());
        let lookup = |name: &str| (name == "OPENAI_BASE_URL").then(|| value.clone());
        let spec = provider("openai");
        assert_eq!(spec.base_url_from_lookup(&lookup), value);
        assert_eq!(
            spec.base_url_from_lookup(&|_| None),
            "https://api.openai.com/v1"
        );
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .expect("client");
        let client = crate::OpenAiResponses::new("gpt-5", "key")
            .with_base_url(spec.base_url_from_lookup(&lookup))
            .with_http_client(http);
        let request = ModelRequest::new(vec![ModelMessage::user("hi")]);
        let started = client
            .stream(request, tokio_util::sync::CancellationToken::new())
            .await;
        assert!(started.is_ok(), "{:?}", started.err());
    }

    #[test]
    fn ids_used_by_the_clients_are_in_the_table() {
        for id in ["anthropic", "openai", "google", "gemini", "ollama"] {
            assert!(find_provider(id).is_some(), "{id}");
        }
        assert_eq!(
            provider_list(),
            "anthropic, openai, google (or gemini), openrouter, deepseek, mistral, groq, xai, ollama, vllm, lmstudio"
        );
    }
}
